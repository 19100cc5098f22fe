"""jitterlab against ns-2 (Debian's `ns2`) on the validation scenarios of validation/ns2/compare.py,
at a size that takes under a minute: 8 replications of 100 s. Both simulators are deterministic for
given TCP start times, so the figures are the same on every run; the bounds are the aims stated by
compare.py (goodput 5 %, RTP loss 2 percentage points) and, for the single flow, the sawtooth
period within 10 %. Skipped, with the reason, when `ns` is not installed (run-tests installs it as
root)."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (apt-get install ns2; run-tests does it as root)")

DURATION, REPS = 100.0, 8


@pytest.fixture(scope="module")
def cmp():
    spec = importlib.util.spec_from_file_location("ns2_compare", ROOT / "validation" / "ns2" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.BINARY = mod.build_jitterlab()
    return mod


@pytest.mark.parametrize("name", ["single", "single-newreno", "elastic-droptail", "elastic-newreno", "elastic-red", "elastic-red-ecn"])
def test_matches_ns2(cmp, name):
    res = cmp.run_pair(cmp.BINARY, name, DURATION, REPS)
    assert "error" not in res, res.get("error")
    gn = cmp.mean([r["goodput_bps"] for r in res["ns2"]])
    gj = cmp.mean([r["goodput_bps"] for r in res["jitterlab"]])
    assert abs(gj - gn) / gn < 0.05, f"TCP goodput {gj / 1e6:.4f} vs ns-2 {gn / 1e6:.4f} Mbit/s"
    video = cmp.SCENARIOS[name][3]
    if video:
        ln = 100 * cmp.mean([r["rtp_loss"] for r in res["ns2"]])
        lj = 100 * cmp.mean([r["rtp_loss"] for r in res["jitterlab"]])
        assert abs(lj - ln) < 2.0, f"RTP loss {lj:.2f} % vs ns-2 {ln:.2f} %"
    else:
        pn = cmp.mean([p for p in (cmp.period(r["cuts"]) for r in res["ns2"]) if p])
        pj = cmp.mean([p for p in (cmp.period(r["cuts"]) for r in res["jitterlab"]) if p])
        assert abs(pj - pn) / pn < 0.10, f"sawtooth period {pj:.2f} vs ns-2 {pn:.2f} s"
