"""The simulator's side of docs/media.md's testbed table (GCC, SCReAM, NADA) against the current
build: the stored testbed runs (docs/data/validation-testbed/issue27/) with the simulator
recomputed must give the table the docs print, and no fewer comparisons within 15 % than recorded
(regenerate with `python scripts/testbed_rtc_validation.py --doc` when a change is meant)."""
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


#: Judged comparisons within 15 % in the stored runs, GCC's and all controllers' (docs/media.md's
#: table says the same). 31 of 32 when the runs were recorded; 29 since the simulator's receiver
#: sends Linux's ACK on window growth and linux-6.18's push_ack (issue 24): SCReAM's and NADA's
#: OWD medians while the download runs then came out lower, the testbed's 19-28 % above them
#: (GCC's within 3 %); 32 since CUBIC's target looks ahead by the minimum RTT and PRR counts only
#: newly delivered data, as Linux (docs/validation.md, Verizon LTE).
RECORDED_OK = 16
RECORDED_OK_ALL = 32


@pytest.fixture(scope="module")
def tv():
    spec = importlib.util.spec_from_file_location("testbed_rtc_validation", ROOT / "scripts/testbed_rtc_validation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["testbed_rtc_validation"] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rows(tv):
    return tv.rows()


def test_gcc_table_is_the_builds(tv, rows):
    assert {r["case"] for r in rows} == set(tv.CASES) and all(r["seeds"] == 3 for r in rows)
    text = (ROOT / "docs/media.md").read_text()
    doc = text.split(tv.BEGIN, 1)[1].split(tv.END, 1)[0]
    assert doc == tv.table(rows), "docs/media.md's testbed table is stale: run scripts/testbed_rtc_validation.py --doc"


def test_gcc_on_the_testbed_holds_against_the_simulator(tv, rows):
    """Issue 27's target for GCC: media rate and OWD median within 15 %, counted over the judged
    rows; the recorded counts (GCC's and all controllers', docs/media.md) may not fall."""
    ok, n = tv.verdicts(rows, "gcc")
    assert n == 16
    assert ok >= RECORDED_OK
    ok, n = tv.verdicts(rows)
    assert n == 32
    assert ok >= RECORDED_OK_ALL
