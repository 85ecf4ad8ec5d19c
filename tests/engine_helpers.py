"""Small builders shared by the engine tests: a line of links, hand-made routes, random
walks over a topology's links and random connected machines."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from hypothesis import strategies as st

from netsim.topology.model import TopologyBuilder


def chain_topology(bandwidths, latencies=None, name="chain"):
    """Nodes n0..nk joined by one directed link each (n_i -> n_{i+1}), ids 0..k-1."""
    latencies = latencies if latencies is not None else [0.0] * len(bandwidths)
    b = TopologyBuilder(name)
    nodes = [b.add_node(f"n{i}") for i in range(len(bandwidths) + 1)]
    for i, (bw, lat) in enumerate(zip(bandwidths, latencies)):
        b.add_link(nodes[i], nodes[i + 1], bw, lat, name=f"l{i}")
    return b.build()


def explicit_routes(topology, paths):
    """A Routes-shaped object: one sub-flow per request on the given link-id path."""
    lengths = np.array([len(p) for p in paths], dtype=np.int64)
    path_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    links = np.array([l for p in paths for l in p], dtype=np.int64)
    n = len(paths)
    latency = np.array([topology.latency[list(p)].sum() if p else 0.0 for p in paths])
    return SimpleNamespace(src=np.zeros(n, dtype=np.int64), dst=np.ones(n, dtype=np.int64),
                           sub_ptr=np.arange(n + 1), sub_req=np.arange(n),
                           sub_frac=np.ones(n), path_ptr=path_ptr, path_links=links,
                           sub_latency=latency)


def random_walk(topo, rng, max_links: int) -> tuple[int, list[int]]:
    """A random path of 1 to ``max_links`` - 1 distinct links from a random node, following
    links out of where it is (``rng``: a random.Random): (its last node, its link ids)."""
    at, used, path = rng.randrange(topo.num_nodes), set(), []
    for _ in range(rng.randrange(1, max_links)):
        choices = [l for l in np.flatnonzero(topo.link_src == at).tolist() if l not in used]
        if not choices:
            break
        link = rng.choice(choices)
        used.add(link)
        path.append(link)
        at = int(topo.link_dst[link])
    return at, path


def lognormal_alltoall(shape, seed):
    """A mesh and an all-to-all on it with log-normal sizes around 100 kB."""
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    n = shape[0] * shape[1]
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    nbytes = np.rint(np.random.default_rng(seed).lognormal(np.log(1e5), 1.0, src.size))
    return mesh(shape, bandwidth=1e9, latency=0.0), sends_from_arrays(n, src, dst, nbytes,
                                                                     tag="a2a")


def with_extra_nodes(nodes, schedule) -> np.ndarray:
    """The placement of ``schedule``: ``nodes`` for its ranks, then the switch nodes its
    in-network ranks run on (``schedule.extra_nodes``)."""
    return np.concatenate([np.asarray(nodes, dtype=np.int64),
                           np.asarray(list(schedule.extra_nodes), dtype=np.int64)])


@st.composite
def random_graph(draw, nodes: tuple[int, int], rates: list[float]):
    """A connected graph of ``nodes[0]..nodes[1]`` nodes: a random tree plus up to n extra
    cables (some pairs twice), each of a rate from ``rates`` (bytes/s) and a latency of 0,
    0.1 or 1 us."""
    n = draw(st.integers(*nodes))
    b = TopologyBuilder(f"random-{n}")
    for i in range(n):
        b.add_node(f"v{i}")
    pairs = [(i, draw(st.integers(0, i - 1))) for i in range(1, n)]
    pairs += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                           .filter(lambda p: p[0] != p[1]), max_size=n))
    for a, c in pairs:
        b.add_cable(a, c, draw(st.sampled_from(rates)), draw(st.sampled_from([0.0, 1e-7, 1e-6])))
    return b.build()


def placed_ranks(draw, machines, lowest: int, most: int):
    """Inside a composite strategy: a machine from ``machines`` and ``lowest..most`` ranks
    (at most its endpoints) on distinct endpoints in random order: (topology, nodes)."""
    topo = draw(machines)
    endpoints = np.asarray(topo.endpoints).tolist()
    ranks = draw(st.integers(lowest, min(most, len(endpoints))))
    return topo, np.asarray(draw(st.permutations(endpoints))[:ranks])
