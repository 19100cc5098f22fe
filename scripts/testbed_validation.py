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


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--sim-only", action="store_true", help="reuse the testbed summaries already in OUT")
    ap.add_argument("--only", help="substring of the case names to run")
    a = ap.parse_args()
    from jitterlab import compare as cmp
    from jitterlab import scenario as scn
    from jitterlab import sim

    out = Path(a.out)
    (out / "testbed").mkdir(parents=True, exist_ok=True)
    rows = []
    for name, path, ov in cases():
        if a.only and a.only not in name:
            continue
        sc = scn.with_overrides(scn.load(path), ov)
        tb, sm = [], []
        for seed in range(1, a.seeds + 1):
            f = out / "testbed" / f"{slug(name)}-s{seed}.json"
            if not f.exists():
                if a.sim_only:
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
        row = {"case": name, "seeds": len(tb)}
        for k in [f"owd_p{p}_ms" for p in PCTS] + ["tcp_goodput_mbps", "loss_pct", "tcp_retransmits"]:
            tv = [t[k] for t in tb if k in t]
            sv = [s[k] for s in sm if k in s]
            if tv and sv:
                row[k] = {"testbed": float(np.mean(tv)), "sim": float(np.mean(sv)),
                          "testbed_min": float(np.min(tv)), "testbed_max": float(np.max(tv))}
        rows.append(row)
    suffix = ""
    (out / f"table{suffix}.json").write_text(json.dumps(rows, indent=1))
    lines = ["| case | OWD p5 [ms] | OWD p50 [ms] | OWD p90 [ms] | OWD p99 [ms] | goodput [Mbit/s] |", "|---|---|---|---|---|---|"]
    n_ok = n_all = 0
    gp_bad = []
    for r in rows:
        cells = [r["case"]]
        for p in PCTS:
            v = r.get(f"owd_p{p}_ms")
            if not v:
                cells.append("")
                continue
            d = v["sim"] - v["testbed"]
            ok = abs(d) <= max(3.0, 0.10 * v["testbed"])
            n_all += 1
            n_ok += ok
            cells.append(f"{v['sim']:.1f} / {v['testbed']:.1f} ({100 * d / v['testbed']:+.0f} %){'' if ok else ' ✗'}")
        g = r.get("tcp_goodput_mbps")
        if g:
            d = (g["sim"] - g["testbed"]) / g["testbed"]
            ok = abs(d) <= 0.05
            if not ok:
                gp_bad.append(r["case"])
            cells.append(f"{g['sim']:.2f} / {g['testbed']:.2f} ({100 * d:+.1f} %){'' if ok else ' ✗'}")
        else:
            cells.append("")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"OWD percentiles within 10 % or 3 ms: {n_ok} of {n_all}; goodput outside 5 %: {', '.join(gp_bad) or 'none'}")
    (out / f"table{suffix}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
