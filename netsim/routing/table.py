"""Routes that come with the machine: a platform file's own route table (a SimGrid zone
with ``routing="Full"`` lists the links of every route), followed as given.

A topology carries such a table in ``meta["routes"]`` as arrays: ``src`` and ``dst`` node
ids, and the link ids of each route in CSR (``ptr``, ``links``). :class:`TableRouter`
answers a request from the table when it holds the pair and by fewest hops otherwise
(e.g. an in-network algorithm's request to a switch that the table does not list).

>>> from netsim.topology.grid import mesh
>>> t = mesh((1, 3))
>>> t.meta["routes"] = route_table([(0, 2, [t.link("0_0->0_1"), t.link("0_1->0_2")])])
>>> table = TableRouter().link_paths(t, np.array([0]), np.array([2]), np.array([0]))
>>> [t.link_names[l] for l in table.path_links]
['0_0->0_1', '0_1->0_2']
"""

from __future__ import annotations

import numpy as np

from ..topology.model import Topology
from ..topology.routes import route_table
from .core import PathTable, gather
from .shortest import ShortestPathRouter

__all__ = ["TableRouter", "route_table"]

_I = np.int64


class TableRouter(ShortestPathRouter):
    """The topology's own route table (``meta["routes"]``), fewest hops for pairs it lacks."""

    def link_paths(self, topo: Topology, src: np.ndarray, dst: np.ndarray,
                   keys: np.ndarray) -> PathTable:
        table = topo.meta.get("routes")
        if not table or len(table["src"]) == 0:
            return super().link_paths(topo, src, dst, keys)
        n = topo.num_nodes
        known = table["src"] * n + table["dst"]
        order = np.argsort(known, kind="stable")
        wanted = np.asarray(src, dtype=_I) * n + np.asarray(dst, dtype=_I)
        pos = np.searchsorted(known[order], wanted)
        pos = np.minimum(pos, len(known) - 1)
        hit = known[order][pos] == wanted
        parts, index = [], []
        if hit.any():
            rows = order[pos[hit]]
            path_ptr, take = gather(table["ptr"], rows)
            parts.append(PathTable(np.arange(len(rows) + 1, dtype=_I), np.ones(len(rows)),
                                   path_ptr, table["links"][take].astype(_I)))
            index.append(np.flatnonzero(hit))
        if not hit.all():
            miss = np.flatnonzero(~hit)
            parts.append(super().link_paths(topo, src[miss], dst[miss], keys[miss]))
            index.append(miss)
        both = PathTable.concat(parts)
        return both.reorder(np.argsort(np.concatenate(index), kind="stable"))
