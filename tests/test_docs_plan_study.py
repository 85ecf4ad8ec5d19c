"""docs/plan-study.md is executed: its examples are doctests (the planner's figures)."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parent.parent / "docs" / "plan-study.md"


@pytest.mark.slow
def test_the_plan_study_page_runs():
    failures, tried = doctest.testfile(str(PAGE), module_relative=False,
                                       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert tried > 10 and failures == 0
