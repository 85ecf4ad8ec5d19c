"""The longest path of :mod:`netsim.algorithms.lower_bound` compiled with numba: one pass
over the ops in order. Imported only when numba already is (importing it costs about
0.3 s; the engine's compiled loop imports it on long runs), so that small runs never pay
for it. Max and one addition per op: the same floats as the numpy blocks."""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["longest_path"]


@njit(cache=True)
def _longest(cost, floor, dep_ptr, dep_idx):       # pragma: no cover - compiled
    n = cost.size
    finish = np.empty(n)
    latest = 0.0
    for op in range(n):
        release = floor[op]
        for k in range(dep_ptr[op], dep_ptr[op + 1]):
            t = finish[dep_idx[k]]
            if t > release:
                release = t
        finish[op] = release + cost[op]
        if finish[op] > latest:
            latest = finish[op]
    return latest


def longest_path(cost: np.ndarray, floor: np.ndarray, dep_ptr: np.ndarray,
                 dep_idx: np.ndarray) -> float:
    """Latest finish when op i starts at max(floor[i], finish of its dependencies) and
    takes cost[i] (s); every dependency is an earlier op."""
    return float(_longest(np.ascontiguousarray(cost, dtype=np.float64),
                          np.ascontiguousarray(floor, dtype=np.float64),
                          np.ascontiguousarray(dep_ptr, dtype=np.int64),
                          np.ascontiguousarray(dep_idx, dtype=np.int64)))
