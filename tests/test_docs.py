"""Docstring examples run as tests (pydantic-core style)."""
import doctest

import jitterlab.sim


def test_sim_docstrings():
    res = doctest.testmod(jitterlab.sim, optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
