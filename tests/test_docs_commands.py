"""The commands in README.md and docs/ stay true: every `netsim ...` line of a code block
names a command and options that exist, and the input files it reads ship with netsim
(or are written by an earlier line of the same page)."""

from __future__ import annotations

import shlex
import warnings

import click
import pytest

from docs_lines import COMMANDS, ROOT
from netsim.cli import cli

#: Options whose value is a file the command reads.
READS = {"--measured", "--schedule", "--minus"}
#: Commands whose first argument is a file they read.
READS_ARG = {"flows", "run", "sweep", "heatmap", "validate"}
#: Options whose value is a file the command writes.
WRITES = {"-o", "--output", "--save-result", "--plot", "--report", "--heatmap"}


def test_there_are_commands_to_check():
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("page,line", COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in COMMANDS])
def test_documented_command_parses_and_its_inputs_exist(page, line):
    words = shlex.split(line)[1:]
    try:
        ctx = cli.make_context("netsim", list(words))
        with warnings.catch_warnings():      # click 8.2 renames protected_args; both work
            warnings.simplefilter("ignore", DeprecationWarning)
            name, *rest = ctx.protected_args + ctx.args
        command = cli.get_command(ctx, name)
        assert command is not None, f"{page}: no command {name!r}: {line}"
        command.make_context(name, rest, parent=ctx)
    except click.exceptions.Exit:
        return
    except click.ClickException as err:
        pytest.fail(f"{page}: {line}: {err.format_message()}")
    written = {w for page_, l in COMMANDS if page_ == page
               for a, w in zip(shlex.split(l), shlex.split(l)[1:]) if a in WRITES}
    reads = [w for a, w in zip(rest, rest[1:]) if a in READS]
    if name in READS_ARG and rest and not rest[0].startswith("-"):
        reads.append(rest[0])
    for path in reads:
        path = path.split(",")[0]
        if path in written or "%" in path:
            continue
        assert (ROOT / path).exists() or (ROOT / "collectives" / path).exists(), \
            f"{page}: {line}: reads {path}, which does not ship"
