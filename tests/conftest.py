import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


#: Files whose tests run the testbed in real time (marked `realtime`, with the two tests that carry
#: the mark themselves): `run-tests` runs them alone, after the CPU-bound rest ran on every core, so
#: that no other test steals the CPU a delay line measures.
REALTIME_FILES = {"test_bbr_testbed.py", "test_testbed_aqm.py", "test_testbed_rtc.py", "test_testbed_runs.py",
                  "test_rmcat_testbed_run.py"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in REALTIME_FILES:
            item.add_marker(pytest.mark.realtime)


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


#: the trace that ships with jitterlab (`jitterlab trace generate`: examples/traces/cellular-2mbit.toml)
SHIPPED_TRACE = ROOT / "python" / "jitterlab" / "examples" / "traces" / "cellular-2mbit.down"
#: Mahimahi's traces (GPL data: not shipped): Debian's mahimahi-traces package, which
#: scripts/install-references.sh installs (the validation scenarios name this directory), else
#: ../shared/traces beside a checkout (the same files)
MAHIMAHI = Path("/usr/share/mahimahi/traces")


def mahimahi_trace(name: str) -> Path:
    """Mahimahi's trace `name` from Debian's package, else from ../shared (that path when neither has it)."""
    shared = ROOT.parent / "shared" / "traces" / name
    return MAHIMAHI / name if (MAHIMAHI / name).is_file() or not shared.is_file() else shared


UMTS = mahimahi_trace("TMobile-UMTS-driving.down")


def umts_or_shipped() -> Path:
    """Mahimahi's UMTS trace when ../shared has it, else the shipped trace: a test of trace links
    runs on a fresh clone too."""
    return UMTS if UMTS.is_file() else SHIPPED_TRACE


def trace_mean_bps(path: Path) -> float:
    """A Mahimahi trace's mean capacity: 1504-byte opportunities over its period (the last stamp)."""
    stamps = path.read_text().split()
    return len(stamps) * 1504 * 8 / (int(stamps[-1]) / 1000)


def trace_fallback(path: Path) -> dict[str, str]:
    """Overrides putting the shipped trace in place of every trace file a scenario names that is
    absent here ({} when all are present)."""
    import tomllib

    out: dict[str, str] = {}

    def walk(node: object, where: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                here = f"{where}.{k}" if where else k
                if (k == "trace" or k.endswith("_trace")) and isinstance(v, str) and not (path.parent / v).is_file():
                    out[here] = str(SHIPPED_TRACE)
                else:
                    walk(v, here)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    walk(tomllib.loads(path.read_text()), "")
    return out
