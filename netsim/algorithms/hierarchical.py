"""Hierarchical all-reduce: inside groups (e.g. the GPUs of one node), then across them.

With G groups of L ranks each (``options.groups``, or inferred from the topology):

1. ring reduce-scatter inside every group: the group's i-th rank ends with shard i
   (1/L of the buffer) reduced over its group;
2. ring all-reduce of shard i across groups, among the ranks that are i-th in their group
   (L rings of G ranks side by side);
3. ring all-gather inside every group.

Each rank sends 2(L-1)/L S inside its group and 2(G-1)/(G L) S across groups, which is
what makes it attractive when the links between groups are slower.

Inferred groups: the topology's ``meta['groups']`` (endpoint indices of each machine,
recorded by cluster generators), else ranks whose nodes are cabled to the same set of
switches (the GPUs of one NVSwitch box, the hosts of one leaf). All groups must have the
same size.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..errors import InputError
from .options import AlgoOptions
from .plan import Plan, no_deps, settle
from .registry import reason_from, register
from .rings import ring_steps

__all__ = ["rank_groups", "groups_reason", "infer_groups", "allreduce"]


def infer_groups(num_ranks: int, options: AlgoOptions) -> tuple[tuple[int, ...], ...]:
    """Rank groups from the topology: its ``meta['groups']`` (endpoint indices per node,
    as cluster generators record them), else the set of switches each rank's node is
    cabled to. Ranks keep their order inside a group."""
    topo = options.topology
    if topo is None:
        raise InputError("hierarchical needs options.groups or a topology to infer them from")
    nodes = options.node_of_rank(num_ranks)
    if topo.meta.get("groups"):
        group_of = {int(topo.endpoints[e]): g for g, members in enumerate(topo.meta["groups"])
                    for e in members}
        keys = [(group_of.get(node, -1),) for node in nodes.tolist()]
    else:
        attached: dict[int, set[int]] = defaultdict(set)
        for a, b in zip(topo.link_src.tolist(), topo.link_dst.tolist()):
            if topo.is_switch[b]:
                attached[a].add(b)
        keys = [tuple(sorted(attached[node])) for node in nodes.tolist()]
    by_key: dict[tuple[int, ...], list[int]] = {}
    for rank, key in enumerate(keys):
        by_key.setdefault(key, []).append(rank)
    for bad in ((), (-1,)):
        if bad in by_key:
            raise InputError(f"hierarchical cannot infer groups: rank {by_key[bad][0]} is on "
                             f"a node in no group (no switch); give options.groups")
    return tuple(tuple(g) for g in by_key.values())


def rank_groups(num_ranks: int, options: AlgoOptions) -> np.ndarray:
    """The groups as a (G, L) rank array; a one-line InputError if they do not fit."""
    groups = options.groups if options.groups is not None else infer_groups(num_ranks,
                                                                             options)
    sizes = {len(g) for g in groups}
    if len(sizes) != 1 or 0 in sizes:
        raise InputError(f"hierarchical needs groups of one size, got sizes "
                         f"{sorted(len(g) for g in groups)}")
    members = np.array(groups, dtype=np.int64)
    if sorted(members.ravel().tolist()) != list(range(num_ranks)):
        raise InputError(f"hierarchical groups must hold every rank 0..{num_ranks - 1} "
                         f"exactly once, got {[list(g) for g in groups]}")
    return members


#: Why hierarchical cannot run here (None if it can).
groups_reason = reason_from(rank_groups, "hierarchical")


@register("allreduce", "hierarchical", "ring reduce-scatter in each group, ring all-reduce "
          "across groups, ring all-gather in each group", requires="groups",
          check=groups_reason, size_linear=True)
def allreduce(num_ranks: int, size: float, options: AlgoOptions):
    members = rank_groups(num_ranks, options)
    G, L = members.shape
    c = options.chunks
    plan = Plan("allreduce", num_ranks, size, L * G * c, options)
    pieces = np.arange(L * G * c, dtype=np.int64)
    shards = np.broadcast_to(pieces.reshape(L, G * c), (G, L, G * c))   # shard i per group
    across = pieces.reshape(L, G, c)                                   # shard i in G chunks
    ready = settle(plan, ring_steps(plan, members, shards, no_deps(num_ranks),
                                    reduce_scatter=True, all_gather=False, slices=c,
                                    tag="intra-reduce-scatter"))
    ready = settle(plan, ring_steps(plan, members.T.copy(), across, ready,
                                    reduce_scatter=True, all_gather=True, slices=c,
                                    tag="inter-allreduce"))
    ring_steps(plan, members, shards, ready, reduce_scatter=False, all_gather=True,
               slices=c, tag="intra-all-gather")
    return plan.build()
