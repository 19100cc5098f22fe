"""No import circles between source files (issue 29): in Python, every `import` of a jitterlab
module anywhere in a module (top level, inside functions, under TYPE_CHECKING); in Rust, every
`crate::` / `super::` / `self::` path of a crate's files. A package or parent module naming its own
parts (an __init__ re-exporting them, `mod x;`, a registry) is structure and not counted; a part
naming its parent is. The scanners are checked on hand-made sources first, so a scanner that saw
no edges could not pass these tests by seeing no circles."""
from __future__ import annotations

import pytest

import _source_scan as S

#: Rust circles allowed: none (issue 29 removed cellular <-> link and scenario <-> media/workload).
KNOWN_RUST_CYCLES: set[tuple[str, ...]] = set()


def test_python_scanner_sees_every_kind_of_import(tmp_path, monkeypatch):
    pkg = tmp_path / "jitterlab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from jitterlab import a\n")
    (pkg / "a.py").write_text("def f():\n    from jitterlab.sub import b\n")  # function-level
    (pkg / "sub" / "__init__.py").write_text("from . import b\n")  # a package's own part: structure
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .. import a\n")
    (pkg / "c.py").write_text("import jitterlab.sub as s\nfrom jitterlab.a import f\n")
    monkeypatch.setattr(S, "PY_PACKAGE", pkg)
    g = S.py_graph()
    assert g == {"jitterlab": set(), "jitterlab.a": {"jitterlab.sub.b"}, "jitterlab.sub": set(),
                 "jitterlab.sub.b": {"jitterlab.a"}, "jitterlab.c": {"jitterlab.sub", "jitterlab.a"}}
    assert S.cycles(g) == [["jitterlab.a", "jitterlab.sub.b"]]


def test_rust_scanner_reads_use_trees_inline_paths_and_inline_modules():
    text = S.rust_blank('use crate::{a::X, b::{c::Y, Z as W}};\nfn f() { let s = "crate::q::R"; crate::d::e(); } // crate::z\n')
    assert "crate::q" not in text and "crate::z" not in text and text.count("\n") == 2
    assert S._use_tree("{a::X, b::{c::Y, Z as W}};", 0) == [["a", "X"], ["b", "c", "Y"], ["b", "Z"]]


def test_rust_function_lengths_are_counted_from_fn_to_its_brace(tmp_path):
    f = tmp_path / "x.rs"
    f.write_text("trait T { fn decl(&self) -> u8; }\n"              # no body: not a function here
                 "fn one<'a>(x: &'a str) -> Vec<u8> {\n"            # line 2
                 "    let c = '}'; let s = \"{{\"; /* { */\n"
                 "    if x.is_empty() { vec![] } else { vec![1] }\n"
                 "}\n"                                              # line 5: 4 lines
                 "fn two() -> impl Fn() -> u8 { || 1 }\n")
    got = [(fn.name, fn.line, fn.lines) for fn in S.rust_functions(f)]
    assert got == [("one", 2, 4), ("two", 6, 1)]


def test_cycles_finds_each_strongly_connected_group():
    g = {1: {2}, 2: {3}, 3: {1}, 4: {5}, 5: {4, 6}, 6: set(), 7: {7}}
    assert S.cycles(g) == [[1, 2, 3], [4, 5]]


def test_no_python_import_circles():
    graph = S.py_graph()
    assert sum(map(len, graph.values())) > 100, "the scanner found almost no imports: it is broken"
    assert "jitterlab.tables" in graph["jitterlab.sim"]  # a known edge, seen
    assert S.cycles(graph) == [], "Python modules importing each other in a circle"


def test_no_rust_import_circles():
    graph = S.rust_graph()
    assert sum(map(len, graph.values())) > 100, "the scanner found almost no paths: it is broken"
    found = {tuple(S.rust_file_name(k) for k in c) for c in S.cycles(graph)}
    new = found - KNOWN_RUST_CYCLES
    assert not new, f"Rust files naming each other in a circle: {sorted(new)}"
    gone = KNOWN_RUST_CYCLES - found
    if gone:
        print(f"TODO(lead): these known circles are gone, remove them from KNOWN_RUST_CYCLES: {sorted(gone)}")
    if found:
        pytest.xfail(f"known Rust circles (issue 29, being removed): {sorted(found)}")
