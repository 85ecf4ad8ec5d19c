"""Collectives on part of a machine: every line of a grid axis at once (``--axis``), or named
endpoints (``--nodes``); per-group times, the slowest group, links shared where groups
cross."""

from __future__ import annotations

import json

import pytest

from netsim.cli import main
from netsim.errors import InputError
from netsim.run import axis_groups, parse_nodes, run_collective, run_groups
from netsim.topology import mesh

B, S = 1e9, 2e6


def test_axis_groups_are_the_lines_of_the_grid():
    topo = mesh((3, 4))
    assert [g.tolist() for g in axis_groups(topo, 0)] == [[0, 4, 8], [1, 5, 9], [2, 6, 10],
                                                          [3, 7, 11]]
    assert [g.tolist() for g in axis_groups(topo, 1)] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                          [8, 9, 10, 11]]
    with pytest.raises(InputError, match=r"grid axis 0..1 of .* got 2"):
        axis_groups(topo, 2)


def test_lines_that_share_no_link_each_take_the_single_line_time():
    """3x4 mesh, all-gather ring on every row: the rows use disjoint links, so each takes
    what one ring alone takes, (n-1)/n S / B."""
    topo = mesh((3, 4), bandwidth=B)
    run = run_groups("allgather", topo, "ring", S, axis_groups(topo, 1), alpha=0.0)
    assert run.group_times == pytest.approx([3 / 4 * S / B] * 3, rel=1e-12)
    assert run.time_s == max(run.group_times) and run.ranks == 4
    alone = run_collective("allgather", topo, "ring", S, placement=[4, 5, 6, 7], alpha=0.0)
    assert alone.time_s == pytest.approx(run.group_times[1], rel=1e-12)


def test_groups_that_cross_share_links_and_the_slowest_is_reported():
    """A 1x6 line, groups {0,2}, {1,3}, {4,5}: all-gather of S, each rank sends S/2 to the
    other. 0->2 and 1->3 both cross link 1->2 (and 2->0, 3->1 cross 2->1): B/2 each, so
    those groups take (S/2)/(B/2) = S/B; {4,5} shares nothing: S/(2B)."""
    topo = mesh((1, 6), bandwidth=B)
    run = run_groups("allgather", topo, "ring", S, [[0, 2], [1, 3], [4, 5]], alpha=0.0)
    assert run.group_times == pytest.approx([S / B, S / B, S / (2 * B)], rel=1e-12)
    record = run.record()
    assert record["groups"] == 3 and record["slowest_group"] == "0_0..0_2"
    with pytest.raises(InputError, match="must not share a node"):
        run_groups("allgather", topo, "ring", S, [[0, 1], [1, 2]])


def test_nodes_by_name_list_or_file(tmp_path):
    topo = mesh((2, 4))
    assert parse_nodes(topo, "0_0, 0_1,1_1 1_0").tolist() == [0, 1, 5, 4]
    path = tmp_path / "nodes.txt"
    path.write_text("# one ring\n0_0\n0_1  # east\n1_1\n1_0\n")
    assert parse_nodes(topo, f"@{path}").tolist() == [0, 1, 5, 4]
    for bad, match in [("0_0,0_9", "has no node '0_9'"), ("0_0,0_0", "named twice"),
                       ("", "no nodes given"), ("@/nonexistent/n.txt", "cannot read")]:
        with pytest.raises(InputError, match=match):
            parse_nodes(topo, bad)
    by_name = run_collective("allreduce", topo, "ring", "1MiB", nodes="0_0,0_1,1_1,1_0")
    by_index = run_collective("allreduce", topo, "ring", "1MiB", placement=[0, 1, 5, 4])
    assert by_name.time_s == by_index.time_s and by_name.ranks == 4


def _cli(capsys, *argv):
    capsys.readouterr()
    try:
        main(list(argv))
        code = 0
    except SystemExit as exit_:
        code = exit_.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_coll_axis_shows_every_line_and_errors_are_one_line(capsys):
    code, out, _ = _cli(capsys, "coll", "allgather", "--topo", "mesh:3x4,bw=1GB/s", "--algo",
                        "ring", "--axis", "0", "--size", "3MB", "--alpha", "0")
    assert code == 0 and "4 lines of 3 ranks along axis 0" in out
    assert "time per line" in out
    code, out, _ = _cli(capsys, "coll", "allgather", "--topo", "mesh:3x4", "--axis", "1",
                        "--size", "1MiB", "--format", "json")
    record = json.loads(out)["records"][0]
    assert record["groups"] == 3 and record["group_times"].count("=") == 3
    code, _, err = _cli(capsys, "coll", "allgather", "--topo", "nvswitch:8", "--axis", "0")
    assert code == 2 and err.count("\n") == 1 and "--axis needs a mesh, torus or ring" in err
    code, _, err = _cli(capsys, "coll", "allgather", "--topo", "mesh:3x4", "--axis", "0",
                        "--ranks", "4")
    assert code == 2 and "one of --ranks, --axis and --nodes" in err
