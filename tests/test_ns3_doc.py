"""docs/validation-ns3.md's results table is what `validation/ns3/compare.py --doc` wrote: its
numbers are the stored docs/data/ns3-validation.json, and the jitterlab side of every row is what
the current build gives for the same scenario (no ns-3 needed: the ns-3 side is the stored one)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("ns3_compare_doc", ROOT / "validation" / "ns3" / "compare.py")
cmp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cmp)


def test_doc_table_is_the_stored_runs_and_this_build():
    kept = json.loads(cmp.DOC_DATA.read_text())
    runs, duration = kept["runs"], kept["duration"]
    assert set(runs) == set(cmp.DOC_ROWS)
    assert cmp.doc_table(runs, duration) in cmp.DOC.read_text(), "docs/validation-ns3.md: regenerate with compare.py --doc"
    jl = cmp.build_jitterlab()
    for name, r in runs.items():
        now = cmp.run_jitterlab(jl, name, duration, cmp.starts_for(name))
        assert now == r["jitterlab"], (name, now, r["jitterlab"])


def test_doc_row_by_hand():
    r = {"ns3": {"goodput_bps": 9.612e6, "owd_p50_ms": 21.344, "owd_p90_ms": 25.938, "drops": 206, "marks": 0},
         "jitterlab": {"goodput_bps": 9.546e6, "owd_p50_ms": 19.734, "owd_p90_ms": 22.667, "drops": 139, "marks": 0}}
    # (9.546 - 9.612) / 9.612 = -0.687 % -> "−0.7 %" with a true minus sign
    assert cmp.doc_row("codel-cubic2", r) == ("| codel-cubic2 | CoDelQueueDisc, 2 × Cubic | `codel`, cubic | 9.612 / 9.546 (\u22120.7 %) "
                                             "| 21.34 / 19.73 | 25.94 / 22.67 | 206 / 139 |")
    r["ns3"]["marks"], r["jitterlab"]["marks"] = 1462, 732
    assert cmp.doc_row("dctcp", r).endswith("| 206 (1462) / 139 (732) |")
