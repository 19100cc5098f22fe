#!/usr/bin/env python3
"""jitterlab against ns-3 (the `ns3` wheel from PyPI) on small dumbbells: bulk TCP flows and an
80-byte audio stream through one bottleneck queue disc. Usage (from the repository root):

    python3 validation/ns3/compare.py [--duration 30] [--only codel,pie] [--json out.json] [--doc]

`--doc` writes the results table into docs/validation-ns3.md (between its ns3-results markers) and
both sides' numbers to docs/data/ns3-validation.json, from which tests/test_ns3_validation.py
recomputes the table's jitterlab side against the current build.

The ns-3 side is validation/ns3/dumbbell.cc, compiled once against the wheel's headers and
libraries (g++; the binary is cached under target/ns3/). Both sides get the same topology: host s
— 1 Gbit/s 1 ms — r1 — bottleneck — r2 — 1 Gbit/s 1 ms — d; every queue but the bottleneck's is too
large to drop; ns-3's device queue holds one packet so the queue disc decides (as ns-3's AQM
examples do). Point-to-point devices add a 2-byte PPP header to every packet, so jitterlab's
bottleneck gets `overhead = "2B"`. TCP as ns-3's defaults where jitterlab has the same knob set to
them: SACK, no timestamps (1460-byte segments, 1500-byte packets), delayed ACKs every second
segment, IW10, minimum RTO 200 ms, no TCP Small Queues (ns-3 has none), buffers large enough not
to limit. Compared: aggregate TCP goodput, audio OWD median and 90th percentile (packets sent
after the first TCP start), bottleneck drops and marks. Nothing is tuned to fit; where the two
differ by more than the bounds, SCENARIOS says why.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SRC = ROOT / "validation" / "ns3" / "dumbbell.cc"
LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]


def ns3_prefix() -> Path | None:
    """The wheel's install prefix (site-packages/ns3 with include/ and lib64/), or None."""
    for base in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}:
        p = Path(base) / "ns3"
        if (p / "include" / "ns3" / "core-module.h").exists() and (p / "lib64").is_dir():
            return p
    return None


def why_unavailable() -> str | None:
    if ns3_prefix() is None:
        return "the ns3 wheel is not installed in this Python (pip install ns3==3.44.post0; run-tests does it)"
    if shutil.which("g++") is None:
        return "g++ not found (apt-get install g++)"
    return None


def build_ns3() -> Path:
    pre = ns3_prefix()
    libdir = pre / "lib64"
    version = next(p.name for p in libdir.glob("libns3.*-core.so")).split("-")[0][len("libns"):]  # "3.44"
    out = ROOT / "target" / "ns3" / f"dumbbell-{version}"
    if out.exists() and out.stat().st_mtime >= SRC.stat().st_mtime:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-O1", "-std=c++20", str(SRC), f"-I{pre / 'include'}", f"-L{libdir}", f"-Wl,-rpath,{libdir}",
           *[f"-lns{version}-{lib}" for lib in LIBS], "-o", str(out) + ".tmp"]
    subprocess.run(cmd, check=True)
    os.replace(str(out) + ".tmp", out)
    return out


def build_jitterlab() -> Path:
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "jitterlab-sim", "--example", "tcp_run"], cwd=ROOT, check=True)
    return ROOT / "target" / "release" / "examples" / "tcp_run"


RATE, DELAY = "10Mbit", "10ms"
# ns-3's TCP on the linux-6.18 profile's base: ns-3's slow start (TcpNewReno/TcpCubic::SlowStart)
# adds one segment per ACK, its receiver has a fixed buffer (RcvBufSize), and it has no TSQ.
TCP = {"stack": "linux-6.18", "mss": "1460B", "timestamps": False, "iw": 10, "delack": "40ms", "min_rto": "200ms", "tsq": False, "rcvbuf": "16MB", "abc": False}
BIG = {"kind": "droptail", "limit": "100000pkt"}

# name: (ns-3 queue disc and attributes, jitterlab queue, ns-3 TCP, jitterlab cc, flows, ECN, why the
# two may differ beyond the bounds — None when they should not)
SCENARIOS = {
    "codel": ("ns3::CoDelQueueDisc", ["--ns3::CoDelQueueDisc::MaxSize=1000p"], {"kind": "codel", "limit": "1000pkt"}, "TcpNewReno", "reno", 1, False),
    "codel-cubic2": ("ns3::CoDelQueueDisc", ["--ns3::CoDelQueueDisc::MaxSize=1000p"], {"kind": "codel", "limit": "1000pkt"}, "TcpCubic", "cubic", 2, False),
    # ns-3 3.44 takes the quantum from the device MTU (1500), so jitterlab gets quantum = 1500.
    "fq_codel": ("ns3::FqCoDelQueueDisc", ["--ns3::FqCoDelQueueDisc::UseEcn=false"],
                 {"kind": "fq_codel", "quantum": 1500, "ecn": False}, "TcpCubic", "cubic", 2, False),
    "pie": ("ns3::PieQueueDisc", ["--ns3::PieQueueDisc::MaxSize=1000p", "--ns3::PieQueueDisc::QueueDelayReference=15ms",
                                  "--ns3::PieQueueDisc::Tupdate=15ms", "--ns3::PieQueueDisc::MaxBurstAllowance=150ms",
                                  "--ns3::PieQueueDisc::UseDequeueRateEstimator=false"],
            {"kind": "pie", "limit": "1000pkt"}, "TcpCubic", "cubic", 2, False),
    "fq_pie": ("ns3::FqPieQueueDisc", ["--ns3::FqPieQueueDisc::UseEcn=false"], {"kind": "fq_pie", "quantum": 1500, "ecn": False}, "TcpCubic", "cubic", 2, False),
    # CAKE without its shaper, one flow per queue, is ns-3's FQ-COBALT (ns-3 3.44 has no CAKE).
    "cake": ("ns3::FqCobaltQueueDisc", ["--ns3::FqCobaltQueueDisc::UseEcn=false"], {"kind": "cake", "isolation": "flows"}, "TcpCubic", "cubic", 2, False),
    # CAKE with one queue (flowblind) is COBALT alone.
    "cobalt": ("ns3::CobaltQueueDisc", ["--ns3::CobaltQueueDisc::UseEcn=false", "--ns3::CobaltQueueDisc::MaxSize=1000p"], {"kind": "cake", "isolation": "flowblind"}, "TcpCubic", "cubic", 2, False),
    # DCTCP as ns-3's examples/tcp/dctcp-example.cc sets its RED: instantaneous queue (QW 1), marking
    # between 20 and 60 packets (max_p 1/50, gentle above), no hard drops; ECT(0) on both sides.
    "dctcp": ("ns3::RedQueueDisc", ["--ns3::RedQueueDisc::UseEcn=true", "--ns3::RedQueueDisc::UseHardDrop=false", "--ns3::RedQueueDisc::QW=1",
                                    "--ns3::RedQueueDisc::MinTh=20", "--ns3::RedQueueDisc::MaxTh=60", "--ns3::RedQueueDisc::LInterm=50",
                                    "--ns3::RedQueueDisc::MeanPktSize=1500", "--ns3::RedQueueDisc::MaxSize=2666p",
                                    "--ns3::RedQueueDisc::LinkBandwidth=10Mbps", "--ns3::TcpDctcp::UseEct0=true"],
              {"kind": "red", "limit": "2666pkt", "q_weight": 1.0, "thresh": 20, "maxthresh": 60, "linterm": 50, "gentle": True, "ecn": True,
               "use_mark_p": False, "mean_pktsize": 1500}, "TcpDctcp", "dctcp", 2, "ect0"),
    "bbr": ("ns3::FifoQueueDisc", ["--ns3::FifoQueueDisc::MaxSize=100p"], {"kind": "droptail", "limit": "100pkt"}, "TcpBbr", "bbr", 1, False),
    "bbr2": ("ns3::FifoQueueDisc", ["--ns3::FifoQueueDisc::MaxSize=100p"], {"kind": "droptail", "limit": "100pkt"}, "TcpBbr", "bbr", 2, False),
}


#: The results table's rows (docs/validation-ns3.md): scenario, ns-3's side, jitterlab's side.
DOC_ROWS = {
    "codel": ("CoDelQueueDisc, 1 × NewReno", "`codel`, reno"),
    "codel-cubic2": ("CoDelQueueDisc, 2 × Cubic", "`codel`, cubic"),
    "fq_codel": ("FqCoDelQueueDisc", "`fq_codel` (quantum 1500)"),
    "pie": ("PieQueueDisc (15 ms, tupdate 15 ms)", "`pie`"),
    "fq_pie": ("FqPieQueueDisc", "`fq_pie`"),
    "cobalt": ("CobaltQueueDisc", "`cake`, isolation `flowblind`"),
    "cake": ("FqCobaltQueueDisc", "`cake`, isolation `flows`, no shaper"),
    "dctcp": ("RedQueueDisc as ns-3's dctcp-example (QW 1, 20–60 pkt, max_p 1/50, gentle, marks), 2 × TcpDctcp ECT(0)",
              "`red` same, `dctcp` `ecn = \"ect0\"`"),
    "bbr": ("FifoQueueDisc 100 p, TcpBbr paced", "`droptail` 100pkt, `bbr`"),
}
DOC = ROOT / "docs" / "validation-ns3.md"
DOC_DATA = ROOT / "docs" / "data" / "ns3-validation.json"
BEGIN, END = "<!-- ns3-results:begin -->", "<!-- ns3-results:end -->"


def _signed(x: float, fmt: str) -> str:
    return (fmt.format(x) if x < 0 else "+" + fmt.format(x)).replace("-", "\u2212")


def doc_row(name: str, r: dict) -> str:
    """One row of the results table from one pair's numbers (`run_pair`)."""
    n, j = r["ns3"], r["jitterlab"]
    d = 100 * (j["goodput_bps"] - n["goodput_bps"]) / n["goodput_bps"]
    gp = f"{n['goodput_bps'] / 1e6:.3f} / {j['goodput_bps'] / 1e6:.3f} ({_signed(round(d, 1) + 0.0, '{:.1f}')} %)"
    owd = [f"{n[k]:.2f} / {j[k]:.2f}" for k in ("owd_p50_ms", "owd_p90_ms")]
    ecn = SCENARIOS[name][6]
    dm = [f"{x['drops']} ({x['marks']})" if ecn else f"{x['drops']}" for x in (n, j)]
    return f"| {name} | {DOC_ROWS[name][0]} | {DOC_ROWS[name][1]} | {gp} | {owd[0]} | {owd[1]} | {dm[0]} / {dm[1]} |"


def doc_table(raw: dict, duration: float) -> str:
    head = (f"{BEGIN}\n<!-- generated by `python3 validation/ns3/compare.py --duration {duration:g} --doc` -->\n"
            "| scenario | ns-3 queue disc / TCP | jitterlab | goodput ns-3 / jl [Mbit/s] | audio OWD p50 ns-3 / jl [ms] | p90 [ms] | drops (marks) ns-3 / jl |\n"
            "|---|---|---|---|---|---|---|\n")
    return head + "".join(doc_row(k, raw[k]) + "\n" for k in DOC_ROWS if k in raw) + END


def write_doc(raw: dict, duration: float) -> None:
    text = DOC.read_text()
    a, b = text.index(BEGIN), text.index(END) + len(END)
    DOC.write_text(text[:a] + doc_table(raw, duration) + text[b:])
    DOC_DATA.write_text(json.dumps({"duration": duration, "runs": {k: raw[k] for k in DOC_ROWS if k in raw}}, indent=1, sort_keys=True) + "\n")


def ns3_args(name: str, duration: float, starts: list[float]) -> list[str]:
    q, qargs, _, tcp, _, n, ecn = SCENARIOS[name]
    return [f"--queue={q}", *qargs, f"--tcp={tcp}", f"--flows={n}", f"--rate={RATE.replace('bit', 'bps')}", f"--delay={DELAY}",
            f"--duration={duration}", "--starts=" + ",".join(f"{s:.6f}" for s in starts), f"--ecn={int(bool(ecn))}",
            f"--pacing={int(tcp == 'TcpBbr')}"]


def scenario_json(name: str, duration: float, starts: list[float]) -> dict:
    _, _, queue, _, cc, n, ecn = SCENARIOS[name]
    tcp = dict(TCP, cc=cc, ecn=ecn)
    traffic = [{"kind": "ftp", "name": f"tcp{i}", "from": "s", "to": "d", "start": f"{round(starts[i] * 1e6)}us", **tcp} for i in range(n)]
    traffic.append({"kind": "audio", "name": "audio", "from": "s", "to": "d", "size": "80B", "interval": "20ms"})
    acc = {"rate": "1Gbit", "delay": "1ms", "overhead": "2B", "queue": BIG}
    return {
        "name": f"ns3-{name}", "duration": f"{duration}s",
        "links": {
            "a1": {"from": "s", "to": "r1", **acc},
            "bn": {"from": "r1", "to": "r2", "rate": RATE, "delay": DELAY, "overhead": "2B", "queue": queue, "reverse": {"queue": BIG}},
            "a2": {"from": "r2", "to": "d", **acc},
        },
        "traffic": traffic,
    }


def quantile(xs: list[float], p: float) -> float:
    s = sorted(xs)
    return s[round((len(s) - 1) * p)]


def run_ns3(binary: Path, name: str, duration: float, starts: list[float]) -> dict:
    out = json.loads(subprocess.run([str(binary), *ns3_args(name, duration, starts)], capture_output=True, text=True, check=True).stdout)
    t0 = min(starts)
    # UdpClient sends packet k at k·20 ms; keep those sent while TCP runs, as tcp_run does.
    owd = [d for d, s in zip(out["audio_owd_ms"], out["audio_seq"]) if s * 0.020 >= t0]
    return {"goodput_bps": sum(out["flows"]) * 8 / duration, "owd_p50_ms": quantile(owd, 0.5), "owd_p90_ms": quantile(owd, 0.9),
            "drops": out["queue"]["dropped"], "marks": out["queue"]["marked"]}


def run_jitterlab(binary: Path, name: str, duration: float, starts: list[float]) -> dict:
    p = subprocess.run([str(binary), "1"], input=json.dumps(scenario_json(name, duration, starts)), capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    r = json.loads(p.stdout)
    a = next(m for m in r["media"] if m["name"] == "audio")
    bn = next(c for c in r["channels"] if c["name"] == "bn")
    return {"goodput_bps": sum(f["goodput_bps"] for f in r["tcp"]), "owd_p50_ms": a["owd_ms_during_tcp"]["p50"], "owd_p90_ms": a["owd_ms_during_tcp"]["p90"],
            "drops": bn["drops"], "marks": bn["marks"]}


def starts_for(name: str) -> list[float]:
    n = SCENARIOS[name][5]
    return [0.1 + 0.5 * i for i in range(n)]


def run_pair(ns3_bin: Path, jl_bin: Path, name: str, duration: float) -> dict:
    st = starts_for(name)
    return {"ns3": run_ns3(ns3_bin, name, duration, st), "jitterlab": run_jitterlab(jl_bin, name, duration, st)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--duration", type=float, default=30.0)
    ap.add_argument("--only", default=",".join(SCENARIOS))
    ap.add_argument("--json", help="also write the raw results here")
    ap.add_argument("--doc", action="store_true", help="write docs/validation-ns3.md's table and docs/data/ns3-validation.json (every scenario)")
    a = ap.parse_args()
    if a.doc:
        a.only = ",".join(SCENARIOS)
    why = why_unavailable()
    if why:
        sys.exit(f"ns-3 comparison skipped: {why}")
    ns3_bin, jl_bin = build_ns3(), build_jitterlab()
    raw = {}
    print(f"{'scenario':14} {'metric':18} {'ns-3':>10} {'jitterlab':>10} {'diff':>9}")
    for name in a.only.split(","):
        r = raw[name] = run_pair(ns3_bin, jl_bin, name, a.duration)
        for k, unit, scale in [("goodput_bps", "Mbit/s", 1e-6), ("owd_p50_ms", "ms", 1), ("owd_p90_ms", "ms", 1), ("drops", "pkts", 1), ("marks", "pkts", 1)]:
            n, j = r["ns3"][k] * scale, r["jitterlab"][k] * scale
            d = f"{100 * (j - n) / n:+.1f} %" if n else ""
            print(f"{name:14} {k + ' [' + unit + ']':18} {n:10.3f} {j:10.3f} {d:>9}")
    if a.json:
        Path(a.json).write_text(json.dumps(raw, indent=1))
    if a.doc:
        write_doc(raw, a.duration)


if __name__ == "__main__":
    main()
