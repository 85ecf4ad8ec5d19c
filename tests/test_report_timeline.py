"""Links over time and Gantt charts: the step functions conserve bytes, overlapping ops get
their own lanes, and the errors say what to do."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import simulate
from netsim.errors import InputError
from netsim.report.timeline import (draw_gantt, draw_link_timeline, gantt_bars, link_timeline,
                                    time_unit)
from netsim.schedule import ScheduleBuilder
from netsim.topology import mesh, ring
from netsim.schedule.traffic import all_to_all

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def alltoall_run():
    topo = mesh((3, 3), bandwidth=1e9, latency=1e-6)
    return topo, simulate(topo, all_to_all(9, 1e6), record_timeline=True)


def test_timeline_integrates_to_the_bytes_each_link_carried(alltoall_run):
    topo, result = alltoall_run
    links = list(range(topo.num_links))
    data = link_timeline(result, links)
    carried = (data.values * np.diff(data.edges)).sum(axis=1) * result.link_bandwidth
    assert np.allclose(carried, result.link_bytes, rtol=1e-9, atol=1e-3)
    assert data.values.max() <= 1 + 1e-9 and data.values.min() >= 0
    assert data.edges[0] == 0 and data.edges[-1] == pytest.approx(result.makespan)
    assert np.all(np.diff(data.edges) > 0)
    assert (data.values[:, 0] == 0).all()        # nothing moves during the first latency


def test_draw_link_timeline_picks_the_busiest_links(alltoall_run, tmp_path):
    topo, result = alltoall_run
    data = draw_link_timeline(result, topo, tmp_path / "t.png", top=3)
    util = result.link_utilization
    assert len(data.links) == 3
    assert sorted(util[list(data.links)]) == pytest.approx(sorted(util)[-3:])
    assert (tmp_path / "t.png").read_bytes()[:8] == PNG_MAGIC


def test_timeline_needs_a_recorded_run(tmp_path):
    topo = ring(4)
    b = ScheduleBuilder(4)
    b.send(0, 1, 1e6)
    result = simulate(topo, b.build())
    with pytest.raises(InputError, match="record_timeline=True"):
        draw_link_timeline(result, topo, tmp_path / "t.png")


def _two_phase():
    """Rank 0 sends two messages at once, rank 1 computes then sends."""
    b = ScheduleBuilder(3)
    first = b.send(0, 1, 1e6, tag="phase1")
    b.send(0, 2, 1e6, tag="phase1")
    work = b.compute(1, 1e-4, deps=[first])
    b.send(1, 2, 5e5, deps=[work], tag="phase2")
    return b.build()


def test_gantt_bars_lanes_and_kinds(tmp_path):
    schedule = _two_phase()
    topo = ring(3, bandwidth=1e9)
    result = simulate(topo, schedule)
    bars = draw_gantt(result, schedule, None, tmp_path / "g.png", topology=topo)
    assert len(bars) == 4
    zero = sorted((b for b in bars if b.rank == 0), key=lambda b: b.op)
    assert [b.lane for b in zero] == [0, 1]      # simultaneous sends: two lanes
    compute = next(b for b in bars if b.kind == "compute")
    assert compute.rank == 1 and compute.finish - compute.start == pytest.approx(1e-4)
    later = next(b for b in bars if b.tag == "phase2")
    assert later.lane == 0 and later.start >= compute.finish
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG_MAGIC
    assert gantt_bars(result, schedule) == bars


def test_gantt_refuses_big_runs(tmp_path):
    schedule = all_to_all(80, 1.0)
    topo = mesh((8, 10))
    result = simulate(topo, schedule)
    with pytest.raises(InputError, match="small runs"):
        draw_gantt(result, schedule, None, tmp_path / "g.png")


def test_time_unit():
    assert time_unit(3e-4) == ("us", 1e-6)
    assert time_unit(2.0) == ("s", 1.0)
