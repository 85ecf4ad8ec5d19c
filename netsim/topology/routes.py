"""A machine's own route table, kept in ``Topology.meta["routes"]`` (read from a SimGrid
platform's Full zone; followed by :class:`netsim.routing.table.TableRouter`).

>>> table = route_table([(0, 2, [0, 1]), (2, 0, [3])])
>>> table["src"].tolist(), table["ptr"].tolist(), table["links"].tolist()
([0, 2], [0, 2, 3], [0, 1, 3])
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

__all__ = ["route_table"]

_I = np.int64


def route_table(routes: Iterable[tuple[int, int, Sequence[int]]]) -> dict[str, np.ndarray]:
    """``meta["routes"]`` arrays from (source node, destination node, link ids) triples;
    a pair given twice keeps its first route."""
    seen: dict[tuple[int, int], Sequence[int]] = {}
    for s, d, links in routes:
        seen.setdefault((int(s), int(d)), links)
    pairs = list(seen)
    lens = np.fromiter((len(seen[p]) for p in pairs), dtype=_I, count=len(pairs))
    links = [np.asarray(seen[p], dtype=_I) for p in pairs]
    return {"src": np.asarray([p[0] for p in pairs], dtype=_I),
            "dst": np.asarray([p[1] for p in pairs], dtype=_I), "ptr": _ptr(lens),
            "links": np.concatenate(links) if links else np.zeros(0, dtype=_I)}


def _ptr(lens: np.ndarray) -> np.ndarray:
    ptr = np.zeros(len(lens) + 1, dtype=_I)
    np.cumsum(lens, out=ptr[1:])
    return ptr
