"""The pam2013 calibration targets, measured in one call: the slides' link facts, Fig. 2 (audio
alone: median, quartiles, maximum, share above 40 ms, loss) and Fig. 3's median, each judged by the
same rows and rules as the preset's findings.csv (`pam2013.calibration_findings`).

`measure` runs them at a given replication count; tests/test_calibration.py fails when a row stops
agreeing, and `scripts/calibrate.py` writes the table of docs/calibration.md from the same call,
so neither can go stale against the code.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jitterlab import metrics as M
from jitterlab.presets import pam2013
from jitterlab.presets.common import Options, run_experiment
from jitterlab.presets.findings import Finding

#: The replication counts of the test and of the docs' table: audio alone as the paper (50 × 15 s,
#: cheap), the bulk download fewer (each is a 95 s run).
REPS_AUDIO = 50
REPS = 12
BEGIN, END = "<!-- calibration:begin (scripts/calibrate.py writes this) -->", "<!-- calibration:end -->"


@dataclass
class Measured:
    findings: list[Finding]
    reps: int
    reps_audio: int
    link: str
    stack: str
    rtt_ms: float
    handshake_ms: float  # median SYN → first data of the bulk transfer (one round trip)
    goodput_mbps: float


def measure(reps: int = REPS, link: "str | pam2013.Link" = "fixed", stack: str = pam2013.STACK, rtt_s: float | None = pam2013.RTT_S,
            out: str | Path | None = None, jobs: int | None = None, reps_audio: int = REPS_AUDIO) -> Measured:
    """Runs the audio-alone and bulk sweeps of the preset (same seeds, same scenarios) and judges
    the calibration rows."""
    ln = link if isinstance(link, pam2013.Link) else pam2013.load_link(link, study=True)
    sw = pam2013.sweeps(reps, reps, ln, stack, rtt_s)
    sw["audio"] = pam2013.sweeps(reps_audio, reps_audio, ln, stack, rtt_s)["audio"]
    with tempfile.TemporaryDirectory(prefix="jl-cal-") as tmp:
        opt = Options(Path(out or tmp), jobs, progress=False)
        res = {k: run_experiment(sw[k], k, opt) for k in ("audio", "bulk")}
        d: dict[str, Any] = {}
        for k in ("audio", "bulk"):
            r = res[k]["runs"]
            d[f"{k}_m"] = M.prepare(res[k]["media_packets"], r)
            d[f"{k}_r"] = r
        d["bulk_t"] = res["bulk"]["tcp_flows"]
    t = d["bulk_t"]
    hs = float(((t.first_data_ns - t.syn_ns) / 1e6).median())
    gp = float(M.tcp_summary(t).goodput_bps.median() / 1e6)
    return Measured(pam2013.calibration_findings(d, ln), reps, reps_audio, ln.spec, stack, (rtt_s or float("nan")) * 1e3, hs, gp)


def markdown(m: Measured) -> str:
    """The calibration table as docs/calibration.md shows it."""
    rows = ["| target | paper ± tolerance | source | measured | verdict |", "|---|---|---|---|---|"]
    for f in m.findings:
        rows.append(f"| {f.finding} | {f.paper} ({f.tolerance}) | {f.source} | {f.measured} | {f.verdict} |")
    return "\n".join([
        f"Measured by `scripts/calibrate.py` on the `{m.link}` link, stack `{m.stack}`, round trip {m.rtt_ms:g} ms "
        f"(handshake SYN → first data {m.handshake_ms:.1f} ms median), {m.reps_audio} replications of audio alone and "
        f"{m.reps} of the bulk download (seed 2013, as the preset); bulk goodput {m.goodput_mbps:.2f} Mbit/s (median). "
        "Rules and tolerances: python/jitterlab/presets/findings.py (`RULES`, `TOLERANCES`).",
        "", *rows])


def update_doc(path: str | Path, m: Measured) -> bool:
    """Replaces the block between BEGIN and END in `path`; True when it changed."""
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    i, j = text.index(BEGIN) + len(BEGIN), text.index(END)
    new = text[:i] + "\n" + markdown(m) + "\n" + text[j:]
    if new != text:
        p.write_text(new, encoding="utf-8")
    return new != text
