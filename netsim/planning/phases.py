"""Simulated times of a step's collectives, with the work shared where that is exact.

A *phase* is one collective run by every group of a dimension at once (the data-parallel
reduce-scatter of all the tensor-parallel ranks' shards, say): the planner scores a
placement by the simulated time of each phase (:class:`PhaseTimes`). At 1,024 GPUs one
phase is millions of flows, and the search asks for the same phase under several
placements and several layouts; three things keep that affordable and exact:

* **Identical runs are simulated once.** The time of a phase is a function of the
  collective (op, algorithm, bytes, pipelining) and of the nodes of every group; layouts
  that differ only where the phase does not look (ZeRO 1 or 3, recomputation, the
  micro-batch size for the data-parallel phases) and strategies that place the groups on
  the same nodes ask the cache.
* **Groups that share no link are simulated apart, and alike ones once.** When the
  routes depend on (source, destination) alone (``router.pair_only``: no per-flow ECMP
  hash), no switch ranks are added (NVLS) and the groups' link sets are pairwise
  disjoint, no link carries two groups' flows and nothing else is shared between them
  (each rank's messages and reductions are its own): max-min fair sharing splits into
  one independent problem per group, and the phase ends when its slowest group does. Two
  groups whose runs alone are the same up to renaming (the same schedule on the groups'
  own ranks; routes over links of the same bandwidth and latency, shared among the
  group's flows in the same pattern) take the same time: one of each class is simulated.
  On ``dgx-h100-cluster`` (one NIC per GPU, rails) the data-parallel groups of a
  ``tp=4 dp=256`` layout placed row-major are four such groups of 256 ranks: one is
  simulated instead of four at once. Where links are shared the whole phase is simulated.
* **Bounds before simulating.** :meth:`PhaseTimes.bound` is the busiest link's bytes over
  its bandwidth, from the routes of the phase's distinct (source, destination) pairs: no
  flow-level simulation. A placement whose summed bound already exceeds the best step
  found cannot win and is not simulated.

>>> import numpy as np
>>> from netsim.placement.layout import ParallelLayout
>>> from netsim.placement.workload import Phase
>>> from netsim.topology import parse_topology
>>> timer = PhaseTimes(parse_topology("dgx-h100-cluster:nodes=2"))
>>> par = ParallelLayout(tp=8, dp=2)
>>> phase = Phase("tp-allgather", "tp", "allgather", 64e6, "ring")
>>> t = timer.time(phase, par, np.arange(16))
>>> timer.bound(phase, par, np.arange(16)) <= t, timer.stats["groups_simulated"]
(True, 1)
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from ..errors import InputError
from ..placement.layout import ParallelLayout
from ..placement.workload import Phase, phase_schedule
from ..schedule import SEND

__all__ = ["PhaseTimes", "describe_stats"]


class PhaseTimes:
    """Seconds of one occurrence of a phase under a placement (every group of its dimension
    at once), cached across placements and layouts; see the module docstring.

    ``router`` (default: the machine's) is shared with the caller so that its path caches
    stay warm; ``overhead`` (s per message) and ``gamma`` (reduction bytes/s, None: free)
    are the machine's calibration, as :func:`netsim.run.machine_costs` gives them.
    ``stats`` counts the phases simulated whole, the groups simulated alone, the groups
    whose time an alike group gave, and the cache hits. ``engine`` is the engine's
    :class:`~netsim.engine.config.EngineConfig` of every simulation (None: its defaults).
    """

    def __init__(self, topology, *, router=None, overhead: float = 0.0,
                 gamma: float | None = None, engine=None) -> None:
        from ..routing import default_router

        self.topology = topology
        self.router = router if router is not None else default_router(topology)
        self.overhead = overhead
        self.gamma = gamma
        self.engine = engine
        self._times: dict[tuple, float] = {}
        self._alone: dict[str, float] = {}
        self._loads: dict[tuple, np.ndarray] = {}
        self.stats = {"phases_simulated": 0, "groups_simulated": 0, "groups_alike": 0,
                      "cached": 0}

    # -- keys ---------------------------------------------------------------------------
    def _key(self, phase: Phase, par: ParallelLayout, placement: np.ndarray) -> tuple:
        nodes = np.asarray(placement, dtype=np.int64)[par.group_array(phase.dim)]
        return (phase.op, phase.algorithm, float(phase.size), phase.chunks,
                phase.both_ways, nodes.shape, nodes.tobytes())

    # -- bounds -------------------------------------------------------------------------
    def loads(self, phase: Phase, par: ParallelLayout, placement) -> np.ndarray:
        """Bytes each link carries in one occurrence of ``phase`` (array of num_links),
        routed as the simulation routes it (:func:`~netsim.engine.route_schedule`: explicit
        paths, per-flow ECMP; ``route`` routes each distinct pair once where the router's
        paths depend on the pair alone)."""
        from ..engine import route_schedule

        placement = np.asarray(placement, dtype=np.int64)
        key = self._key(phase, par, placement)
        if key not in self._loads:
            sched, extra = phase_schedule(phase, self.topology, par, placement,
                                          gamma=self.gamma)
            full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
            sends = sched.kind == SEND
            self._loads[key] = route_schedule(self.topology, sched, full, self.router
                                              ).link_bytes(sched.nbytes[sends])
        return self._loads[key]

    def bound(self, phase: Phase, par: ParallelLayout, placement) -> float:
        """A lower bound on :meth:`time` (s): the busiest link's bytes over its bandwidth."""
        load = self.loads(phase, par, placement)
        return float((load / self.topology.bandwidth).max()) if load.size else 0.0

    # -- times --------------------------------------------------------------------------
    def time(self, phase: Phase, par: ParallelLayout, placement) -> float:
        """Seconds of one occurrence of ``phase`` with rank r on node ``placement[r]``."""
        placement = np.asarray(placement, dtype=np.int64)
        key = self._key(phase, par, placement)
        if key in self._times:
            self.stats["cached"] += 1
            return self._times[key]
        seconds = None
        if phase.op != "sendrecv" and getattr(self.router, "pair_only", False):
            seconds = self._by_groups(phase, par, placement)
        if seconds is None:
            seconds = self._simulate(*phase_schedule(phase, self.topology, par, placement,
                                                     gamma=self.gamma), placement)
            self.stats["phases_simulated"] += 1
        self._times[key] = seconds
        return seconds

    def _simulate(self, sched, extra, placement: np.ndarray) -> float:
        from ..engine import simulate
        from ..run.placed import fabric_topology

        full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
        return float(simulate(fabric_topology(self.topology, sched), sched, full,
                              router=self.router, overhead=self.overhead,
                              config=self.engine).makespan)

    def _by_groups(self, phase: Phase, par: ParallelLayout, placement: np.ndarray
                   ) -> float | None:
        """The phase's time from its groups simulated apart (one per class of alike
        groups), or None when the groups may interact (see the module docstring)."""
        from ..routing import route
        from ..run.placed import fabric_topology

        groups = par.group_array(phase.dim)
        if len(groups) < 2:
            return None
        n = self.topology.num_nodes
        taken = np.zeros(self.topology.num_links, dtype=bool)
        parts = []
        for group in groups:
            sched, extra = phase_schedule(phase, self.topology, par, placement,
                                          gamma=self.gamma, groups=group[None, :])
            if extra or sched.paths or fabric_topology(self.topology, sched) \
                    is not self.topology:
                return None
            sends = sched.kind == SEND
            src, dst = placement[sched.src[sends]], placement[sched.dst[sends]]
            pairs = np.unique(src * n + dst)
            pairs = pairs[pairs // n != pairs % n]
            routes = route(self.topology, pairs // n, pairs % n, router=self.router)
            used = routes.path_links
            if taken[used].any():
                return None                  # two groups share a link: simulate them together
            taken[used] = True
            parts.append((group, sched, pairs, routes))
        worst = 0.0
        for group, sched, pairs, routes in parts:
            local = np.full(par.num_ranks, -1, dtype=np.int64)
            local[group] = np.arange(group.size)
            signature = _signature(self.topology, sched, local, placement[group], pairs,
                                   routes)
            if signature in self._alone:
                self.stats["groups_alike"] += 1
            else:
                self._alone[signature] = self._simulate(sched, [], placement)
                self.stats["groups_simulated"] += 1
            worst = max(worst, self._alone[signature])
        return worst


def _signature(topology, sched, local: np.ndarray, nodes: np.ndarray, pairs: np.ndarray,
               routes) -> str:
    """A digest of a group's run alone that is the same for two groups exactly when one
    is the other renamed: its schedule on the group's own ranks (0..k-1), then per pair of
    group ranks (in their order) the routes' fractions and hop counts, and the links they
    cross numbered in order of first use with their bandwidth and latency."""
    h = hashlib.sha1()
    src = np.where(sched.src >= 0, local[np.maximum(sched.src, 0)], -1)
    dst = np.where(sched.dst >= 0, local[np.maximum(sched.dst, 0)], -1)
    for arr in (sched.kind, src, dst, sched.nbytes, sched.seconds, sched.dep_ptr,
                sched.dep_idx):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    n = topology.num_nodes
    # the node pairs in the order of their group ranks, so that alike groups list
    # corresponding pairs at the same positions
    rank_of = {int(v): i for i, v in enumerate(nodes.tolist())}
    order = np.argsort([rank_of[int(p // n)] * len(nodes) + rank_of[int(p % n)]
                        for p in pairs.tolist()], kind="stable")
    sub_ptr, path_ptr = routes.sub_ptr, routes.path_ptr
    seq, ptr, frac = [], [0], []
    for r in order.tolist():
        for s in range(int(sub_ptr[r]), int(sub_ptr[r + 1])):
            hop = routes.path_links[path_ptr[s]:path_ptr[s + 1]]
            seq.append(hop)
            ptr.append(ptr[-1] + hop.size)
            frac.append(routes.sub_frac[s])
    flat = np.concatenate(seq) if seq else np.zeros(0, dtype=np.int64)
    values, first, canon = np.unique(flat, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(first.size, dtype=np.int64)
    rank[order] = np.arange(first.size)
    renamed = rank[canon]
    used = values[order]
    for arr in (renamed, np.asarray(ptr), np.asarray(frac), topology.bandwidth[used],
                topology.latency[used]):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    return h.hexdigest()


def describe_stats(stats: dict[str, Any]) -> str:
    """One line for ``--explain``: how the phase times were obtained."""
    return (f"{stats['phases_simulated']} phases simulated whole, "
            f"{stats['groups_simulated']} groups simulated alone, "
            f"{stats['groups_alike']} groups timed by an alike one, "
            f"{stats['cached']} runs reused")
