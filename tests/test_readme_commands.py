"""The README's "What you can ask it" block runs as written, in order, in a fresh folder
with the shipped examples, scenarios and measurements beside it (later lines read what
earlier ones wrote: `heatmap r.json`)."""

from __future__ import annotations

import pytest

import re
import shlex
from pathlib import Path

from cli_helpers import run_main

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.search(r"## What you can ask it\n\n```\n(.*?)```",
                  (ROOT / "README.md").read_text(), re.S).group(1)
COMMANDS = [re.split(r"\s+#\s", line)[0].strip() for line in BLOCK.splitlines()
            if line.startswith("netsim ")]


def _writes(command: str) -> bool:
    return any(flag in command.split() for flag in ("-o", "--plot", "--report", "--heatmap",
                                                    "--save-result"))


def test_the_block_has_the_commands():
    assert len(COMMANDS) >= 12


@pytest.mark.slow
def test_readme_commands_run_in_order(tmp_path, capsys, monkeypatch):
    """One test, in the README's order (a later line reads an earlier one's file)."""
    for name in ("examples", "scenarios"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "data").symlink_to(ROOT / "benchmarks" / "data")
    monkeypatch.chdir(tmp_path)
    for command in COMMANDS:
        argv = shlex.split(command)[1:] + (["--overwrite"] if _writes(command) else [])
        code, out, err = run_main(argv, capsys)
        assert code == 0, f"{command}: {err[-2000:]}"
        assert "Traceback" not in err, command
