"""In-network reduction's chunks 2.. written as copies of chunk 1 shifted (innetwork._tiled):
the schedule of adding every chunk's ops, array for array."""

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms import innetwork
from netsim.topology import nvswitch, parse_topology

FIELDS = ("kind", "src", "dst", "nbytes", "seconds", "dep_ptr", "dep_idx", "tag")


def _both(monkeypatch, op, n, options):
    tiled = build_schedule(op, "innetwork", n, 3e6, options)
    monkeypatch.setattr(innetwork, "TILE", False)
    added = build_schedule(op, "innetwork", n, 3e6, options)
    monkeypatch.setattr(innetwork, "TILE", True)
    return tiled, added


def _assert_same(a, b):
    for field in FIELDS:
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    assert (a.tags, a.extra_nodes, a.num_ranks) == (b.tags, b.extra_nodes, b.num_ranks)
    assert {k: repr(v) for k, v in a.meta.items()} == {k: repr(v) for k, v in b.meta.items()}


@pytest.mark.parametrize("op", ["allreduce", "reducescatter", "allgather"])
@pytest.mark.parametrize("n,planes,chunks,rb", [(4, 1, 3, None), (4, 2, 5, 5e10),
                                                (8, 2, 3, 2e10), (8, 1, 6, None)])
@pytest.mark.parametrize("one_link", [True, False])
def test_tiled_chunks_are_the_added_chunks(monkeypatch, op, n, planes, chunks, rb, one_link):
    topo = nvswitch(n, switches=planes, bandwidth=f"{100 * planes}GB/s", reduce=True,
                    reduce_bandwidth=rb)
    if not one_link:            # a barrier per owner's copies instead of one for all
        monkeypatch.setattr(innetwork, "_one_link_each", lambda *args: False)
    options = AlgoOptions(topology=topo, chunks=chunks, extra={"annotate": False})
    tiled, added = _both(monkeypatch, op, n, options)
    assert tiled.num_ops == added.num_ops > 0
    _assert_same(tiled, added)


@pytest.mark.parametrize("planes", [False, True])
def test_tiled_chunks_on_dgx_h100_with_alike_planes_built_once(monkeypatch, planes):
    topo = parse_topology("dgx-h100")
    extra = {"annotate": False, **({"planes": True} if planes else {})}
    options = AlgoOptions(topology=topo, chunks=16, placement=topo.first_endpoints(8),
                          extra=extra)
    _assert_same(*_both(monkeypatch, "allreduce", 8, options))


def test_annotated_builds_add_every_chunk(monkeypatch):
    """Annotation records each chunk's pieces: no tiling, the pieces are the chunk's."""
    topo = nvswitch(4, switches=1, bandwidth="100GB/s", reduce=True)
    options = AlgoOptions(topology=topo, chunks=3, extra={"annotate": True})
    tiled, added = _both(monkeypatch, "allreduce", 4, options)
    _assert_same(tiled, added)
    assert repr(tiled.data) == repr(added.data) and len(tiled.data) > 0
