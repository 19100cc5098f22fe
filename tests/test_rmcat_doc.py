"""docs/media.md's measured RMCAT tables (each case's medians with quartiles, the findings'
verdicts) are this build's: `scripts/rmcat_doc.py` renders them from `jitterlab reproduce rmcat
--reps 5`, and this test runs the same study and compares every line, so a model change that moves
a number fails here until `python scripts/rmcat_doc.py --doc` regenerates them."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("rmcat_doc", ROOT / "scripts" / "rmcat_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = tmp_path_factory.mktemp("rmcat")
    mod.run_study(out, mod.REPS)
    return mod, out


def test_doc_block_is_this_builds(study):
    mod, out = study
    have = mod.doc_block(mod.DOC.read_text())
    assert have is not None, "docs/media.md: no rmcat-measured block"
    want = mod.render(out)
    for w, h in zip(want, have):
        assert h == w, f"docs/media.md rmcat-measured: doc has\n{h}\nthe build gives\n{w}\n(regenerate: python scripts/rmcat_doc.py --doc)"
    assert len(have) == len(want), (len(have), len(want))


def test_every_case_has_its_table(study):
    """Each case the preset writes (OUT/case_*.csv) is in the block, one row per controller at least."""
    mod, out = study
    lines = mod.render(out)
    for key in mod.CASES:
        assert (out / f"case_{key}.csv").is_file(), key
        i = next(i for i, ln in enumerate(lines) if f"(`case_{key}.csv`)" in ln)
        assert lines[i + 2].startswith("| ") and lines[i + 4].startswith("| "), key
    # per-run tables and the published-results table (docs/media.md's own section, test_rmcat_more) aside
    written = {p.name[len("case_"):-len(".csv")] for p in out.glob("case_*.csv")
               if not p.name.endswith(("_per_run.csv", "_published.csv"))}
    assert written == set(mod.CASES), written ^ set(mod.CASES)


def test_fmt_rounds_to_three_figures():
    spec = importlib.util.spec_from_file_location("rmcat_doc", ROOT / "scripts" / "rmcat_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert [mod._fmt(x) for x in ("323.4", "25.04", "1.704", "0.6293", "0", "-0.5")] == ["323", "25.0", "1.70", "0.629", "0.000", "\u22120.500"]
