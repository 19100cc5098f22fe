"""Docstring examples run as tests (pydantic-core style)."""
import doctest

import jitterlab.sim


def test_sim_docstrings():
    res = doctest.testmod(jitterlab.sim, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0


def test_stack_profile_table_in_docs_is_the_builds(root):
    """docs/tcp.md's "Stack profiles" table and sources are what `python -m jitterlab.stacks` makes
    from the current build's profiles (a changed switch that the docs do not show fails here)."""
    from jitterlab import stacks

    text = (root / "docs/tcp.md").read_text()
    begin, end = "<!-- stack-profiles:begin -->\n", "<!-- stack-profiles:end -->"
    assert begin in text and end in text
    assert text.split(begin, 1)[1].split(end, 1)[0] == stacks.markdown()
    assert stacks.default() == "linux-6.18" and set(stacks.names()) >= {"linux-6.18", "linux-3.2", "ns2-sack1"}
