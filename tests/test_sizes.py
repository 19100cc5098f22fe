"""Room sizes (issue 29): no Python or Rust source file over 900 lines, every file over 600 lines
says why in its first lines (a line "Over 600 lines: <why>" in its opening docstring or comment),
and no function over 150 lines (Python through ast; Rust from `fn` to its closing brace, see
tests/_source_scan.py). The counting is checked on hand-made files first."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import _source_scan as S

MAX_FILE = 900
EXPLAIN_FILE = 600
MAX_FUNCTION = 150
#: How far down a file's reason may be: its opening docstring or comment.
HEAD_LINES = 30
REASON = re.compile(r"(?i)\bover 600 lines(:| because)\s*\S{3,}")

#: Rust files and functions allowed over the limits: none (issue 29 split the rest).
ALLOWED_RUST_FILES: set[str] = set()
ALLOWED_RUST_FUNCTIONS: set[tuple[str, str]] = set()


def python_files() -> list[Path]:
    out: list[Path] = []
    for d in ("python", "tests", "scripts", "bench", "fuzz"):
        out += sorted(p for p in (S.ROOT / d).rglob("*.py") if ".venv" not in p.parts)
    return out


def rust_files() -> list[Path]:
    return sorted(p for d in ("crates", "fuzz") for p in (S.ROOT / d).rglob("*.rs") if "target" not in p.parts)


def rel(p: Path) -> str:
    return str(p.relative_to(S.ROOT)) if p.is_relative_to(S.ROOT) else str(p)


def file_problems(path: Path) -> list[str]:
    """Why `path` breaks the file rules (nothing when it keeps them)."""
    lines = path.read_text().splitlines()
    if len(lines) > MAX_FILE:
        return [f"{rel(path)}: {len(lines)} lines (at most {MAX_FILE})"]
    if len(lines) > EXPLAIN_FILE and not REASON.search("\n".join(lines[:HEAD_LINES])):
        return [f"{rel(path)}: {len(lines)} lines and no 'Over 600 lines: <why>' in its first {HEAD_LINES} lines"]
    return []


def python_functions(path: Path) -> list[tuple[str, int]]:
    """(qualified name, lines from `def` to its last line) of every function and method."""
    out = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    out.append((name, child.end_lineno - child.lineno + 1))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(ast.parse(path.read_text(), str(path)), "")
    return out


def test_the_counts_on_hand_made_files(tmp_path):
    short = tmp_path / "short.py"
    short.write_text("x = 1\n" * EXPLAIN_FILE)
    long_ = tmp_path / "long.py"
    long_.write_text("x = 1\n" * (EXPLAIN_FILE + 1))
    told = tmp_path / "told.py"
    told.write_text('"""A table.\n\nOver 600 lines: one generated table, split it and it reads worse."""\n' + "x = 1\n" * 700)
    huge = tmp_path / "huge.py"
    huge.write_text('"""Over 600 lines: a reason does not lift the hard limit."""\n' + "x = 1\n" * MAX_FILE)
    assert file_problems(short) == [] and file_problems(told) == []
    assert "no 'Over 600 lines" in file_problems(long_)[0]
    assert f"{MAX_FILE + 1} lines (at most {MAX_FILE})" in file_problems(huge)[0]
    f = tmp_path / "f.py"
    f.write_text("class A:\n    def m(self):\n        def inner():\n            pass\n        return 1\n\n\ndef g():\n    pass\n")
    assert python_functions(f) == [("A.m", 4), ("A.m.inner", 2), ("g", 2)]


def test_no_file_too_long_or_long_without_a_reason():
    files = python_files() + rust_files()
    assert len(files) > 150, "found almost no source files: the walk is broken"
    problems = [p for f in files for p in file_problems(f) if not (f.suffix == ".rs" and rel(f) in ALLOWED_RUST_FILES)]
    assert problems == [], "\n".join(problems)
    still = sorted(rel(f) for f in files if rel(f) in ALLOWED_RUST_FILES and file_problems(f))
    print(f"TODO(lead): Rust files still over the limits, allowed for now: {still}")
    done = sorted(ALLOWED_RUST_FILES - set(still))
    if done:
        print(f"TODO(lead): no longer over the limits, remove from ALLOWED_RUST_FILES: {done}")


def test_no_python_function_over_150_lines():
    long_ = [f"{rel(f)}: {name} {n} lines" for f in python_files() for name, n in python_functions(f) if n > MAX_FUNCTION]
    assert long_ == [], "\n".join(long_)


def test_no_rust_function_over_150_lines():
    fns = [fn for f in rust_files() for fn in S.rust_functions(f)]
    assert len(fns) > 1000, "found almost no Rust functions: the scan is broken"
    long_ = {(rel(fn.file), fn.name): fn.lines for fn in fns if fn.lines > MAX_FUNCTION}
    new = {k: v for k, v in long_.items() if k not in ALLOWED_RUST_FUNCTIONS}
    assert not new, "\n".join(f"{f}: fn {n} {v} lines (at most {MAX_FUNCTION})" for (f, n), v in sorted(new.items()))
    print(f"TODO(lead): Rust functions still over {MAX_FUNCTION} lines, allowed for now: {sorted(long_)}")
    done = sorted(ALLOWED_RUST_FUNCTIONS - set(long_))
    if done:
        print(f"TODO(lead): no longer over the limit, remove from ALLOWED_RUST_FUNCTIONS: {done}")
