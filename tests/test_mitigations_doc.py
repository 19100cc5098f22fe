"""docs/mitigations.md's measured tables (the audio ranking, the adaptive call's ranking, the
findings) are this build's: `scripts/mitigations_doc.py` renders them from `jitterlab reproduce
mitigations --reps 5`, and this test runs the same study and compares every cell, so a model change
that moves a number fails here until `python scripts/mitigations_doc.py --doc` regenerates them."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("mitigations_doc", ROOT / "scripts" / "mitigations_doc.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    mod = _script()
    out = tmp_path_factory.mktemp("mitigations")
    mod.run_study(out, mod.REPS)
    return mod, mod.render(out, mod.REPS)


@pytest.mark.parametrize("block", ["mitigations-ranking", "mitigations-adaptive", "mitigations-findings"])
def test_doc_block_is_this_builds(rendered, block):
    mod, got = rendered
    doc = mod.doc_blocks(mod.DOC.read_text())
    assert block in doc, f"docs/mitigations.md: no {block} block"
    want = got[block]
    have = doc[block]
    # name the first differing row, so a stale table says where it moved
    for w, h in zip(want, have):
        assert h == w, f"docs/mitigations.md {block}: doc has\n{h}\nthe build gives\n{w}\n(regenerate: python scripts/mitigations_doc.py --doc)"
    assert len(have) == len(want), (block, len(have), len(want))


def test_every_available_mitigation_has_a_row_per_link(rendered):
    """The ranking block covers all 15 mitigations on both links, DropTail with gain 0."""
    from jitterlab.presets import mitigations as mit

    _, got = rendered
    rows = [r.strip("|").split("|") for r in got["mitigations-ranking"][2:]]
    for link in ("fixed", "cellular"):
        names = sorted(c[1].strip() for c in rows if c[0].strip() == link)
        assert names == sorted(m.name for m in mit.MITIGATIONS), link
    drop = [c for c in rows if c[1].strip() == mit.BASELINE]
    assert all(c[3].strip() == "0.00" for c in drop), drop
