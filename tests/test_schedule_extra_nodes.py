"""Switch ranks of in-network algorithms are a typed Schedule field, kept by every transform."""

import numpy as np

from netsim.schedule import ScheduleBuilder, concurrent, schedule_from_dict, sequential


def _with_switch(n: int, node: int):
    b = ScheduleBuilder(n + 1)
    b.send(0, n, 10.0)
    b.send(n, 1, 10.0)
    from dataclasses import replace
    return replace(b.build(), extra_nodes=(node,))


def test_extra_nodes_survive_relabel_files_and_merge():
    s = _with_switch(2, 7)
    assert s.extra_nodes == (7,)
    assert s.relabel([2, 0, 1]).extra_nodes == (7,)
    back = schedule_from_dict(s.to_dict())
    assert back.extra_nodes == (7,) and s.to_dict()["extra_nodes"] == [7]
    assert np.array_equal(back.src, s.src) and np.array_equal(back.dst, s.dst)
    both = concurrent(s, _with_switch(2, 9))
    assert both.extra_nodes == (7, 9)
    assert sequential(s, s).extra_nodes == (7, 7)


def test_a_builder_passes_its_switch_ranks_on():
    b = ScheduleBuilder(3, extra_nodes=[5])
    b.send(0, 2, 1.0)
    s = b.build()
    assert s.extra_nodes == (5,) and "extra_placement" not in s.meta


def test_innetwork_allreduce_places_its_switches():
    from netsim.algorithms import AlgoOptions, build_schedule
    from netsim.topology import parse_topology

    topo = parse_topology("dgx-h100")
    n = topo.num_endpoints
    s = build_schedule("allreduce", "innetwork", n, 1e6, AlgoOptions(topology=topo))
    assert len(s.extra_nodes) == s.num_ranks - n
    assert all(topo.is_switch[node] for node in s.extra_nodes)
