"""docs/placement-study.md is executed: its examples are doctests."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

pytest.importorskip("pandas")

PAGE = Path(__file__).resolve().parent.parent / "docs" / "placement-study.md"


def test_the_placement_study_page_runs():
    failures, tried = doctest.testfile(str(PAGE), module_relative=False,
                                       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert tried > 10 and failures == 0
