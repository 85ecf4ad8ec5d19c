"""A topology's key numbers: sizes, diameter, link and injection bandwidth, bisection.

Bisection bandwidth here is the smallest total bandwidth (bytes/s, one direction) of the
links that go from one half of the endpoints to the other, minimised over every split of
the endpoints into halves (sizes floor(E/2) and ceil(E/2)) and both directions; switches
may sit on either side. Closed forms give it for the regular families (see
:func:`bisection_bandwidth`), enumeration for small machines, a Kernighan-Lin heuristic
otherwise.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

__all__ = ["summarize", "diameter", "bisection_bandwidth_Bps", "brute_force_bisection",
           "split_cut", "cable_count", "injection_bandwidth_Bps", "normalize_injection"]

# Enumerate every balanced split when there are at most this many (switchless machines,
# vectorised) or this many max-flow problems (machines with switches).
_ENUMERATE_DIRECT = 200_000
_ENUMERATE_FLOW = 1_000
# Kernighan-Lin (networkx, pure Python) up to this many nodes: it takes 13 s at 10,000 and
# 40 s at 40,000; above, the endpoints are split in breadth-first order (_sweep_cut).
_KL_MAX_NODES = 4_000


def summarize(topo) -> dict[str, Any]:
    """Key numbers of ``topo`` as a flat dict of plain values (bytes/s, hops).

    Keys: name, family, endpoints, switches, links (directed), cables (duplex pairs
    a->b / b->a of the same plane, counted once), one_way_links (links without such a
    partner), diameter (hops, max over endpoint pairs; None if some endpoint cannot reach
    another), min/max_link_bandwidth_Bps, injection_bandwidth_Bps (the largest total
    outgoing bandwidth of an endpoint) and injection_bandwidth_min_Bps (the smallest; they
    differ on a mesh, whose edge nodes have fewer links), bisection_bandwidth_Bps and
    bisection_method.

    >>> from netsim.topology.grid import torus
    >>> s = summarize(torus((4, 4), bandwidth=25e9))
    >>> s["diameter"], s["bisection_bandwidth_Bps"], s["bisection_method"]
    (4, 200000000000.0, 'exact closed form: torus cut across dimension 0 (size 4)')
    """
    cables = cable_count(topo)
    injection = topo.out_degree_bandwidth[topo.endpoints]
    bisection, method = bisection_bandwidth(topo)
    return {
        "name": topo.name, "family": topo.family, "endpoints": int(topo.num_endpoints),
        "switches": int(topo.num_switches), "links": int(topo.num_links),
        "cables": cables, "one_way_links": int(topo.num_links - 2 * cables),
        "diameter": diameter(topo),
        "min_link_bandwidth_Bps": float(topo.bandwidth.min()) if topo.num_links else None,
        "max_link_bandwidth_Bps": float(topo.bandwidth.max()) if topo.num_links else None,
        "injection_bandwidth_Bps": float(injection.max()),
        "injection_bandwidth_min_Bps": float(injection.min()),
        "bisection_bandwidth_Bps": bisection, "bisection_method": method,
    }


def cable_count(topo) -> int:
    """Number of links a->b (plane p) whose reverse b->a (plane p) exists, halved."""
    if topo.num_links == 0:
        return 0
    n, planes = topo.num_nodes, int(topo.plane.max()) + 1
    forward = (topo.link_src * n + topo.link_dst) * planes + topo.plane
    backward = (topo.link_dst * n + topo.link_src) * planes + topo.plane
    return int(np.isin(forward, backward).sum() // 2)


# -- regular families ----------------------------------------------------------------------

def _planes(topo) -> int | None:
    """Parallel links per pair when every pair has the same number, else None."""
    if topo.num_links == 0:
        return None
    counts = np.bincount(topo.plane)
    return int(len(counts)) if np.all(counts == counts[0]) else None


def _grid_cables(dims, torus: bool) -> int:
    total = math.prod(dims)
    return sum(total // k * (k if torus and k >= 3 else k - 1) for k in dims)


def _expected_shape(topo) -> tuple[int, int] | None:
    """(nodes, links per plane) the family's generator makes with ``topo.params``."""
    p, fam = topo.params, topo.family
    try:
        if fam == "ring":
            n = p["dims"][0]
            bidirectional = bool(np.any(topo.sign < 0))
            return n, (2 * n if n >= 3 else 2) if bidirectional else n
        if fam in ("mesh", "torus"):
            return math.prod(p["dims"]), 2 * _grid_cables(p["dims"], fam == "torus")
        if fam == "fat_tree":
            k = p["k"]
            return k ** 3 // 4 + 5 * k * k // 4, 2 * 3 * k ** 3 // 4
        if fam == "leaf_spine":
            hosts = p["hosts_per_leaf"] * p["leaves"]
            return hosts + p["leaves"] + p["spines"], 2 * (hosts + p["leaves"] * p["spines"])
        if fam == "nvswitch":
            return p["gpus"] + p["switches"], 2 * p["gpus"] * sum(p["links_per_switch"])
        if fam == "full_mesh":
            return p["n"], p["n"] * (p["n"] - 1)
    except (KeyError, TypeError, IndexError):
        return None
    return None


def _regular(topo) -> int | None:
    """Planes per pair if ``topo`` still has its generator's shape, else None."""
    shape, planes = _expected_shape(topo), _planes(topo)
    if topo.family == "nvswitch":   # planes differ per switch; links_per_switch has them
        planes = 1
    if shape is None or planes is None:
        return None
    nodes, links = shape
    return planes if (topo.num_nodes, topo.num_links) == (nodes, links * planes) else None


def _closed_diameter(topo) -> int | None:
    p, fam = topo.params, topo.family
    if fam == "ring":
        n = p["dims"][0]
        return n // 2 if np.any(topo.sign < 0) else n - 1
    if fam == "mesh":
        return sum(k - 1 for k in p["dims"])
    if fam == "torus":
        return sum(k // 2 for k in p["dims"])
    if fam == "fat_tree":
        return 6
    if fam == "leaf_spine":
        return 4 if p["leaves"] > 1 else (2 if p["hosts_per_leaf"] > 1 else 0)
    if fam == "nvswitch":
        return 2 if p["gpus"] > 1 else 0
    if fam == "full_mesh":
        return 1
    return None


def diameter(topo) -> int | None:
    """Largest hop count of a shortest path between two endpoints (None if unreachable).

    Regular families that kept their generator's shape use closed forms (mesh: sum of
    k-1; torus: sum of floor(k/2); ring: floor(n/2), n-1 one-way; fat tree 6; leaf-spine
    4; nvswitch 2; full mesh 1); others a BFS from every endpoint, vectorised with
    ``scipy.sparse.csgraph`` in blocks of sources. When every link has its reverse (the
    graph is undirected), the BFS are only those the iFUB bound needs (Crescenzi et al.,
    "On computing the diameter of real-world undirected graphs", TCS 2013): a 200,000-chip
    chain takes a handful, not one per chip.
    """
    if topo.num_endpoints < 2:
        return 0
    if _regular(topo) is not None:
        return _closed_diameter(topo)
    from scipy.sparse import csr_matrix

    n = topo.num_nodes
    graph = csr_matrix((np.ones(topo.num_links), (topo.link_src, topo.link_dst)), shape=(n, n))
    ends = topo.endpoints
    if _undirected(topo):
        return _ifub(graph, ends)
    worst = max(_eccentricities(graph, ends, ends), default=0.0)
    return None if math.isinf(worst) else int(worst)


def _undirected(topo) -> bool:
    """Does every link a->b have a link b->a (so distances are symmetric)?"""
    n = topo.num_nodes
    there = np.unique(topo.link_src * n + topo.link_dst)
    back = np.unique(topo.link_dst * n + topo.link_src)
    return there.size == back.size and bool(np.array_equal(there, back))


def _eccentricities(graph, sources: np.ndarray, ends: np.ndarray) -> list[float]:
    """Largest hop count from each of ``sources`` to ``ends`` (inf if one is unreachable),
    by BFS in blocks whose distance rows stay near 160 MB."""
    from scipy.sparse.csgraph import shortest_path

    n, out = graph.shape[0], []
    block = max(1, 20_000_000 // max(n, 1))
    for start in range(0, len(sources), block):
        dist = shortest_path(graph, unweighted=True, directed=True,
                             indices=sources[start:start + block])
        out.extend(dist[:, ends].max(axis=1).tolist())
    return out


def _ifub(graph, ends: np.ndarray) -> int | None:
    """Diameter over the endpoints of an undirected graph (iFUB from a central node).

    Two sweeps find a long path a..b and its middle node u; BFS from u puts every endpoint
    on a level. Endpoints are then done level by level from the farthest: once levels
    >= i are done, the pairs left are both at levels <= i - 1, at most 2(i - 1) apart
    through u, so when the largest eccentricity found reaches that, none is farther."""
    from scipy.sparse.csgraph import shortest_path

    def bfs(source: int) -> np.ndarray:
        return shortest_path(graph, unweighted=True, directed=True, indices=[source])[0]

    from_first = bfs(int(ends[0]))
    if not np.all(np.isfinite(from_first[ends])):
        return None                     # some endpoint cannot reach another
    a = int(ends[np.argmax(from_first[ends])])
    from_a = bfs(a)
    b = int(ends[np.argmax(from_a[ends])])
    lower = float(from_a[b])
    from_b = bfs(b)
    middle = np.flatnonzero((from_a == lower // 2) & (from_b == lower - lower // 2))
    # of the middles, the best-connected (a spine rather than a GPU halfway through its
    # NVSwitch): its levels are fewest, and iFUB stops soonest
    degree = np.diff(graph.indptr)[middle]
    level = bfs(int(middle[np.argmax(degree)]))[ends]
    for i in range(int(level.max()), 0, -1):
        if lower >= 2 * i:            # every pair left (levels <= i) is at most 2i apart
            break
        at = ends[level == i]
        if at.size:
            lower = max(lower, max(_eccentricities(graph, at, ends)))
        if lower >= 2 * (i - 1):      # every pair left is at most 2(i - 1) apart
            break
    return int(lower)


def _grid_bisection(dims, torus: bool) -> tuple[int, int, bool]:
    """(links crossing per plane, dimension cut, straight) of the cheapest grid cut.

    Straight cut across an even dimension d of size k: the other dimensions' product
    P/k crosses it, twice on a torus when k >= 3 (the wrap links cross too). An odd k
    needs a staircase: the first (k-1)/2 layers plus half of the middle layer, crossing
    c*P/k links plus the bisection of the middle layer.
    """
    live = [(d, k) for d, k in enumerate(dims) if k > 1]
    if not live:
        return 0, -1, True
    total = math.prod(k for _, k in live)
    best = None
    for i, (d, k) in enumerate(live):
        crossing = (2 if torus and k >= 3 else 1) * total // k
        straight = k % 2 == 0
        if not straight:
            rest = [k2 for j, (_, k2) in enumerate(live) if j != i]
            crossing += _grid_bisection(rest, torus)[0]
        if best is None or crossing < best[0]:
            best = (crossing, d, straight)
    return best


def _closed_bisection(topo, planes: int) -> tuple[float, str] | None:
    """Closed-form bisection of a regular family (``None`` when the links are not uniform)."""
    fam, p, bw = topo.family, topo.params, topo.bandwidth
    uniform = bool(np.all(bw == bw[0]))
    if fam == "ring" and uniform:
        n, two_way = p["dims"][0], bool(np.any(topo.sign < 0))
        crossing = 2 if two_way and n >= 3 else 1
        return crossing * planes * bw[0], f"exact closed form: ring cut in {crossing} place" \
            + ("s" if crossing > 1 else "")
    if fam in ("mesh", "torus") and uniform:
        dims = p["dims"]
        crossing, d, straight = _grid_bisection(dims, fam == "torus")
        live = [k for k in dims if k > 1]
        exact = straight and max(live) % 2 == 0 or len(live) == 1 or (
            fam == "mesh" and len(live) == 2)
        how = "cut across" if straight else "staircase cut across odd"
        label = "exact closed form" if exact else "closed form (upper bound)"
        return (crossing * planes * float(bw[0]),
                f"{label}: {fam} {how} dimension {d} (size {dims[d]})")
    if fam == "full_mesh" and uniform:
        n = p["n"]
        return ((n // 2) * (n - n // 2) * planes * float(bw[0]),
                "exact closed form: full mesh, floor(n/2)*ceil(n/2) pairs")
    if fam == "nvswitch" and uniform:
        per_gpu = float(topo.out_degree_bandwidth[topo.endpoints[0]])
        return (p["gpus"] // 2) * per_gpu, "exact closed form: nvswitch, floor(n/2) x GPU bandwidth"
    host_links = np.isin(topo.link_src, topo.endpoints) | np.isin(topo.link_dst, topo.endpoints)
    host_bw, fabric_bw = bw[host_links], bw[~host_links]
    if not (np.all(host_bw == host_bw[0]) and np.all(fabric_bw == fabric_bw[0])):
        return None
    if fam == "fat_tree":
        hosts = topo.num_endpoints
        value = hosts // 2 * planes * min(float(host_bw[0]), float(fabric_bw[0]))
        return value, "exact closed form: fat tree, hosts/2 x min(host, fabric) link bandwidth"
    if fam == "leaf_spine":
        hpl, leaves, spines = p["hosts_per_leaf"], p["leaves"], p["spines"]
        if leaves == 1:
            return (hpl // 2 * planes * float(host_bw[0]),
                    "exact closed form: one leaf, half of its host links")
        if leaves % 2 == 0:
            per_leaf = min(hpl * float(host_bw[0]), spines * float(fabric_bw[0]))
            return (leaves // 2 * planes * per_leaf,
                    "exact closed form: leaf-spine, leaves/2 x min(host, uplink) bandwidth")
    return None


def bisection_bandwidth(topo, tries: int = 4, seed: int = 0) -> tuple[float | None, str]:
    """Bisection bandwidth (bytes/s, one direction) and how it was found.

    Closed forms (b = link bandwidth, L = parallel links per pair):

    * ring of n: cut 2 cables (1 if n = 2 or one-way) -> 2 L b.
    * mesh d_0 x ... : cut across an even dimension d (size k): P/k L b, P = node count.
      Odd dimensions need a staircase cut (half of the middle layer on each side), adding
      the bisection of that layer; the cheapest cut over all dimensions is taken. Exact when
      the largest dimension is even (Dally & Towles, ch. 3), in 1-D, and for 2-D meshes
      (k odd: n+1, Leighton); otherwise reported as an upper bound.
    * torus: as the mesh with 2 P/k per cut (wrap links cross too) for k >= 3.
    * fat tree (k): hosts/2 x L x min(host, fabric) bandwidth (full bisection).
    * leaf-spine, even leaves: leaves/2 x L x min(hosts_per_leaf x host bw, spines x uplink).
    * nvswitch of n GPUs: floor(n/2) x per-GPU bandwidth.
    * full mesh of n: floor(n/2) ceil(n/2) L b, i.e. (n/2)^2 L b for even n.

    Other topologies: every balanced split when there are few enough
    (``'exact (enumerated ...)'``), else the best of ``tries`` seeded Kernighan-Lin
    bisections (``'heuristic (upper bound on the min bisection)'``).
    """
    if topo.num_endpoints < 2:
        return None, "none (fewer than 2 endpoints)"
    if topo.num_links == 0:
        return 0.0, "exact (no links)"
    planes = _regular(topo)
    if planes is not None:
        closed = _closed_bisection(topo, planes)
        if closed is not None:
            return float(closed[0]), closed[1]
    splits = _split_count(topo.num_endpoints)
    limit = _ENUMERATE_FLOW if topo.num_switches else _ENUMERATE_DIRECT
    if splits <= limit:
        return brute_force_bisection(topo), f"exact (enumerated {splits} balanced splits)"
    if topo.num_nodes > _KL_MAX_NODES:
        return _sweep_cut(topo), "heuristic (BFS-order split; upper bound on the min bisection)"
    return _kernighan_lin(topo, tries, seed), "heuristic (upper bound on the min bisection)"


# -- exact and heuristic cuts -------------------------------------------------------------

def _split_count(e: int) -> int:
    """Number of unordered splits of e endpoints into floor(e/2) and ceil(e/2)."""
    return math.comb(e, e // 2) // (2 if e % 2 == 0 else 1)


def _splits(e: int):
    """Index tuples of the A sides, each unordered balanced split once."""
    if e % 2 == 0:   # fix endpoint 0 in A: the mirror image is the same split
        return ((0, *rest) for rest in combinations(range(1, e), e // 2 - 1))
    return combinations(range(e), e // 2)


def brute_force_bisection(topo, block: int = 20_000) -> float:
    """Exact bisection bandwidth by trying every balanced split of the endpoints.

    Without switches each split is a vectorised sum; with switches each split is two
    max-flow problems (so switches fall on the cheaper side). Exponential: for small
    machines and for checking closed forms.
    """
    ends = topo.endpoints
    if topo.num_switches == 0 and len(ends) == topo.num_nodes:
        position = np.empty(topo.num_nodes, dtype=np.int64)
        position[ends] = np.arange(len(ends))
        src, dst = position[topo.link_src], position[topo.link_dst]
        best, chunk = math.inf, []
        for split in _splits(len(ends)):
            chunk.append(split)
            if len(chunk) == block:
                best = min(best, _direct_cuts(chunk, len(ends), src, dst, topo.bandwidth))
                chunk = []
        if chunk:
            best = min(best, _direct_cuts(chunk, len(ends), src, dst, topo.bandwidth))
        return float(best)
    flow = _FlowCut(topo)
    return float(min(flow.cut(np.asarray(split)) for split in _splits(len(ends))))


def _direct_cuts(splits, e: int, src, dst, bw) -> float:
    side = np.zeros((len(splits), e), dtype=bool)
    rows = np.repeat(np.arange(len(splits)), len(splits[0]))
    side[rows, np.asarray(splits).ravel()] = True
    a_src, a_dst = side[:, src], side[:, dst]
    forward = (a_src & ~a_dst).astype(np.float64) @ bw
    backward = (~a_src & a_dst).astype(np.float64) @ bw
    return float(np.minimum(forward, backward).min())


class _FlowCut:
    """Min cut between two endpoint sets with switches free, by integer max-flow.

    One CSR graph holds the links plus a source edge to every endpoint and an edge from
    every endpoint to the sink; a split only rewrites those edges' capacities (0 or
    "infinite"), so thousands of splits cost thousands of max-flow calls, no rebuilds.
    """

    def __init__(self, topo) -> None:
        from scipy.sparse import coo_matrix

        bw = topo.bandwidth
        whole = bool(np.all(bw == np.round(bw)))
        unit = float(np.gcd.reduce(bw.astype(np.int64))) if whole else float(bw.min()) / 1e4
        capacity = np.maximum(np.round(bw / unit), 1)
        if capacity.sum() >= 2 ** 29:   # scipy's flows are int32
            unit = float(bw.sum()) / 2 ** 28
            capacity = np.maximum(np.round(bw / unit), 1)
        self.unit, self.big = unit, int(capacity.sum()) + 1
        n, ends = topo.num_nodes, topo.endpoints
        self.source, self.sink = n, n + 1
        rows = np.concatenate([topo.link_src, np.full(len(ends), n), ends])
        cols = np.concatenate([topo.link_dst, ends, np.full(len(ends), n + 1)])
        data = np.concatenate([capacity, np.ones(2 * len(ends))]).astype(np.int32)
        self.graph = coo_matrix((data, (rows, cols)), shape=(n + 2, n + 2)).tocsr()
        self.graph.sum_duplicates()
        self.graph.sort_indices()
        self.from_source = self._positions(np.full(len(ends), n), ends)
        self.to_sink = self._positions(ends, np.full(len(ends), n + 1))
        self.ends = ends

    def _positions(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        g = self.graph
        return np.array([g.indptr[r] + np.searchsorted(g.indices[g.indptr[r]:g.indptr[r + 1]], c)
                         for r, c in zip(rows.tolist(), cols.tolist())], dtype=np.int64)

    def value(self, in_a: np.ndarray, in_b: np.ndarray) -> float:
        """Capacity (bytes/s) of the cheapest cut from endpoints ``in_a`` to ``in_b`` (masks)."""
        from scipy.sparse.csgraph import maximum_flow

        self.graph.data[self.from_source] = np.where(in_a, self.big, 0)
        self.graph.data[self.to_sink] = np.where(in_b, self.big, 0)
        return maximum_flow(self.graph, self.source, self.sink).flow_value * self.unit

    def cut(self, a_index: np.ndarray) -> float:
        """min(A->B, B->A) for the endpoints at positions ``a_index`` forming side A."""
        in_a = np.zeros(len(self.ends), dtype=bool)
        in_a[a_index] = True
        return min(self.value(in_a, ~in_a), self.value(~in_a, in_a))


def split_cut(topo, side_a) -> float:
    """Bisection-style cut of one split: min over directions of the cheapest cut between
    the endpoints at rank positions ``side_a`` and the rest (switches free), bytes/s."""
    index = np.asarray(side_a, dtype=np.int64)
    if topo.num_switches == 0 and topo.num_endpoints == topo.num_nodes:
        position = np.empty(topo.num_nodes, dtype=np.int64)
        position[topo.endpoints] = np.arange(topo.num_endpoints)
        return _direct_cuts([tuple(index)], topo.num_endpoints, position[topo.link_src],
                            position[topo.link_dst], topo.bandwidth)
    return _FlowCut(topo).cut(index)


def _kernighan_lin(topo, tries: int, seed: int) -> float:
    """Best cut over ``tries`` Kernighan-Lin bisections (seeds seed..seed+tries-1)."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(range(topo.num_nodes))
    for s, d, b in zip(topo.link_src.tolist(), topo.link_dst.tolist(), topo.bandwidth.tolist()):
        weight = graph.edges[s, d]["weight"] + b if graph.has_edge(s, d) else b
        graph.add_edge(s, d, weight=weight)
    ends = topo.endpoints
    half = len(ends) // 2
    best = math.inf
    for attempt in range(tries):
        side, _ = nx.community.kernighan_lin_bisection(graph, weight="weight",
                                                       seed=seed + attempt)
        in_a = np.fromiter((int(e) in side for e in ends), dtype=bool, count=len(ends))
        # Rebalance: move the last surplus endpoints across (switches make KL unbalanced).
        a_idx, b_idx = np.flatnonzero(in_a), np.flatnonzero(~in_a)
        if len(a_idx) > half:
            a_idx = a_idx[:half]
        elif len(a_idx) < half:
            a_idx = np.sort(np.concatenate([a_idx, b_idx[:half - len(a_idx)]]))
        best = min(best, split_cut(topo, a_idx))
    return float(best)


def _sweep_cut(topo) -> float:
    """Cut of the split of the endpoints in breadth-first order from a peripheral one
    (the farthest from endpoint 0, links taken both ways): the nearer half against the
    rest. Exact on a chain, an upper bound elsewhere; a few BFS and one or two max-flows."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import shortest_path

    n, ends = topo.num_nodes, topo.endpoints
    graph = csr_matrix((np.ones(topo.num_links), (topo.link_src, topo.link_dst)), shape=(n, n))
    graph = graph + graph.T

    def bfs(source: int) -> np.ndarray:
        return shortest_path(graph, unweighted=True, directed=False, indices=[source])[0][ends]

    first = bfs(int(ends[0]))
    far = int(ends[np.argmax(np.where(np.isfinite(first), first, -1.0))])
    order = np.lexsort((np.arange(len(ends)), bfs(far)))   # by distance, then by index
    return float(split_cut(topo, np.sort(order[:len(ends) // 2])))


def injection_bandwidth(topology) -> tuple[float, bool]:
    """(mean outgoing bytes/s of the endpoints, whether all endpoints have the same)."""
    inject = topology.out_degree_bandwidth[topology.endpoints]
    return float(inject.mean()), bool(np.allclose(inject, inject[0]))


def normalize_injection(topologies: list) -> tuple[list, list[float], float]:
    """Each topology with its links scaled so its endpoints' mean injection bandwidth equals
    the first topology's; returns (topologies, scale factors, target bytes/s)."""
    from ..errors import InputError

    rates = [injection_bandwidth(topo)[0] for topo in topologies]
    for topo, rate in zip(topologies, rates):
        if not rate > 0:         # one endpoint and no links (mesh:1x1): nothing to scale
            raise InputError(f"--normalize injection: {topo.name!r} has no links out of its "
                             f"endpoints (injection bandwidth 0), so it cannot be scaled")
    target = rates[0]
    scaled, factors = [], []
    for topo, rate in zip(topologies, rates):
        factor = target / rate
        factors.append(factor)
        scaled.append(topo if factor == 1.0 else topo.with_links(bandwidth=topo.bandwidth
                                                                 * factor))
    return scaled, factors, target
