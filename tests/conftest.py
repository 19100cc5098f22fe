import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def root() -> Path:
    return ROOT


def run_cli(*args: str, check: bool = False) -> subprocess.CompletedProcess:
    """Runs the installed `jitterlab` entry point of this virtualenv."""
    exe = Path(sys.executable).parent / "jitterlab"
    p = subprocess.run([str(exe), *args], capture_output=True, text=True, cwd=ROOT, env={**os.environ})
    if check and p.returncode != 0:
        raise AssertionError(f"jitterlab {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p
