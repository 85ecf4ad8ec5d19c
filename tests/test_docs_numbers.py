"""The figures docs/placement.md quotes next to its commands are what the tool gives today:
each table of section 8 is read from the page and held against the scenario it names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from netsim.run.scenarios.scenario import load_scenario, run_scenario

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "placement.md").read_text()
SECTION = PAGE[PAGE.index("## 8. Measured"):]


def _steps(name: str) -> dict[str, dict[str, float]]:
    """job -> strategy -> step time (s) of ``scenarios/NAME``."""
    outcome = run_scenario(load_scenario(ROOT / "scenarios" / name))
    return {job.name: {r["strategy"]: r["step_s"] for r in job.records}
            for job in outcome.jobs}


def _seconds(text: str) -> float:
    value, unit = re.match(r"([0-9.]+) (ms|s)", text.strip()).groups()
    return float(value) * (1e-3 if unit == "ms" else 1.0)


def _table(after: str) -> list[list[str]]:
    """The rows (cells) of the first Markdown table after the text ``after``."""
    lines = SECTION[SECTION.index(after):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]                              # past the header and its rule


def test_the_decode_table_is_todays():
    steps = _steps("placement-llama70b-decode-galaxy.yaml")["llama70b-decode"]
    rows = _table("Llama-70B-like decode")
    assert {row[0].split()[0] for row in rows} == set(steps)
    for row in rows:
        quoted = _seconds(row[1])
        assert steps[row[0].split()[0]] == pytest.approx(quoted, rel=6e-4), row


def test_the_training_tables_are_todays():
    galaxy = _steps("placement-training-galaxy.yaml")
    rows = {row[0]: row for row in _table("Training, Llama-70B-like")}
    for job, label in (("train-70b-galaxy", "galaxy-wh"),
                       ("train-70b-dgx-h100-cluster", "4 x DGX H100 (rows = servers)")):
        for cell, strategy in zip(rows[label][1:], ("row_major", "column_major", "tiles",
                                                    "search")):
            assert galaxy[job][strategy] == pytest.approx(_seconds(cell), rel=2e-3), \
                (job, strategy)
    t3000 = _steps("placement-training-t3000.yaml")["train-8b-t3000"]
    sentence = SECTION[SECTION.index("Training an 8B model"):][:400]
    quoted = {name: _seconds(value) for name, value in
              re.findall(r"(row_major|tiles|snake) ([0-9.]+ m?s)", sentence)}
    assert set(quoted) == {"row_major", "tiles", "snake"}
    for name, value in quoted.items():
        assert t3000[name] == pytest.approx(value, rel=3e-3), name
