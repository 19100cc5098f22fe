#!/usr/bin/env python3
"""Where CAKE's cost on the cellular link comes from (issue 26; docs/mitigations.md, "CAKE on the
cellular link"): the mitigations study's bulk workload (audio + a 28 MB CUBIC download from 10 s)
on the cellular preset, per seed, with FQ-CoDel as the radio's queue; CAKE in front of the radio
(`access.core_queue`) with its shaper set by cake-autorate (as the study deploys it:
`mitigations.cake_autorate_table`, the model's 2.7 Mbit/s minimum as min and base, its 5 Mbit/s
maximum as max); CAKE shaped at a fixed 2565 kbit as the radio's own queue (`access.down_queue`)
and in front of the radio (the study's extra row "CAKE fixed shaper"), and CoDel and COBALT alone (unshaped CAKE, `isolation = "flowblind"`) as the
radio's queue; and, to show what the shaper's headroom buys, the same CAKE in front of the radio at
100 % of the radio's minimum rate (2700 kbit) and at 95 % of its mean (2850 kbit), rates the study
does not deploy; and CAKE as tc-cake(8) offers it for cellular links, `autorate-ingress` on the
mobile's ingress behind the radio (`access.ingress_*`). Prints
a Markdown table: the download's goodput, the queue's CoDel-law drops, the audio's median OWD.
Usage: scripts/cake-cellular.py [SEEDS] [--doc] (default 1,2,3); --doc writes each setup's goodputs,
drops and the audio's median OWD over the seeds into its row of docs/mitigations.md's table (the
row's other text is kept), which tests/test_mitigations_cake.py checks against the build."""
import re
import sys
from pathlib import Path

import numpy as np

from jitterlab import sim
from jitterlab.presets import mitigations as mit
from jitterlab.presets import pam2013

CAKE = {"kind": "cake", "memlimit": mit.CAKE_MEM, "bandwidth": "2565kbit"}
DEPLOYED = "CAKE with cake-autorate (2700 / 2700 / 5000 kbit), in front of the radio"
AUTORATE = mit.cake_autorate_table(pam2013.load_link("cellular"))
#: CAKE in front of the radio is a middlebox's queue, not the server's own (docs/mitigations.md)
NET = {"access.core_queue_at": "network"}
SETUPS = {
    "FQ-CoDel, the radio's queue": {"access.down_queue": {"kind": "fq_codel", "limit": mit.BUFFER}},
    DEPLOYED: {"access.core_queue": {"kind": "cake", "memlimit": mit.CAKE_MEM, "autorate": AUTORATE}, **NET},
    "CAKE 2565 kbit, the radio's queue": {"access.down_queue": CAKE},
    "CAKE 2565 kbit, in front of the radio": {"access.core_queue": CAKE, **NET},
    "CoDel, the radio's queue": {"access.down_queue": {"kind": "codel", "limit": mit.BUFFER}},
    "COBALT alone (CAKE flowblind, unshaped), the radio's queue": {"access.down_queue": {"kind": "cake", "memlimit": mit.CAKE_MEM, "isolation": "flowblind"}},
    "CAKE 2700 kbit (the radio's minimum), in front of the radio": {"access.core_queue": {**CAKE, "bandwidth": "2700kbit"}, **NET},
    "CAKE 2850 kbit (95 % of the radio's mean), in front of the radio": {"access.core_queue": {**CAKE, "bandwidth": "2850kbit"}, **NET},
    # tc-cake(8)'s answer for cellular links: autorate-ingress, which estimates the rate arriving at
    # CAKE, so behind the radio on the mobile's own ingress (`ingress`: downlink of the bottleneck);
    # 2565 kbit is only its first estimate
    "CAKE autorate-ingress (first estimate 2565 kbit), behind the radio on the mobile's ingress": {
        "access.ingress_rate": "1Gbit", "access.ingress_delay": "0ms",
        "access.ingress_queue": {**CAKE, "ingress": True, "autorate_ingress": True}},
}


def rows(seeds: list[int]) -> list[dict]:
    """One row per setup and seed: goodput (Mbit/s), finished, CoDel-law drops, audio OWD median (ms)."""
    cell = pam2013.load_link("cellular")
    base = mit.sweeps(1, cell, [mit.BASELINE])["bulk"].scenario
    out = []
    for name, keys in SETUPS.items():
        for seed in seeds:
            r = sim.simulate(base, seed=seed, overrides=keys)
            f = r.tcp_flows.iloc[0]
            done = bool(f.bytes_acked == f["size"])
            end = f.end_ns if done else r.runs.end_ns.iloc[0]
            m = r.media_packets
            w = m[(m.send_ns > f.syn_ns) & (m.send_ns < end) & m.recv_ns.notna()]
            out.append({"setup": name, "seed": seed, "goodput_Mbps": f.bytes_acked * 8 / ((end - f.syn_ns) / 1e9) / 1e6,
                        "finished": done, "drops": int(r.channels.drops_codel.sum()),
                        "owd_p50_ms": float(np.median(w.recv_ns - w.send_ns)) / 1e6})
    return out


DOC = Path(__file__).resolve().parents[1] / "docs" / "mitigations.md"


def doc_cells(rs: list[dict]) -> tuple[str, str]:
    """A setup's drops cell and audio-OWD cell over its seeds (one value when the seeds agree)."""
    lo, hi = min(r["owd_p50_ms"] for r in rs), max(r["owd_p50_ms"] for r in rs)
    return " / ".join(str(r["drops"]) for r in rs), (f"{lo:.1f}" if lo == hi else f"{lo:.1f}\u2013{hi:.1f}")


def write_doc(got: list[dict]) -> None:
    """Each setup's row of the doc's table: goodputs in order, drops, the audio's median OWD."""
    lines = DOC.read_text().splitlines(keepends=True)
    for name in SETUPS:
        rs = [r for r in got if r["setup"] == name]
        label = name + (" (as deployed)" if name == DEPLOYED else "")
        i = next((k for k, ln in enumerate(lines) if ln.startswith(f"| {label} |")), None)
        if i is None:
            sys.exit(f"docs/mitigations.md: no row for {label!r}")
        cells = lines[i].rstrip("\n").strip("|").split("|")
        gps = iter(f"{r['goodput_Mbps']:.2f}" for r in rs)
        cells[1] = re.sub(r"\d+\.\d+", lambda m: next(gps), cells[1])
        if ("unfinished" in cells[1]) != (not all(r["finished"] for r in rs)):
            sys.exit(f"docs/mitigations.md: {label!r}: say in its goodput cell whether every download finished")
        drops, owd = doc_cells(rs)
        cells[2], cells[3] = f" {drops} ", f" {owd} "
        lines[i] = "|" + "|".join(cells) + "|\n"
    DOC.write_text("".join(lines))


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--doc"]
    seeds = [int(s) for s in (args[0] if args else "1,2,3").split(",")]
    if "--doc" in sys.argv[1:]:
        write_doc(rows(seeds))
        return
    print("| setup | seed | goodput (Mbit/s) | finished | CoDel-law drops | audio OWD median (ms) |")
    print("|---|---|---|---|---|---|")
    for r in rows(seeds):
        print(f"| {r['setup']} | {r['seed']} | {r['goodput_Mbps']:.2f} | {'yes' if r['finished'] else 'no'} | {r['drops']} | {r['owd_p50_ms']:.1f} |")


if __name__ == "__main__":
    main()
