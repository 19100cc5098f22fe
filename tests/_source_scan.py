"""Reading the project's own sources for the layering and size tests (tests/test_layering.py,
tests/test_sizes.py): Python through `ast`, Rust through a small scanner that blanks comments and
literals and matches braces (no Rust parser is needed for imports and function extents)."""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PY_PACKAGE = ROOT / "python" / "jitterlab"


# ---------------------------------------------------------------------------------------------
# Python


def py_modules() -> dict[str, Path]:
    """Every module of the jitterlab package: dotted name -> file (a package is its __init__.py)."""
    mods = {}
    for f in sorted(PY_PACKAGE.rglob("*.py")):
        parts = f.relative_to(PY_PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f
    return mods


def py_imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The jitterlab modules module `name` imports anywhere in it (top level, in functions, under
    TYPE_CHECKING): `from a import b` names module a.b when b is a module, else module a."""
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the package this module is in
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            for a in node.names:
                sub = f"{mod}.{a.name}"
                out.add(sub if sub in known else mod)
    return {m for m in out if m in known and m != name}


def py_graph() -> dict[str, set[str]]:
    """Import edges between jitterlab's modules. A package importing its own parts (an __init__
    re-exporting them) is structure, not a dependency, and is left out; a part importing its
    package is kept."""
    mods = py_modules()
    known = set(mods)
    return {n: {m for m in py_imports(n, f, known) if not m.startswith(n + ".")} for n, f in mods.items()}


# ---------------------------------------------------------------------------------------------
# Rust

_RUST_TOKENS = re.compile(r"""
    (?P<lcomment>//[^\n]*)
  | (?P<bcomment>/\*)
  | (?P<rawstr>\bb?r(?P<hashes>\#*)")
  | (?P<str>b?"(?:\\.|[^"\\])*")
  | (?P<char>b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])')
""", re.X | re.S)


def rust_blank(text: str) -> str:
    """`text` with comments, strings and character literals replaced by spaces (newlines kept,
    so line numbers stay), nested block comments included."""
    out, i = [], 0
    while True:
        m = _RUST_TOKENS.search(text, i)
        if m is None:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:m.start()])
        if m.group("bcomment"):
            depth, j = 1, m.end()
            while depth and j < len(text):
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            end = j
        elif m.group("rawstr"):
            close = '"' + m.group("hashes")
            end = text.find(close, m.end())
            end = len(text) if end < 0 else end + len(close)
        else:
            end = m.end()
        out.append(re.sub(r"[^\n]", " ", text[m.start():end]))
        i = end


def rust_files() -> list[Path]:
    return sorted(p for p in (ROOT / "crates").glob("*/src/**/*.rs"))


def rust_module_path(f: Path) -> tuple[str, tuple[str, ...]]:
    """(crate directory name, module path) of a source file: src/lib.rs is (), src/a/mod.rs and
    src/a.rs are ("a",)."""
    rel = f.relative_to(ROOT / "crates")
    crate, parts = rel.parts[0], list(rel.parts[2:])
    parts[-1] = parts[-1][:-3]
    if parts[-1] in ("mod", "lib", "main"):
        parts.pop()
    return crate, tuple(parts)


_PATH = re.compile(r"\b(?:(crate)|(super)|(self))((?:\s*::\s*(?:\w+|\{))+)")
_MOD_OPEN = re.compile(r"\bmod\s+(\w+)\s*\{")


def _use_tree(text: str, start: int) -> list[list[str]]:
    """The paths of a `use` tree beginning at text[start] (after `crate::`), braces expanded."""
    paths: list[list[str]] = []

    def walk(i: int, prefix: list[str]) -> int:
        cur = list(prefix)
        while i < len(text):
            c = text[i]
            if c.isspace() or c == ":":
                i += 1
            elif c == "{":
                i += 1
                while True:
                    i = walk(i, cur)
                    while i < len(text) and text[i].isspace():
                        i += 1
                    if i < len(text) and text[i] == ",":
                        i += 1
                        continue
                    if i < len(text) and text[i] == "}":
                        return i + 1
                    return i
            elif c in ",};":
                paths.append(cur)
                return i
            else:
                m = re.compile(r"\w+|\*").match(text, i)
                if m is None:
                    paths.append(cur)
                    return i
                word = m.group(0)
                if word == "as":  # `x as y`: the path ends at x
                    m2 = re.compile(r"\s*\w+").match(text, m.end())
                    paths.append(cur)
                    return m2.end() if m2 else m.end()
                if word != "*":
                    cur = cur + [word]
                i = m.end()
        paths.append(cur)
        return i

    walk(start, [])
    return paths


def rust_graph() -> dict[tuple[str, tuple[str, ...]], set[tuple[str, tuple[str, ...]]]]:
    """Edges between a crate's files from every `crate::`, `super::` and `self::` path in them
    (in `use` items and inline). A path names the deepest file module along it. A parent module
    naming its own submodules (`mod x; pub use x::X;`, a registry) is structure and left out; a
    submodule naming its parent is kept."""
    files = {rust_module_path(f): f for f in rust_files()}
    graph: dict[tuple[str, tuple[str, ...]], set[tuple[str, tuple[str, ...]]]] = {k: set() for k in files}
    for (crate, mpath), f in files.items():
        text = rust_blank(f.read_text())
        # inline modules (`mod tests { … }`): where each begins and ends, for `super::` inside them
        inline: list[tuple[int, int, str]] = []
        for m in _MOD_OPEN.finditer(text):
            depth, j = 1, m.end()
            while depth and j < len(text):
                depth += {"{": 1, "}": -1}.get(text[j], 0)
                j += 1
            inline.append((m.start(), j, m.group(1)))
        for m in _PATH.finditer(text):
            here = list(mpath) + [name for s, e, name in inline if s < m.start() < e]
            if m.group(1):
                base: list[str] = []
            elif m.group(2):
                base = here[:-1]
            else:
                base = here
            # following super::super:: …
            rest_start = m.start(4)
            while True:
                sm = re.compile(r"\s*::\s*super\b").match(text, rest_start)
                if not sm:
                    break
                base, rest_start = base[:-1], sm.end()
            for segs in _use_tree(text, rest_start):
                target = tuple(base)
                full = list(base) + segs
                for k in range(len(base) + 1, len(full) + 1):
                    if (crate, tuple(full[:k])) in files:
                        target = tuple(full[:k])
                    else:
                        break
                t = (crate, target)
                if t in files and t != (crate, mpath) and target[: len(mpath)] != mpath:
                    graph[(crate, mpath)].add(t)
    return graph


def rust_file_name(key: tuple[str, tuple[str, ...]]) -> str:
    """crates/<crate>/src/<path>.rs of a module key, as the tests print it."""
    crate, mpath = key
    for f in rust_files():
        if rust_module_path(f) == key:
            return str(f.relative_to(ROOT))
    return f"crates/{crate}/src/{'/'.join(mpath)}"


@dataclass
class RustFn:
    file: Path
    name: str
    line: int
    lines: int


def rust_functions(f: Path) -> list[RustFn]:
    """Every `fn` with a body in file `f`: its name, first line and length in lines (from the
    line of `fn` to its closing brace)."""
    text = rust_blank(f.read_text())
    out = []
    for m in re.finditer(r"\bfn\s+(\w+)", text):
        # the body's `{` is the first one outside the signature's brackets; `;` first: no body
        depth, j = 0, m.end()
        while j < len(text):
            c = text[j]
            if c in "(<[":
                depth += 1
            elif c in ")>]" and not (c == ">" and text[j - 1] == "-"):
                depth -= 1
            elif c == ";" and depth <= 0:
                j = -1
                break
            elif c == "{" and depth <= 0:
                break
            j += 1
        if j < 0 or j >= len(text):
            continue
        depth, k = 1, j + 1
        while depth and k < len(text):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        first = text.count("\n", 0, m.start()) + 1
        last = text.count("\n", 0, k - 1) + 1
        out.append(RustFn(f, m.group(1), first, last - first + 1))
    return out


def cycles(graph: dict) -> list[list]:
    """The strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list[list] = []
    counter = [0]

    def strong(v: object) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(out)
