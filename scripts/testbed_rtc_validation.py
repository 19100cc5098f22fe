"""GCC on the testbed against the simulator (issue 27): scenarios/testbed/gcc-video.toml (the fixed
1 Mbit/s path) and gcc-video-trace.toml (a trace the project generated), audio + a GCC video call +
a CUBIC download from 15 s, as the files say; and SCReAM and NADA on the fixed path. For every case and seed it runs the testbed (root; one
JSON summary per run, `jitterlab.compare.summary`, kept under docs/data/validation-testbed/issue27/
and reused) and the simulator (recomputed with the current build), and prints the table of
docs/media.md ("Testbed"): each flow's media rate and OWD median and p90, over the whole flow and
over the download's window, testbed mean over the seeds against the simulator's mean.
Rule (issue 27): media rate and OWD median within 15 % (|testbed − sim| / sim ≤ 0.15); p90 is shown
without a verdict.

    sudo flock /tmp/jitterlab-testbed.lock .venv/bin/python scripts/testbed_rtc_validation.py --seeds 3
    .venv/bin/python scripts/testbed_rtc_validation.py --doc   # docs/media.md's table from the stored runs (no root)
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SC = ROOT / "scenarios" / "testbed"
DATA = ROOT / "docs" / "data" / "validation-testbed" / "issue27"
# case: (scenario file, overrides); the SCReAM and NADA cases are gcc-video.toml with the video's
# controller named (the same controller code runs on both backends for every controller)
CASES = {
    "gcc-video": ("gcc-video", {}),
    "gcc-video-trace": ("gcc-video-trace", {}),
    "scream-video": ("gcc-video", {"traffic[1].cc": "scream"}),
    "nada-video": ("gcc-video", {"traffic[1].cc": "nada"}),
}
FLOWS = ("video", "audio")
WINDOWS = (("", "whole flow"), ("tcp.", "download active"))
QUANTITIES = (("rate_kbps", "rate kbit/s", True), ("owd_p50_ms", "OWD p50 ms", True), ("owd_p90_ms", "OWD p90 ms", False))
LIMIT = 0.15
BEGIN = "<!-- testbed_rtc_validation.py: begin -->\n"
END = "<!-- testbed_rtc_validation.py: end -->\n"


def rows(seeds: int | None = None, run_testbed: bool = False) -> list[dict]:
    """One row per case, flow, window and quantity: testbed and simulator means over the seeds."""
    from jitterlab import compare as cmp
    from jitterlab import scenario as scn
    from jitterlab import sim

    out = []
    for case, (file, ov) in CASES.items():
        path = scn.with_overrides(scn.load(SC / f"{file}.toml"), ov)
        n = seeds or len(list(DATA.glob(f"{case}-s*.json")))
        tb, sm = [], []
        for seed in range(1, n + 1):
            f = DATA / f"{case}-s{seed}.json"
            if not f.exists():
                if not run_testbed:
                    print(f"missing {f}", file=sys.stderr)
                    continue
                from jitterlab import testbed

                t0 = time.time()
                res = testbed.run(path, seed=seed)
                acc = res.testbed.get("accuracy", {})
                DATA.mkdir(parents=True, exist_ok=True)
                f.write_text(json.dumps({**cmp.summary(res), "disturbed": acc.get("disturbed")}, indent=1))
                print(f"testbed {case} seed {seed}: {time.time() - t0:.0f} s, disturbed: {acc.get('disturbed')}", file=sys.stderr)
            tb.append(json.loads(f.read_text()))
            sm.append(cmp.summary(sim.simulate(path, seed=seed)))
        for flow in FLOWS:
            for w, wname in WINDOWS:
                for q, qname, judged in QUANTITIES:
                    k = f"{flow}.{w}{q}"
                    t = sum(x[k] for x in tb) / len(tb)
                    s = sum(x[k] for x in sm) / len(sm)
                    out.append({"case": case, "flow": flow, "window": wname, "quantity": qname, "seeds": len(tb), "sim": s,
                                "testbed": t, "diff": (t - s) / s, "judged": judged,
                                "disturbed": sum(1 for x in tb if x.get("disturbed"))})
    return out


def table(rs: list[dict]) -> str:
    lines = ["| case | flow | window | quantity | simulator | testbed | diff | within 15 % |", "|---|---|---|---|---:|---:|---:|---|"]
    for r in rs:
        verdict = ("yes" if abs(r["diff"]) <= LIMIT else "no") if r["judged"] else "(not judged)"
        lines.append(f"| {r['case']} | {r['flow']} | {r['window']} | {r['quantity']} | {r['sim']:.1f} | {r['testbed']:.1f} | "
                     f"{100 * r['diff']:+.1f} % | {verdict} |")
    ok, n = verdicts(rs)
    gok, gn = verdicts(rs, "gcc")
    seeds = sorted({r["seeds"] for r in rs})
    dist = max((r["disturbed"] for r in rs), default=0)
    lines.append("")
    lines.append(f"{ok} of {n} judged comparisons within 15 % ({gok} of {gn} for GCC); testbed mean over {'/'.join(map(str, seeds))} seed(s) "
                 f"per case, simulator mean over the same seeds; up to {dist} testbed run(s) of a case were flagged disturbed by "
                 "`jitterlab.testbed.realtime` (CPU pressure or the media sender's lateness beyond its bounds).")
    return "\n".join(lines) + "\n"


def verdicts(rs: list[dict], prefix: str = "") -> tuple[int, int]:
    """(within 15 %, judged) over the cases whose name starts with `prefix`."""
    judged = [r for r in rs if r["judged"] and r["case"].startswith(prefix)]
    return sum(1 for r in judged if abs(r["diff"]) <= LIMIT), len(judged)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=None, help="run the testbed for seeds 1..N where no stored run exists (root)")
    ap.add_argument("--doc", action="store_true", help="write the table into docs/media.md")
    a = ap.parse_args(argv)
    rs = rows(a.seeds, run_testbed=a.seeds is not None)
    t = table(rs)
    if a.doc:
        p = ROOT / "docs" / "media.md"
        text = p.read_text()
        head, rest = text.split(BEGIN, 1)
        p.write_text(head + BEGIN + t + END + rest.split(END, 1)[1])
    print(t, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
