"""The type stub python/jitterlab/_native.pyi names exactly what the native module exports."""
import ast
from pathlib import Path

import jitterlab._native as native

STUB = Path(__file__).resolve().parents[1] / "python" / "jitterlab" / "_native.pyi"


def stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_and_module_agree():
    exported = {n for n in dir(native) if not n.startswith("_")} | {"__version__"}
    stub = stub_names()
    assert stub - exported == set(), f"in the stub but not in the module: {sorted(stub - exported)}"
    assert exported - stub == set(), f"exported but missing from the stub: {sorted(exported - stub)}"


def _run_module(*args: str) -> "subprocess.CompletedProcess[str]":
    import importlib.util
    import subprocess
    import sys

    import pytest

    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (scripts/requirements.txt installs it)")
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=STUB.parents[2], timeout=600)


def test_stubtest_native():
    """The stub's signatures match the compiled module (PyO3 classes: __new__, @final)."""
    p = _run_module("mypy.stubtest", "jitterlab._native")
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]


def test_mypy_package():
    """The package ships py.typed, so its annotations must check (config: pyproject.toml [tool.mypy])."""
    p = _run_module("mypy", "-p", "jitterlab")
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
