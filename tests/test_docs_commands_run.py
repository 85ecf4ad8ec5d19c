"""Every `netsim ...` line of a code block in README.md and docs/ runs as written (in a
folder holding the shipped examples, scenarios, collectives and measurements, each page's
lines in order, so that a line may read what an earlier one wrote) and exits 0.

The slow tier: a few minutes in all (the pages ask for full sweeps and searches)."""

from __future__ import annotations

import shlex

import pytest

from cli_helpers import run_main
from docs_lines import COMMANDS, ROOT

SHIPPED = ("examples", "scenarios", "collectives", "benchmarks", "topologies", "tests")
PAGES = sorted({page for page, _ in COMMANDS})


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_every_documented_command_runs(page, tmp_path, monkeypatch, capsys):
    for name in SHIPPED:
        (tmp_path / name).symlink_to(ROOT / name)
    monkeypatch.chdir(tmp_path)
    failed = []
    for page_, line in COMMANDS:
        if page_ != page:
            continue
        code, _, err = run_main(shlex.split(line)[1:], capsys)
        if code != 0:
            failed.append(f"{line}\n    exit {code}: {err.strip().splitlines()[-1:]}")
    assert not failed, f"{page}:\n" + "\n".join(failed)
