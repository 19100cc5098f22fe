"""The README's snippets run as written: its Python block and its report commands (the quick start's
`reproduce`/`run-tests` and the wheel build have tests of their own: test_presets, test_wheel), in a
scratch directory beside a link to the shipped scenarios."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import ROOT

README = (ROOT / "README.md").read_text()


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _scratch(tmp_path: Path) -> Path:
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    (tmp_path / "python").symlink_to(ROOT / "python")
    return tmp_path


def test_python_snippet_runs(tmp_path):
    (code,) = _blocks("python")
    d = _scratch(tmp_path)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=d, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (d / "out" / "py-bulk" / "manifest.json").is_file()
    assert p.stdout.rstrip().endswith("out/py-aqm/report/report.html")


def test_report_commands_run(tmp_path):
    block = next(b for b in _blocks("sh") if "./jitterlab report" in b)
    d = _scratch(tmp_path)
    exe = str(Path(sys.executable).parent / "jitterlab")
    for line in block.strip().splitlines():
        cmd = line.split("  #")[0].strip().replace("./jitterlab", exe, 1)
        p = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=d, timeout=600, env={**os.environ})
        assert p.returncode == 0, (cmd, p.stderr[-2000:])
    assert (d / "out" / "buffer-aqm" / "report" / "report.html").is_file() and (d / "out" / "cmp" / "report.html").is_file()


def test_the_trace_the_readme_names_ships():
    for path in re.findall(r"trace:([\w./-]+)|`(python/jitterlab/examples/traces/[\w.-]+)`", README):
        p = next(x for x in path if x)
        if p.startswith("PATH"):
            continue
        assert (ROOT / p).is_file(), p


def test_quick_start_is_the_two_commands_and_ci_runs_the_second():
    """The README's first section is a quick start of exactly two commands: the main job
    (PAM 2013 on the simulator) and every test; CI runs that same test command."""
    text = README
    sections = [line for line in text.splitlines() if line.startswith("## ")]
    assert sections[0] == "## Quick start", sections[:3]
    body = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = body.split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["./jitterlab reproduce pam2013", "./run-tests"]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "exec ./run-tests" in ci
