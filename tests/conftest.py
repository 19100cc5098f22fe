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


def testbed_skip_reason() -> str | None:
    """Why the testbed cannot run here (None when it can): root, ip/tc/tcpdump, network namespaces
    and /dev/net/tun are needed."""
    import shutil

    if os.geteuid() != 0:
        return "the testbed needs root"
    for tool in ("ip", "tc", "tcpdump"):
        if shutil.which(tool) is None:
            return f"`{tool}` is not installed"
    name = f"jl-probe-{os.getpid()}"
    p = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if p.returncode != 0:
        return f"network namespaces are unavailable: {p.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing"
    return None
