"""Simulator against the testbed on the fixed path of issue 12 (scenarios/testbed/validation-*.toml):
audio alone, a bulk download, n = 1, 2, 6 web flows x IW3/IW10, each TCP case also with a 20 kB
receive-buffer budget (the host's moderation, SO_RCVBUF = budget / active flows on both backends).
For every case and seed it runs the testbed (root; one JSON summary per run, reused when present,
so the simulator side can be redone alone with --sim-only) and the simulator, then writes
OUT/table.md and OUT/table.json: audio OWD p5/p50/p90/p99 over the overlap window and TCP goodput,
testbed mean over the seeds against the simulator's mean. Pass rules (issue 12): each percentile
within 10 % or 3 ms; goodput within 5 %. Both backends run the scenario files as written: they name
their stack profile (`linux-6.18`) and the link keys of the testbed's devices; a case's overrides are
its workload (flows, IW, the host's budget), never a stack key.

    sudo flock /tmp/jitterlab-testbed.lock .venv/bin/python scripts/testbed_validation.py OUT --seeds 3
    .venv/bin/python scripts/testbed_validation.py --doc   # docs/validation.md's table from docs/data (no root)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SC = ROOT / "scenarios" / "testbed"
PCTS = (5, 50, 90, 99)
BUDGET = {"hosts.client.rwnd.budget": "20kB", "hosts.client.rwnd.mechanism": "so_rcvbuf"}


def cases() -> list[tuple[str, Path, dict]]:
    audio = {"traffic": [{"kind": "audio", "name": "audio", "from": "server", "to": "client", "size": "80B", "interval": "20ms"}],
             "duration": "10s"}
    out: list[tuple[str, Path, dict]] = [("audio alone", SC / "validation-web.toml", audio)]
    tcp: list[tuple[str, Path, dict]] = [("bulk 10 MB IW3", SC / "validation-bulk.toml", {})]
    for n in (1, 2, 6):
        for iw in (3, 10):
            tcp.append((f"web n={n} IW{iw}", SC / "validation-web.toml", {"traffic[1].flows": n, "traffic[1].iw": iw}))
    for name, path, ov in tcp:
        out.append((name, path, ov))
        out.append((name + ", 20 kB rcvbuf", path, {**ov, **BUDGET}))
    return out


def slug(name: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in name).strip("-").replace("--", "-")


def rows_for(testbed_dir: Path, seeds: int | None = None, only: str | None = None, run_testbed: bool = False) -> list[dict]:
    """Per case: the testbed's mean over its stored seeds (TESTBED_DIR/<case>-s<seed>.json; run and
    stored first when `run_testbed`) against the simulator's mean over the same seeds, recomputed
    with the current build."""
    from jitterlab import compare as cmp
    from jitterlab import scenario as scn
    from jitterlab import sim

    rows = []
    for name, path, ov in cases():
        if only and only not in name:
            continue
        sc = scn.with_overrides(scn.load(path), ov)
        tb, sm = [], []
        n = seeds or len(list(testbed_dir.glob(f"{slug(name)}-s*.json")))
        for seed in range(1, n + 1):
            f = testbed_dir / f"{slug(name)}-s{seed}.json"
            if not f.exists():
                if not run_testbed:
                    print(f"missing {f}", file=sys.stderr)
                    continue
                from jitterlab import testbed
                t0 = time.time()
                res = testbed.run(sc, seed=seed)
                f.write_text(json.dumps(cmp.summary(res)))
                print(f"testbed {name} seed {seed}: {time.time() - t0:.0f} s", file=sys.stderr)
            tb.append(json.loads(f.read_text()))
            sm.append(cmp.summary(sim.simulate(sc, seed=seed)))
        if not tb:
            continue
        row: dict = {"case": name, "seeds": len(tb)}
        for k in [f"owd_p{p}_ms" for p in PCTS] + ["tcp_goodput_mbps", "loss_pct", "tcp_retransmits"]:
            tv = [t[k] for t in tb if k in t]
            sv = [s[k] for s in sm if k in s]
            if tv and sv:
                row[k] = {"testbed": float(np.mean(tv)), "sim": float(np.mean(sv)),
                          "testbed_min": float(np.min(tv)), "testbed_max": float(np.max(tv))}
        rows.append(row)
    return rows


def verdicts(rows: list[dict]) -> tuple[int, int, list[str]]:
    """(OWD percentiles within 10 % or 3 ms, OWD percentiles compared, cases whose goodput is outside 5 %)."""
    n_ok = n_all = 0
    gp_bad = []
    for r in rows:
        for p in PCTS:
            v = r.get(f"owd_p{p}_ms")
            if v:
                n_all += 1
                n_ok += abs(v["sim"] - v["testbed"]) <= max(3.0, 0.10 * v["testbed"])
        g = r.get("tcp_goodput_mbps")
        if g and abs(g["sim"] - g["testbed"]) / g["testbed"] > 0.05:
            gp_bad.append(r["case"])
    return n_ok, n_all, gp_bad


def table(rows: list[dict]) -> str:
    """The markdown table of docs/validation.md (simulator / testbed, difference relative to the
    testbed; ✗ = outside 10 % and 3 ms, or goodput outside 5 %) and its count line."""
    lines = ["| case | OWD p5 [ms] | OWD p50 [ms] | OWD p90 [ms] | OWD p99 [ms] | goodput [Mbit/s] |", "|---|---|---|---|---|---|"]
    for r in rows:
        cells = [r["case"]]
        for p in PCTS:
            v = r.get(f"owd_p{p}_ms")
            if not v:
                cells.append("")
                continue
            d = v["sim"] - v["testbed"]
            ok = abs(d) <= max(3.0, 0.10 * v["testbed"])
            cells.append(f"{v['sim']:.1f} / {v['testbed']:.1f} ({100 * d / v['testbed']:+.0f} %){'' if ok else ' ✗'}")
        g = r.get("tcp_goodput_mbps")
        if g:
            d = (g["sim"] - g["testbed"]) / g["testbed"]
            cells.append(f"{g['sim']:.2f} / {g['testbed']:.2f} ({100 * d:+.1f} %){'' if abs(d) <= 0.05 else ' ✗'}")
        else:
            cells.append("")
        lines.append("| " + " | ".join(cells) + " |")
    n_ok, n_all, gp_bad = verdicts(rows)
    lines.append("")
    lines.append(f"OWD percentiles within 10 % or 3 ms: {n_ok} of {n_all} ({100 * n_ok / max(n_all, 1):.0f} %); "
                 f"goodput outside 5 %: {', '.join(gp_bad) or 'none'}")
    return "\n".join(lines) + "\n"


#: Where docs/validation.md keeps the generated table, and the stored testbed runs it is made from.
DOC = ROOT / "docs" / "validation.md"
DOC_DATA = ROOT / "docs" / "data" / "validation-testbed" / "issue24" / "testbed"
BEGIN, END = "<!-- fixed-path-table:begin -->\n", "<!-- fixed-path-table:end -->"


def write_block(begin: str, end: str, text: str) -> None:
    """Replaces what stands between the markers `begin` and `end` in docs/validation.md."""
    doc = DOC.read_text()
    head, rest = doc.split(begin, 1)
    DOC.write_text(head + begin + text + end + rest.split(end, 1)[1])


#: The trace comparisons: simulator against the testbed over Mahimahi traces (Debian's mahimahi-traces
#: in /usr/share/mahimahi/traces, which the scenarios name; scripts/install-references.sh), the
#: userspace link replaying the same opportunities on both; audio + a CUBIC download.
TRACE_CASES = ("umts-bulk", "umts-web", "lte-verizon-bulk", "lte-tmobile-bulk")
MAHIMAHI_UMTS = "/usr/share/mahimahi/traces/TMobile-UMTS-driving.down"
TRACE_DATA = ROOT / "docs" / "data" / "validation-testbed" / "issue24" / "traces"
TRACE_BEGIN, TRACE_END = "<!-- trace-table:begin -->\n", "<!-- trace-table:end -->"
TRACE_KEYS = ("owd_p50_ms", "owd_p90_ms", "tcp_goodput_mbps", "tcp_retransmits")


def trace_rows(data: Path = TRACE_DATA) -> list[dict]:
    """Per trace case: the testbed's stored runs (`jitterlab compare --json`, one file a seed) against
    the simulator recomputed with the current build, both as means over the seeds."""
    from jitterlab import compare as cmp
    from jitterlab import scenario as scn
    from jitterlab import sim

    rows = []
    for name in TRACE_CASES:
        files = sorted(data.glob(f"{name}-s*.json"))
        if not files:
            continue
        sc = scn.load(SC / f"{name}.toml")
        tb, sm = [], []
        for f in files:
            d = json.loads(f.read_text())
            seed = int(f.stem.rsplit("-s", 1)[1])
            tb.append({k: v["testbed"] for k, v in d["rows"].items() if v.get("testbed") is not None})
            sm.append(cmp.summary(sim.simulate(sc, seed=seed)))
        row: dict = {"case": name, "seeds": len(tb)}
        for k in TRACE_KEYS:
            row[k] = {"testbed": float(np.mean([t[k] for t in tb])), "sim": float(np.mean([s[k] for s in sm])),
                      "testbed_min": float(np.min([t[k] for t in tb])), "testbed_max": float(np.max([t[k] for t in tb]))}
        rows.append(row)
    return rows


def trace_table(rows: list[dict]) -> str:
    """Simulator / testbed means, the difference relative to the testbed, the testbed's range over its
    seeds; ✗ = median or p90 outside 15 %, goodput outside 5 %."""
    lines = ["| case | audio OWD median [ms] | OWD p90 [ms] | TCP goodput [Mbit/s] | retransmits |", "|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{r['case']} ({r['seeds']} seeds)"]
        for k, bound, fmt in (("owd_p50_ms", 0.15, ".0f"), ("owd_p90_ms", 0.15, ".0f"), ("tcp_goodput_mbps", 0.05, ".2f")):
            v = r[k]
            d = (v["sim"] - v["testbed"]) / v["testbed"]
            cells.append(f"{v['sim']:{fmt}} / {v['testbed']:{fmt}} ({100 * d:+.1f} %; testbed {v['testbed_min']:{fmt}}–{v['testbed_max']:{fmt}})"
                         + ("" if abs(d) <= bound else " ✗"))
        v = r["tcp_retransmits"]
        cells.append(f"{v['sim']:.0f} / {v['testbed']:.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: BBR against Linux BBR on scenarios/testbed/audio-bulk.toml (`jitterlab compare … --cc bbr`, one
#: file a seed); Linux BBR varies from run to run, so the comparison is of medians over runs.
BBR_DATA = ROOT / "docs" / "data" / "validation-testbed" / "issue24" / "bbr"
BBR_BEGIN, BBR_END = "<!-- bbr-table:begin -->\n", "<!-- bbr-table:end -->"


def bbr_rows(data: Path = BBR_DATA) -> dict:
    from jitterlab import compare as cmp
    from jitterlab import scenario as scn
    from jitterlab import sim

    files = sorted(data.glob("audio-bulk-bbr-s*.json"))
    sc = cmp.with_cc(scn.load(SC / "audio-bulk.toml"), "bbr")
    out: dict = {"testbed": [], "sim": []}
    for f in files:
        d = json.loads(f.read_text())
        seed = int(f.stem.rsplit("-s", 1)[1])
        out["testbed"].append({k: v["testbed"] for k, v in d["rows"].items() if v.get("testbed") is not None})
        out["sim"].append(cmp.summary(sim.simulate(sc, seed=seed)))
    return out


def bbr_table(rows: dict) -> str:
    lines = ["| side | runs | OWD median [ms], median (range) | OWD p90 [ms], median (range) | goodput [Mbit/s], median |",
             "|---|---|---|---|---|"]
    med: dict = {}
    for side, label in (("testbed", "Linux 6.18 BBR (testbed)"), ("sim", "simulator")):
        rs = rows[side]
        cells = [label, str(len(rs))]
        for k, fmt in (("owd_p50_ms", ".1f"), ("owd_p90_ms", ".1f")):
            v = [r[k] for r in rs]
            med[(side, k)] = float(np.median(v))
            cells.append(f"{np.median(v):{fmt}} ({min(v):{fmt}}–{max(v):{fmt}})")
        g = [r["tcp_goodput_mbps"] for r in rs]
        med[(side, "tcp_goodput_mbps")] = float(np.median(g))
        cells.append(f"{np.median(g):.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    d = [100 * (med[("sim", k)] - med[("testbed", k)]) / med[("testbed", k)] for k in ("owd_p50_ms", "owd_p90_ms", "tcp_goodput_mbps")]
    lines.append(f"| difference (simulator − Linux) / Linux | | {d[0]:+.1f} % | {d[1]:+.1f} % | {d[2]:+.1f} % |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?", help="directory for the testbed runs and table.md / table.json")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sim-only", action="store_true", help="reuse the testbed summaries already in OUT")
    ap.add_argument("--only", help="substring of the case names to run")
    ap.add_argument("--doc", action="store_true",
                    help="rewrite docs/validation.md's table from the testbed runs stored in docs/data (simulator recomputed)")
    a = ap.parse_args()
    if a.doc:
        write_block(BEGIN, END, table(rows_for(DOC_DATA)))
        write_block(BBR_BEGIN, BBR_END, bbr_table(bbr_rows()))
        if Path(MAHIMAHI_UMTS).is_file():
            write_block(TRACE_BEGIN, TRACE_END, trace_table(trace_rows()))
        else:
            print(f"trace table left as it is: {MAHIMAHI_UMTS} is absent (scripts/install-references.sh)", file=sys.stderr)
        return 0
    if not a.out:
        ap.error("give OUT (or --doc)")
    out = Path(a.out)
    (out / "testbed").mkdir(parents=True, exist_ok=True)
    rows = rows_for(out / "testbed", a.seeds, a.only, run_testbed=not a.sim_only)
    (out / "table.json").write_text(json.dumps(rows, indent=1))
    text = table(rows)
    (out / "table.md").write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
