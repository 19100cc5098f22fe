#!/usr/bin/env python3
"""What Linux's timeout rules (docs/tcp.md, "The timeout as Linux": `rto_rack`, `frto`,
`loss_undo`) do to the simulator's retransmissions in the mitigations testbed scenario (audio + an
8 MB CUBIC download from 4 s, 30 s; `presets/mitigations_testbed.py`) with DropTail on each link:
per link, the linux-6.18 profile as it is and with the three switches off, over RETX_SEEDS seeds
(SEED, SEED + 1, …, as `sim_retransmits`): the retransmissions' median with the 10th and 90th
percentile, the drops' median, the most any run retransmitted beyond what the network dropped, the
runs with a timeout and what those retransmitted, and the drops in those runs.

Usage: scripts/rto_linux_retx.py [--doc]  (--doc writes the table into docs/tcp.md)."""
import copy
import sys
from pathlib import Path

import numpy as np

from jitterlab import scenario as scn
from jitterlab import sim
from jitterlab.presets import mitigations_catalog as mit
from jitterlab.presets import mitigations_testbed as T
from jitterlab.presets import pam2013

DOC = Path(__file__).resolve().parents[1] / "docs" / "tcp.md"
BEGIN, END = "<!-- rto-linux-retx:begin -->\n", "<!-- rto-linux-retx:end -->"
OFF = {"rto_rack": False, "frto": False, "loss_undo": False}
VARIANTS = {"linux-6.18": {}, "rto_rack, frto, loss_undo off": OFF}


def rows() -> list[dict]:
    out = []
    for link in ("fixed", "cellular"):
        ln = pam2013.load_link(link)
        sc = scn.with_overrides(T.scenario(ln), next(m for m in mit.MITIGATIONS if m.name == mit.BASELINE).keys(ln))
        for label, keys in VARIANTS.items():
            s = copy.deepcopy(sc)
            for t in s["traffic"]:
                if t.get("kind") in ("bulk", "web", "ftp"):
                    t.update(keys)
            fl = [sim.simulate(s, seed=mit.SEED + k, run_id=k).tcp_flows for k in range(T.RETX_SEEDS)]
            r = np.array([int(f["retransmits"].sum()) for f in fl])
            to = np.array([int(f["timeouts"].sum()) > 0 for f in fl])
            drops = np.array([int(f["drops"].sum()) for f in fl])
            p10, p50, p90 = np.percentile(r, [10, 50, 90])
            out.append({"link": link, "stack": label, "p10": p10, "p50": p50, "p90": p90, "excess_max": int((r - drops).max()),
                        "drops_p50": float(np.median(drops)), "timeout_runs": int(to.sum()),
                        "timeout_retx": sorted(r[to].tolist()), "timeout_drops": [int(d) for _, d in sorted(zip(r[to], drops[to]))]})
    return out


def table(rs: list[dict]) -> str:
    lines = [f"| link | stack | retransmissions, median [p10–p90] over {T.RETX_SEEDS} seeds | drops, median | "
             "retransmissions − drops, most in a run | runs with a timeout | their retransmissions (drops) |",
             "|---|---|---|---|---|---|---|"]
    for r in rs:
        each = ", ".join(f"{x} ({d})" for x, d in zip(r["timeout_retx"], r["timeout_drops"])) or "–"
        lines.append(f"| {r['link']} | {r['stack']} | {r['p50']:.1f} [{r['p10']:.1f}–{r['p90']:.1f}] | {r['drops_p50']:.1f} | "
                     f"{r['excess_max']} | {r['timeout_runs']} | {each} |")
    return "\n".join(lines) + "\n"


def doc_block(text: str) -> str:
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def main() -> None:
    t = table(rows())
    if "--doc" in sys.argv[1:]:
        text = DOC.read_text()
        pre, rest = text.split(BEGIN, 1)
        DOC.write_text(pre + BEGIN + t + END + rest.split(END, 1)[1])
    print(t, end="")


if __name__ == "__main__":
    main()
