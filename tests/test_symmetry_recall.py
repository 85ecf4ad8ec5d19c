"""engine.symmetry recalls an earlier search when the graph is the same and the attributes
split the elements alike (a size sweep's same schedule at another size): the classes are
then those a fresh search finds, array for array; any other split is searched afresh."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netsim.algorithms import build_schedule
from netsim.algorithms.options import AlgoOptions
from netsim.engine import route_schedule, symmetry
from netsim.topology import torus

pytest.importorskip("numba")

TOPO = torus((4, 4), bandwidth=1e9, latency=1e-7)


@pytest.fixture(autouse=True)
def compiled_and_empty(monkeypatch):
    monkeypatch.setattr(symmetry, "COMPILED_AFTER", 0)
    monkeypatch.setattr(symmetry, "_recalled", [])


def _search(schedule, not_before=None):
    routes = route_schedule(TOPO, schedule, np.asarray(TOPO.endpoints))
    return symmetry._find_compiled(symmetry._compiled(0), schedule, routes, TOPO.bandwidth,
                                   not_before, 0.0)


def _fresh(schedule, not_before=None):
    kept = list(symmetry._recalled)
    symmetry._recalled.clear()
    try:
        return _search(schedule, not_before)
    finally:
        symmetry._recalled[:] = kept


def _ring(size: float):
    return build_schedule("allreduce", "ring", 16, size, AlgoOptions(chunks=3, gamma=1e9))


def _equal(a, b) -> bool:
    if a is None or b is None:          # no classes (too many, say): both or neither
        return a is None and b is None
    return all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("op", "sub", "link"))


@pytest.mark.parametrize("factor", [4.0, 3.0, 0.5])
def test_the_same_schedule_at_another_size_recalls_what_a_fresh_search_finds(factor):
    first = _search(_ring(1e6))
    assert first is not None
    other = _ring(1e6 * factor)
    recalled = _search(other)
    assert recalled is first                       # recalled, not searched
    assert _equal(recalled, _fresh(other))


def test_attributes_that_split_differently_are_searched_afresh():
    base = _ring(1e6)
    first = _search(base)
    # one send's bytes apart: its class splits
    nbytes = base.nbytes.copy()
    nbytes[np.flatnonzero(base.nbytes > 0)[5]] *= 3.0
    odd = replace(base, nbytes=nbytes)
    got = _search(odd)
    assert got is not first and _equal(got, _fresh(odd))
    # and back: two bytes values of the last search map onto one (coarser start colours)
    again = _search(replace(base, nbytes=base.nbytes * 2.0))
    assert again is not got and _equal(again, first)
    # release floors that tell ops apart
    floors = np.where(np.arange(base.num_ops) % 2 == 0, 1e-4, 0.0)
    got = _search(base, floors)
    assert got is not first and _equal(got, _fresh(base, floors))


def test_another_graph_is_not_recalled():
    first = _search(_ring(1e6))
    other = build_schedule("allreduce", "ring", 16, 1e6, AlgoOptions(chunks=2, gamma=1e9))
    got = _search(other)
    assert got is not first and _equal(got, _fresh(other))


def test_a_search_is_kept_while_its_graph_fits_its_share_of_the_room(monkeypatch):
    """Kept by memory, not by a fixed size: a graph within RECALL_MAX_SHARE of what the
    process may still add is recalled; with less room it is searched again."""
    import netsim.budget as budget

    schedule = _ring(1e6)
    routes = route_schedule(TOPO, schedule, np.asarray(TOPO.endpoints))
    graph_bytes = 8 * (schedule.dep_ptr.size + schedule.dep_idx.size + routes.sub_req.size
                       + routes.path_ptr.size + routes.path_links.size)
    monkeypatch.setattr(budget, "memory_room",
                        lambda: int(1.5 * graph_bytes / symmetry.RECALL_MAX_SHARE))
    first = _search(schedule)
    assert _search(_ring(2e6)) is first
    symmetry._recalled.clear()
    monkeypatch.setattr(budget, "memory_room",
                        lambda: int(0.5 * graph_bytes / symmetry.RECALL_MAX_SHARE))
    first = _search(schedule)
    again = _search(_ring(2e6))
    assert again is not first and _equal(again, first) and not symmetry._recalled
