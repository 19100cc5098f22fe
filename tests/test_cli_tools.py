"""`jitterlab examples`, `validate` and `completion`: the shipped examples list, copy and run (each
scenario simulates and its summary prints; the trace link reads the trace shipped beside it);
validate expands, estimates and warns without running; completion scripts come from the parser."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from conftest import ROOT, run_cli

EXAMPLES = ROOT / "python" / "jitterlab" / "examples"


def test_examples_list_and_copy(tmp_path):
    p = run_cli("examples", check=True)
    for name in ("audio-bulk.toml", "web.toml", "aqm-sweep.toml", "iw-sweep.toml", "trace-link.toml", "captures.toml"):
        assert name in p.stdout
    run_cli("examples", str(tmp_path / "ex"), check=True)
    assert (tmp_path / "ex" / "traces" / "cellular-2mbit.down").is_file()
    (tmp_path / "ex" / "web.toml").write_text("# mine\n")
    p = run_cli("examples", str(tmp_path / "ex"), check=True)
    assert "kept 8 already there" in p.stderr and (tmp_path / "ex" / "web.toml").read_text() == "# mine\n"


@pytest.mark.parametrize("name", ["audio-bulk", "web", "trace-link", "captures"])
def test_example_scenarios_run_with_a_summary(tmp_path, name):
    p = run_cli("simulate", str(EXAMPLES / f"{name}.toml"), "--out", str(tmp_path / name), "--set", "duration=12s", "--json", check=True)
    doc = json.loads(p.stdout)
    assert [m["name"] for m in doc["points"][0]["media"]] == ["audio"] and len(doc["points"][0]["tcp"]) == 1
    if name == "captures":
        assert sorted(x.name for x in (tmp_path / name / "pcap").iterdir()) == ["client.pcap", "server.pcap"]


def test_shipped_trace_is_what_trace_generate_writes(tmp_path):
    run_cli("trace", "generate", str(EXAMPLES / "traces" / "cellular-2mbit.toml"), "--duration", "120s", "--seed", "1",
            "--out", str(tmp_path / "t.down"), check=True)
    assert (tmp_path / "t.down").read_bytes() == (EXAMPLES / "traces" / "cellular-2mbit.down").read_bytes()


def test_trace_generate_refuses_a_model_with_the_iub_gate(tmp_path):
    # the gate depends on the load (docs/scenarios.md, "Iub flow control"): no trace can stand for it
    (tmp_path / "m.toml").write_text('mean_rate = "3Mbit"\niub_cycle = "40ms"\n')
    p = run_cli("trace", "generate", str(tmp_path / "m.toml"), "--duration", "10s", "--seed", "1", "--out", str(tmp_path / "t"))
    assert p.returncode == 2 and not (tmp_path / "t").exists()
    assert p.stderr.strip().endswith("m.toml: iub_cycle: the Iub flow-control gate depends on the load, so this model has no trace "
                                     "form (set iub_cycle = \"0ms\" to write or replay its trace)"), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1


def test_validate_scenario_and_sweep(tmp_path):
    p = run_cli("validate", str(ROOT / "scenarios" / "audio-bulk-access.toml"), check=True)
    assert "a valid scenario (audio-bulk-access)" in p.stdout and "cost of a run: about" in p.stdout
    doc = json.loads(run_cli("validate", str(EXAMPLES / "aqm-sweep.toml"), "--json", check=True).stdout)
    assert doc["kind"] == "sweep" and doc["runs"] == 12 and len(doc["points"]) == 4
    # the expansion is the core's: base units
    assert doc["expanded"]["duration_ns"] == 20_000_000_000
    assert doc["cost_total"]["events"] == pytest.approx(12 * doc["cost"]["events"], rel=0.5)
    p = run_cli("validate", str(ROOT / "scenarios" / "audio-bulk-access.toml"), "--max-events", "1000")
    assert p.returncode == 0 and "warning: the scenario would take about" in p.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nduration = "1s"\n[access]\ndown_rat = "1Mbit"\n')
    p = run_cli("validate", str(bad))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "access." in p.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_completes_commands_and_options(tmp_path):
    script = tmp_path / "c.sh"
    script.write_text(run_cli("completion", "bash", check=True).stdout)
    probe = (f"source {script}; COMP_WORDS=(jitterlab val); COMP_CWORD=1; _jitterlab; echo ${{COMPREPLY[@]}}; "
             "COMP_WORDS=(jitterlab sweep f.toml --exe); COMP_CWORD=3; _jitterlab; echo ${COMPREPLY[@]}; "
             "COMP_WORDS=(jitterlab sweep --executor ''); COMP_CWORD=3; _jitterlab; echo ${COMPREPLY[@]}")
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True).stdout.splitlines()
    assert out == ["validate", "--executor", "local dask"]
    assert run_cli("completion", "zsh", check=True).stdout.startswith("autoload -U +X bashcompinit && bashcompinit")


def test_every_help_shows_examples_of_itself():
    from jitterlab import cli

    top = run_cli("--help", check=True).stdout
    assert "examples:\n  jitterlab examples" in top
    for name in cli.COMMANDS:
        out = run_cli(name, "--help", check=True).stdout
        ex = out.split("examples:\n", 1)[1].splitlines()
        mine = [line for line in ex if f"jitterlab {name}" in line]
        assert mine, (name, ex)  # at least one example of the command itself


def test_a_command_parses_with_its_own_parser_alone_as_with_every_command():
    """`cli.main` builds only the named command's parser: the same help, the same parsed options,
    the same usage errors as the full parser, and no other command's module imported."""
    import contextlib
    import io
    import sys

    from jitterlab import cli

    def parse(parser, argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                ns = vars(parser.parse_args(argv))
                ns.pop("_run")
                return ns, out.getvalue(), err.getvalue()
            except SystemExit as e:
                return e.code, out.getvalue(), err.getvalue()

    full = cli.build_parser()
    for name in cli.COMMANDS:
        for argv in ([name, "--help"], [name, "--no-such-option"], [name, "a", "b", "c", "d"], [name, "x.toml", "--out", "o"]):
            assert parse(cli.build_parser(name), argv) == parse(full, argv), argv
    code = ("import sys; from jitterlab import cli; cli.main(['sweep', 'nosuch.toml', '--out', 'o']); "
            "print(sorted(m for m in sys.modules if m.startswith('jitterlab.commands.')))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.split() == ["['jitterlab.commands.options',", "'jitterlab.commands.sweep']"]
    assert "sweep: error: nosuch.toml" in p.stderr
