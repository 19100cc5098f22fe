"""docs/tables.md stays true: every column a source writes is documented; the example sweeps load
and expand to the runs they promise; every shipped scenario carries the traffic its name says;
the docstring examples of the result-type and provenance modules run."""
from __future__ import annotations

import doctest
import re
import tomllib

import pytest

import jitterlab
import jitterlab.provenance
import jitterlab.tables
from conftest import ROOT
from jitterlab import sweep

DOC = (ROOT / "docs" / "tables.md").read_text()
KINDS = {"audio", "video", "bulk", "web", "ftp"}


def documented(col: str) -> bool:
    # a column is named in backticks, in a table cell, or in a comma-separated list
    return re.search(rf"(?<![\w_]){re.escape(col)}(?![\w_])", DOC) is not None


def test_every_column_of_simulate_and_analyze_is_documented(tmp_path):
    sim = jitterlab.simulate(ROOT / "scenarios" / "audio-bulk-access.toml", seed=1, overrides={"output.pcap": ["server", "client"]},
                             pcap_dir=tmp_path)
    cap = jitterlab.analyze(sim.pcap["server"], sim.pcap["client"])
    missing = [f"{src}.{name}.{c}" for src, res in (("sim", sim), ("capture", cap)) for name, t in res.arrow.items()
               for c in t.column_names if not documented(c)]
    assert not missing, f"columns missing from docs/tables.md: {missing}"
    for name in list(sim.arrow) + list(cap.arrow):
        assert f"## {name}" in DOC or f"**{name}**" in DOC, name


def test_schema_version_is_the_documented_one():
    assert f"schema_version` (this page's layout; now {jitterlab.provenance.SCHEMA_VERSION})" in DOC


@pytest.mark.parametrize("name,runs,params", [("buffer-aqm", 9, ["queue"]),
                                               ("web-iw", 16, ["iw", "traffic[1].flows", "access.down_rate", "access.down_queue.limit"])])
def test_example_sweeps_load(name, runs, params):
    sw = sweep.load(ROOT / "scenarios" / "sweeps" / f"{name}.toml")
    assert len(sw.runs()) == runs
    assert [p.name for p in sw.params] + [p.name for p in sw.zipped] == params
    assert f"scenarios/sweeps/{name}.toml" in DOC


def _scenarios():
    return sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "scenarios" / "testbed").glob("*.toml"))


@pytest.mark.parametrize("path", _scenarios(), ids=lambda p: p.stem)
def test_shipped_scenario_does_what_its_name_says(path):
    doc = tomllib.loads(path.read_text())
    kinds = {t["kind"] for t in doc.get("traffic", [])}
    words = set(re.split(r"[-_]", path.stem)) | set(re.split(r"[-_]", doc.get("name", "")))
    for k in KINDS & words:
        assert k in kinds, f"{path.name}: named '{k}' but has no {k} traffic (has {sorted(kinds)})"
    if "alone" in words:
        assert kinds == {"audio"}, f"{path.name}: 'alone' but has {sorted(kinds)}"
    for topo in ("access", "dumbbell"):
        if topo in words:
            assert topo in doc, f"{path.name}: named '{topo}' but has no [{topo}] table"
    if "pam2013" in words:
        assert "audio" in kinds and kinds & {"bulk", "web"}


@pytest.mark.parametrize("mod", [jitterlab.tables, jitterlab.provenance])
def test_docstring_examples(mod):
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
