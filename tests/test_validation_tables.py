"""The simulator's side of docs/validation.md's tables against the current build: the stored testbed
runs (real Linux 6.18, docs/data/validation-testbed/) with the simulator recomputed must give the
table the docs print, so a change that moves the simulator away from the recorded Linux numbers
fails here (regenerate with `python scripts/testbed_validation.py --doc` when the change is meant)."""
import importlib.util
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def tv():
    spec = importlib.util.spec_from_file_location("testbed_validation", ROOT / "scripts/testbed_validation.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["testbed_validation"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_fixed_path_table_is_the_builds(tv, root):
    rows = tv.rows_for(tv.DOC_DATA)
    assert len(rows) == 15 and all(r["seeds"] == 3 for r in rows)
    text = (root / "docs/validation.md").read_text()
    doc = text.split(tv.BEGIN, 1)[1].split(tv.END, 1)[0]
    assert doc == tv.table(rows), "docs/validation.md's fixed-path table is stale: run scripts/testbed_validation.py --doc"


def test_fixed_path_holds_against_linux(tv):
    """Goodput within 5 % of Linux's in every case (the receive-budget cases included), and no fewer
    OWD percentiles within 10 % or 3 ms than recorded (52 of 60, docs/validation.md)."""
    n_ok, n_all, gp_bad = tv.verdicts(tv.rows_for(tv.DOC_DATA))
    assert n_all == 60 and gp_bad == []
    assert n_ok >= 52
