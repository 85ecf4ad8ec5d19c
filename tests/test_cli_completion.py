"""Shell completion of op, preset and algorithm names (click shell_complete= callbacks)."""

from __future__ import annotations

import click
import pytest
from click.shell_completion import ShellComplete

from netsim.algorithms import OPS, algorithms_for
from netsim.cli import cli
from netsim.cli.options import complete_algo, complete_op, complete_topo
from netsim.topology import preset_names


def values(items):
    return [item.value for item in items]


def test_op_names():
    assert values(complete_op(None, None, "")) == list(OPS)
    assert values(complete_op(None, None, "red")) == [o for o in OPS if o.startswith("red")]
    assert values(complete_op(None, None, "nope")) == []


def test_presets_then_files():
    items = complete_topo(None, None, "galaxy")
    assert values(items)[:-1] == [p for p in preset_names() if p.startswith("galaxy")]
    assert len(items) >= 2 and items[-1].type == "file"        # a YAML machine still completes


def test_algorithms_follow_the_op_on_the_command_line():
    ctx = click.Context(click.Command("coll"))
    ctx.params["op"] = "alltoall"
    names = values(complete_algo(ctx, None, ""))
    assert names == ["auto", *[a.name for a in algorithms_for("alltoall")]]
    everything = {a.name for op in OPS for a in algorithms_for(op)}
    assert set(values(complete_algo(None, None, ""))) == everything | {"auto"}


@pytest.mark.parametrize("args, incomplete, expected", [
    (["coll"], "allr", ["allreduce"]),
    (["compare"], "allg", ["allgather"]),
    (["coll", "allreduce", "--topo"], "dgx-b", ["dgx-b200"]),
    (["place", "--topo"], "n30", ["n300"]),
])
def test_the_commands_use_the_callbacks(args, incomplete, expected):
    complete = ShellComplete(cli, {}, "netsim", "_NETSIM_COMPLETE")
    got = [item.value for item in complete.get_completions(args, incomplete)
           if item.type == "plain"]
    assert got == expected


def test_algo_option_of_coll_completes_that_ops_algorithms():
    complete = ShellComplete(cli, {}, "netsim", "_NETSIM_COMPLETE")
    got = [item.value for item in complete.get_completions(["coll", "broadcast", "--algo"], "")]
    assert got == ["auto", *[a.name for a in algorithms_for("broadcast")]]
