"""Every entry of scripts/mutants.py still names text that exists, once, in its file.

A refactor that moves or rewrites the code an entry names would otherwise turn that mutant into a
silent no-op: mutants.py would "apply" nothing and the rule would look pinned while nothing pins it.
(Running the mutants themselves takes minutes each; `python3 scripts/mutants.py` does that.)
"""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mutants() -> list[tuple]:
    spec = importlib.util.spec_from_file_location("mutants", ROOT / "scripts" / "mutants.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return list(mod.MUTANTS)


def test_every_mutant_names_text_found_once():
    entries = _mutants()
    assert len(entries) > 50, "the mutants list is almost empty: the loader is broken"
    problems = []
    for name, file, original, mutated, *_ in entries:
        path = ROOT / file
        if not path.is_file():
            problems.append(f"{name}: {file} does not exist")
            continue
        n = path.read_text().count(original)
        if n != 1:
            problems.append(f"{name}: its original text occurs {n} times in {file}")
        if original == mutated:
            problems.append(f"{name}: the mutant changes nothing")
    assert problems == [], "\n".join(problems)


def test_names_are_unique():
    names = [e[0] for e in _mutants()]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})
