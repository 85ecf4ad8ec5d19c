"""tt-metal's sender worker: a link fed by that worker alone carries its block at
``sender_rate`` (the tt_metal option the Wormhole presets' library block sets, per phase)."""

from __future__ import annotations

import pytest

from netsim.algorithms import AlgoOptions
from netsim.errors import NetsimError
from netsim.run import run_collective
from netsim.topology import mesh, torus

from cli_helpers import run_main

S = 64 * 2**20


def _time(op: str, topo, rate=None, **kw) -> float:
    extra = {} if rate is None else {"sender_rate": rate}
    return run_collective(op, topo, "tt_metal", S, alpha=0.0,
                          options=AlgoOptions(extra=extra), **kw).time_s


@pytest.mark.parametrize("rate", [2e9, 5e9, "6.36GB/s", 12.5e9, 40e9])
def test_two_chip_all_gather_runs_at_the_slower_of_worker_and_link(rate):
    # a 2-chip line: each chip's block (S/2) crosses the one link alone, pushed by one worker
    line = mesh((1, 2), bandwidth=12.5e9)
    worker = 6.36e9 if isinstance(rate, str) else rate
    assert _time("allgather", line, rate) == pytest.approx(S / 2 / min(worker, 12.5e9),
                                                           rel=1e-9)


def test_each_phase_has_its_own_rate():
    line = mesh((1, 2), bandwidth=12.5e9)
    # all-reduce = reduce-scatter (S/2 each way) then all-gather (S/2 each way)
    only_ag = {"allgather": 5e9}
    assert _time("allreduce", line, only_ag) == pytest.approx(S / 2 / 12.5e9 + S / 2 / 5e9,
                                                              rel=1e-9)
    assert _time("reducescatter", line, only_ag) == pytest.approx(
        _time("reducescatter", line), rel=1e-12)
    both = {"allgather": 5e9, "reducescatter": "8GB/s"}
    assert _time("reducescatter", line, both) == pytest.approx(S / 2 / 8e9, rel=1e-9)
    assert _time("allreduce", line, 4e9) == pytest.approx(2 * S / 2 / 4e9, rel=1e-9)


def test_a_ring_has_no_link_the_worker_feeds_alone():
    # every link of a ring also carries blocks the routers forward: the link rate holds
    ring8 = torus((8,), bandwidth=12.5e9)
    assert _time("allgather", ring8, 1e9) == pytest.approx(_time("allgather", ring8), rel=1e-12)


def test_on_a_longer_line_the_link_rate_holds():
    # from 3 chips on, routers forward blocks over every link a worker feeds: the busiest
    # link (into an end chip, n-1 blocks) runs at its own rate, as tt-metal's 4-chip line
    # all_gather does (11.7 GB/s per link, SUMMARY_wormhole_b0_bfloat16_6144.md)
    for n in (3, 4, 6):
        line = mesh((1, n), bandwidth=12.5e9)
        assert _time("allgather", line, 6e9) == pytest.approx(_time("allgather", line),
                                                              rel=1e-12)


@pytest.mark.parametrize("value", ["fast", 0, -1, True, {"alltoall": "1GB/s"},
                                   {"allgather": "slow"}])
def test_a_bad_sender_rate_is_refused(value):
    with pytest.raises(NetsimError, match="sender_rate"):
        _time("allgather", mesh((1, 2)), value)


def test_n300_default_runs_the_measured_two_chip_all_gather(capsys):
    # tt-metal SUMMARY_wormhole_b0_bfloat16_6144.md, n = 2 line all_gather at 4 GiB:
    # 337,895.63 us (linkbw 6.36 GB/s); the default command lands within 1%
    code, out, err = run_main(["coll", "allgather", "--topo", "n300", "--size", "4GiB",
                               "--format", "csv"], capsys)
    assert code == 0, err
    header, row = out.strip().splitlines()[:2]
    time_s = float(dict(zip(header.split(","), row.split(",")))["time_s"])
    assert time_s == pytest.approx(337895.63e-6, rel=0.01)


def test_n300_all_reduce_is_its_two_phases_as_measured():
    # the two rates are read off the 2-chip all_gather and reduce_scatter asymptotes; the
    # all_reduce (reduce_scatter + all_gather) then lands on its own published time:
    # SUMMARY_wormhole_b0_bfloat16_6144.md, n = 2 line all_reduce, 2 GiB: 289,320.01 us
    from netsim.run import run_collective as run

    assert run("allreduce", "n300", "default", "2GiB").time_s == pytest.approx(289320.01e-6,
                                                                             rel=0.01)
