"""`jitterlab schema`: the JSON Schema generated from the scenario parser (crates/sim/src/schema.rs)
accepts every scenario, example and preset the project ships, and flags what the parser refuses:
a misspelt key, a wrong type, a unit the parser does not know, a name no registry has."""
from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema", reason="pip install jsonschema (scripts/requirements.txt)")

from conftest import ROOT, run_cli  # noqa: E402
from jitterlab import scenario, sweep  # noqa: E402
from jitterlab._native import ScenarioError  # noqa: E402
from jitterlab.schema import scenario_schema, schema_errors, schema_text  # noqa: E402

PKG = ROOT / "python" / "jitterlab"
SHIPPED = sorted([*ROOT.glob("scenarios/**/*.toml"), *PKG.glob("examples/*.toml"), *PKG.glob("presets/**/*.toml")])


def _is_sweep(p: Path) -> bool:
    return "sweep" in tomllib.loads(p.read_text())


def test_the_schema_is_a_valid_draft_2020_12_schema_and_stable():
    s = scenario_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema_text() == json.dumps(s, indent=2, ensure_ascii=False) + "\n"


def test_there_is_something_to_validate():
    # 6 top-level scenarios, 13 testbed ones, the examples and the presets: a glob that silently
    # found nothing would make the next test pass for nothing
    assert len([p for p in SHIPPED if not _is_sweep(p)]) >= 20 and len([p for p in SHIPPED if _is_sweep(p)]) >= 4


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_file_conforms(path):
    if _is_sweep(path):
        # a sweep file: every run's scenario, as the sweep writes it (base + the point's overrides)
        sw = sweep.load(path)
        runs = sw.runs()
        assert runs
        for r in runs:
            sc = scenario.with_overrides(copy.deepcopy(dict(sw.scenario)), r.overrides)
            assert schema_errors(sc) == [], f"{path} run {r.overrides}"
        return
    # the TOML as parsed; presets' files are fragments of a scenario (a workload, a link's
    # [access]): the schema requires nothing, so a fragment is checked for what it holds
    assert schema_errors(tomllib.loads(path.read_text())) == []


def test_the_cellular_model_file_conforms_to_the_cellular_table():
    # `jitterlab trace generate MODEL.toml` reads the keys of a link's `cellular` table
    s = scenario_schema()
    link = s["properties"]["links"]["additionalProperties"]
    cell = {**s["properties"]["links"]["additionalProperties"]["properties"]["cellular"], "$defs": s["$defs"]}
    assert link["additionalProperties"] is False and cell["$ref"] == "#/$defs/cellular"  # shared by every link form
    doc = tomllib.loads((PKG / "examples" / "traces" / "cellular-2mbit.toml").read_text())
    jsonschema.Draft202012Validator(cell).validate(doc)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(cell).validate({**doc, "sigmaa": 0.4})


BASE = tomllib.loads((ROOT / "scenarios" / "audio-bulk-access.toml").read_text())


def _set(doc: dict, path: list, value: object) -> dict:
    d = copy.deepcopy(doc)
    t = d
    for k in path[:-1]:
        t = t[k]
    if value is _DEL:
        del t[path[-1]]
    else:
        t[path[-1]] = value
    return d


_DEL = object()

# (what, edit, a word the schema's error line must hold)
MISTAKES = [
    ("misspelt top-level key", lambda d: {**_set(d, ["duration"], _DEL), "duraton": "20s"}, "duraton"),
    ("misspelt key in [access]", lambda d: {**d, "access": {**d["access"], "down_delya": "10ms"}}, "down_delya"),
    ("misspelt key in a traffic entry", lambda d: _set(d, ["traffic", 1, "sizee"], "5MB"), "sizee"),
    ("misspelt key in a queue", lambda d: _set(d, ["access", "down_queue", "limt"], "500pkt"), "limt"),
    ("a key of another queue kind", lambda d: _set(d, ["access", "down_queue", "target"], "5ms"), "target"),
    ("duration as a number", lambda d: _set(d, ["duration"], 20), "duration"),
    ("rate in bytes per second", lambda d: _set(d, ["access", "down_rate"], "4Mbps"), "down_rate"),
    ("size without a unit", lambda d: _set(d, ["traffic", 1, "size"], "5"), "traffic[1].size"),
    ("unknown congestion control", lambda d: _set(d, ["traffic", 1, "cc"], "vegas"), "traffic[1].cc"),
    ("unknown queue discipline", lambda d: _set(d, ["access", "down_queue", "kind"], "sfq"), "kind"),
    ("unknown traffic kind", lambda d: _set(d, ["traffic", 0, "kind"], "voip"), "traffic[0]"),
    ("unknown stack profile", lambda d: _set(d, ["stack"], "linux-9"), "stack"),
    ("jitter mean as a number", lambda d: _set(d, ["access", "down_jitter", "mean"], 0.001), "down_jitter.mean"),
    ("boolean as a string", lambda d: _set(d, ["traffic", 0, "enabled"], "yes"), "traffic[0]"),
]


def test_the_base_scenario_conforms():
    assert schema_errors(BASE) == []


@pytest.mark.parametrize("what,edit,word", MISTAKES, ids=[m[0] for m in MISTAKES])
def test_a_mistake_is_flagged_by_the_schema_and_refused_by_the_parser(what, edit, word):
    doc = edit(BASE)
    errs = schema_errors(doc)
    assert errs, what
    assert any(word in e for e in errs), errs
    # the schema flags only what the parser itself refuses
    with pytest.raises(ScenarioError):
        scenario.expand(doc)


def test_cli_prints_and_writes_the_schema(tmp_path):
    p = run_cli("schema", check=True)
    assert p.stdout == schema_text()
    out = tmp_path / "s.json"
    p = run_cli("schema", "--out", str(out), check=True)
    assert out.read_text() == schema_text() and p.stdout == ""
    assert not [x for x in tmp_path.iterdir() if x.name != "s.json"]  # no temporary file left


@pytest.mark.parametrize("where,why", [("memory://s.json", "memory://"), ("{tmp}", "is a directory"), ("{tmp}/no/such/s.json", "does not exist")])
def test_cli_refuses_bad_outputs_in_one_line(tmp_path, where, why):
    p = run_cli("schema", "--out", where.format(tmp=tmp_path))
    assert p.returncode == 2 and why in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert p.stdout == ""
