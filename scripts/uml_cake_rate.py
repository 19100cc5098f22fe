#!/usr/bin/env python3
"""Where Linux's CAKE loses rate in user-mode Linux (issue 26; docs/mitigations.md, "What misses, and
why"): scripts/uml/cake-rate.sh's runs kept as one JSON and summarised. Per boot: the shaper's
achieved rate and timing for 1500-byte UDP datagrams put back to back into CAKE (`cake_noaqm`: no
AQM, so none is dropped before the memory limit) and into HTB + pfifo at the same rate (the median
gap against the configured 3.828 ms; each packet's lateness against the configured schedule, anchored
where no packet is early), and a lone 8 MB CUBIC download (no audio) through CAKE as deployed and
through HTB + fq_codel at CAKE's rate (goodput as scripts/uml_aqm.py measures it; the qdisc's drops).

  python scripts/uml_cake_rate.py [--runs DIR ...] [--nice N] [--out JSON]   boot UML (root, testbed
      lock, ~3 min) or collect cake-rate.sh's output DIRs, and add them to JSON
  python scripts/uml_cake_rate.py --summary JSON [--late-out FILE]   the tables; FILE: the lateness
      series (ns, one a line) of every CAKE drain, for the replay in docs/mitigations.md

Exit status 2 on bad input."""
from __future__ import annotations

import argparse
import fcntl
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
KEPT = ROOT / "docs" / "data" / "uml-cake-rate.json"
LOCK, UML = "/tmp/jitterlab-testbed.lock", "/usr/bin/linux.uml"
KBIT, SIZE = 3135, 8_000_000  # CAKE's IP rate on the fixed path as deployed (uml_aqm.CAKE_KBIT)


def _file(d: Path, name: str) -> Any:
    p = d / name
    if not p.exists():
        return None
    txt = p.read_text()
    return json.loads(txt) if name.endswith(".json") else txt


def collect(d: Path) -> dict[str, Any]:
    """One cake-rate.sh output directory: its UDP drains and TCP downloads by name (`udp-cake_noaqm-2`)."""
    out: dict[str, Any] = {}
    for sub in sorted(p for p in d.iterdir() if p.is_dir()):
        tc = _file(sub, "tc.txt") or ""
        m = re.search(r"dropped (\d+)", tc)
        run: dict[str, Any] = {"drops": int(m.group(1)) if m else None}
        if sub.name.startswith("udp-"):
            run["recv"] = _file(sub, "recv.json")
        else:
            s, r = _file(sub, "send.json"), _file(sub, "recv.json")
            if not (s and r and r["tcp"]["last_ns"]):
                continue
            run["goodput_Mbps"] = SIZE * 8 / ((r["tcp"]["last_ns"] - s["connect_ns"]) / 1e9) / 1e6
        out[sub.name] = run
    return out


def lateness(ts: list[int], rate_kbit: float = KBIT, size: int = 1500) -> list[int]:
    """Each arrival's lateness (ns) against the schedule at `rate_kbit`, anchored where none is early."""
    d = size * 8 / rate_kbit * 1e6
    off = [t - i * d for i, t in enumerate(ts)]
    return [int(o - min(off)) for o in off]


def summary(k: dict[str, Any]) -> str:
    """Markdown: the UDP drains (rate, gap, lateness) and the lone downloads, per boot."""
    lines = ["| boot | UDP drain | packets | median gap (ms) | lateness mean / p90 / max (ms) |", "|---|---|---|---|---|"]
    for b in k["boots"]:
        for name, r in sorted(b["runs"].items()):
            rv = r.get("recv")
            if not name.startswith("udp-") or not rv or not rv.get("arrival_ns"):
                continue
            late = sorted(lateness(rv["arrival_ns"]))
            lines.append(f"| {b['label']} | {name[4:]} | {rv['arrived']} | {rv['gap_us_p50'] / 1e3:.3f} | "
                         f"{sum(late) / len(late) / 1e6:.1f} / {late[int(0.9 * (len(late) - 1))] / 1e6:.1f} / {late[-1] / 1e6:.1f} |")
    lines += ["", "| boot | lone download through | goodput (Mbit/s) per run | drops per run |", "|---|---|---|---|"]
    for b in k["boots"]:
        by: dict[str, list[dict[str, Any]]] = {}
        for name, r in sorted(b["runs"].items()):
            if name.startswith("tcp-"):
                by.setdefault(name[4:].rsplit("-", 1)[0], []).append(r)
        for conf, rs in by.items():
            gp = " / ".join("%.3f" % r["goodput_Mbps"] for r in rs)
            drops = " / ".join(str(r["drops"]) for r in rs)
            lines.append(f"| {b['label']} | {conf} | {gp} (median {median(r['goodput_Mbps'] for r in rs):.3f}) | {drops} |")
    for conf in ("cake", "htb_fq_codel"):
        s = sim_lone(conf)
        lines.append(f"| simulator (this build) | {conf} | {s['goodput_Mbps']:.3f} | {s['drops']} |")
    return "\n".join(lines)


def sim_lone(conf: str, start_s: float = 1.0) -> dict[str, float]:
    """The simulator's lone download on cake-rate.sh's path (scripts/uml_aqm.py's scenario without the
    audio): `cake` as deployed inside the 3.3 Mbit/s bottleneck, `htb_fq_codel` fq_codel at CAKE's rate."""
    sys.path.insert(0, str(ROOT / "python"))
    sys.path.insert(0, str(ROOT / "scripts"))
    import uml_aqm
    from jitterlab.sim import simulate

    sc = uml_aqm.scenario("cake", start_s, SIZE)
    sc["traffic"] = [t for t in sc["traffic"] if t["kind"] != "audio"]
    if conf == "htb_fq_codel":
        sc["access"]["down_rate"], sc["access"]["down_queue"] = f"{KBIT}kbit", {"kind": "fq_codel", "limit": "500pkt"}
    f = simulate(sc, seed=1).tcp_flows.iloc[0]
    return {"goodput_Mbps": SIZE * 8 / ((f.end_ns - f.syn_ns) / 1e9) / 1e6, "drops": int(f.drops)}


def boot(nice: int) -> Path:
    """One UML boot of cake-rate.sh (under the testbed lock); returns its output directory."""
    out = Path(tempfile.mkdtemp(prefix="cake-rate."))
    script = ROOT / "scripts" / "uml" / "cake-rate.sh"
    with open(LOCK, "w") as lk, tempfile.TemporaryDirectory() as td:
        fcntl.flock(lk, fcntl.LOCK_EX)
        subprocess.run(["nice", "-n", str(nice), UML, "mem=1024M", "rootfstype=hostfs", "rootflags=/", "rw", f"init={script}",
                        f"OUT={out}", "UDP=cake_noaqm,htb_pfifo", "TCP=cake,htb_fq_codel", "REPS=2", "con=null", "con0=fd:0,fd:1"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={"TMPDIR": td, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}, timeout=900, check=False)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--summary", type=Path, help="a kept JSON: print its tables")
    ap.add_argument("--late-out", type=Path, help="with --summary: write the CAKE drains' lateness (ns) here")
    ap.add_argument("--runs", type=Path, nargs="*", help="cake-rate.sh output directories to add (no UML run)")
    ap.add_argument("--nice", type=int, default=0, help="the UML process's nice level (recorded with the boot)")
    ap.add_argument("--out", type=Path, default=KEPT, help="the kept JSON to add the boots to")
    a = ap.parse_args(argv)
    if a.summary is not None:
        try:
            k = json.loads(a.summary.read_text())
            text = summary(k)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"--summary {a.summary}: not a kept cake-rate JSON ({type(e).__name__}: {e})", file=sys.stderr)
            return 2
        print(text)
        if a.late_out:
            late = [x for b in k["boots"] for n, r in sorted(b["runs"].items()) if n.startswith("udp-cake")
                    for x in lateness((r.get("recv") or {}).get("arrival_ns") or [])]
            a.late_out.write_text("\n".join(map(str, late)) + "\n")
        return 0
    dirs = a.runs if a.runs else [boot(a.nice)]
    k = json.loads(a.out.read_text()) if a.out.exists() else {"kbit": KBIT, "size": SIZE, "boots": []}
    for d in dirs:
        if not d.is_dir():
            print(f"--runs {d}: not a directory", file=sys.stderr)
            return 2
        k["boots"].append({"label": f"{d.name} (nice {a.nice})", "runs": collect(d)})
    a.out.write_text(json.dumps(k) + "\n")
    print(summary(k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
