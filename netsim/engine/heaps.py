"""Indexed binary and k-ary min-heaps for the compiled event loops (numba).

Both hold nodes ``0..m-1`` in slots ``heap[:n]`` with ``pos[f]`` the slot of node f (-1
when absent), ordered by key with ties broken by node id, so a pop order is the same
whatever the heap's shape. They differ in where a key lives:

* **keyed by node** (``_heap_set``, ``_heap_remove``): ``key[f]`` is read by the loop as
  data of its own (a class's next finish, a pinned class's rate), so it stays indexed by
  node; binary.
* **keyed by slot** (``_put``, ``_take``, ``_rise``, ``_place``; engine.classes' heap of
  link levels): ``hval[i]`` is the level of the node in slot i, so the children compared
  at each step down sit side by side, and the heap is 2**_FANOUT-ary. On the 16x16
  log-normal all-to-all, where this heap takes about a third of the run, binary ran
  about 15% slower than 8-ary; 4- and 16-ary ran within noise of it.

The helpers that are not inlined compile with ``_nrt=False``: none allocates or returns
an array, and without it every call increfs and decrefs each array it is passed (perf put
that at 12.6% of the samples of the 16x16 log-normal run). ``_nrt`` is numba's internal
flag behind ``@njit(_nrt=...)`` (numba 0.59 to 0.68 have it); a helper given it must
never allocate or return an array. ``tests/test_engine_classes.py`` checks the slot-keyed
heap against a dict (hypothesis).
"""

from __future__ import annotations

import numpy as np

from .events import njit

#: The slot-keyed heap has 2**_FANOUT children per slot (module docstring).
_FANOUT = 3


# -- keyed by node: ``key[f]`` is node f's key wherever f sits --------------------------

@njit(cache=True, _nrt=False)
def _sift(heap, pos, key, n, i):
    """Move the entry at slot i of a heap of ``n`` entries (by ``key``, ties by id) up or
    down to its place."""
    f = heap[i]
    t = key[f]
    while i > 0:                               # up
        parent = (i - 1) >> 1
        g = heap[parent]
        if key[g] < t or (key[g] == t and g < f):
            break
        heap[i] = g
        pos[g] = i
        i = parent
    while True:                                # down
        child = 2 * i + 1
        if child >= n:
            break
        if child + 1 < n and (key[heap[child + 1]] < key[heap[child]] or (
                key[heap[child + 1]] == key[heap[child]] and heap[child + 1] < heap[child])):
            child += 1
        g = heap[child]
        if key[g] > t or (key[g] == t and g > f):
            break
        heap[i] = g
        pos[g] = i
        i = child
    heap[i] = f
    pos[f] = i


@njit(cache=True, _nrt=False)
def _heap_set(heap, pos, key, n, f, t):
    """Give flow f finish time t (inserting it if absent); returns the heap's size."""
    key[f] = t
    if pos[f] < 0:
        heap[n] = f
        pos[f] = n
        n += 1
    _sift(heap, pos, key, n, pos[f])
    return n


@njit(cache=True, _nrt=False)
def _heap_remove(heap, pos, key, n, f):
    """Remove flow f (if present); returns the heap's size."""
    i = pos[f]
    if i < 0:
        return n
    pos[f] = -1
    n -= 1
    if i < n:
        heap[i] = heap[n]
        pos[heap[i]] = i
        _sift(heap, pos, key, n, i)
    return n


@njit(cache=True, _nrt=False)
def _heap_max_upto(heap, key, n, reach, stack):
    """The largest key <= ``reach`` in a heap of ``n`` entries (-inf when none), visiting
    only those entries and their children (they form a subtree at the top); ``stack`` is
    work space of at least ``n`` slots. The approximate mode's window end
    (engine.tolerance)."""
    best = -np.inf
    if n == 0 or key[heap[0]] > reach:
        return best
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        i = stack[top]
        t = key[heap[i]]
        if t > best:
            best = t
        for child in range(2 * i + 1, min(2 * i + 3, n)):
            if key[heap[child]] <= reach:
                stack[top] = child
                top += 1
    return best


# -- keyed by slot: ``hval[i]`` is the level of the node in slot i ----------------------

@njit(cache=True, _nrt=False)
def _place(hp, hval, hpos, n, i, f, x):
    """Put link-heap node f at level x into slot i of a heap of ``n`` slots, moved up or
    down to its place (ties by node id). ``hval`` holds each slot's level beside its node,
    so that the children compared at each step sit next to each other in memory."""
    up = False
    while i > 0:
        parent = (i - 1) >> _FANOUT
        g = hp[parent]
        y = hval[parent]
        if y < x or (y == x and g < f):
            break
        hp[i], hval[i], hpos[g] = g, y, i
        i = parent
        up = True
    while not up:
        first = (i << _FANOUT) + 1
        if first >= n:
            break
        best, g, y = first, hp[first], hval[first]
        for j in range(first + 1, min(first + (1 << _FANOUT), n)):
            v = hval[j]
            if v < y or (v == y and hp[j] < g):
                best, g, y = j, hp[j], v
        if y > x or (y == x and g > f):
            break
        hp[i], hval[i], hpos[g] = g, y, i
        i = best
    hp[i], hval[i], hpos[f] = f, x, i


@njit(cache=True, inline="always")
def _put(hp, hval, hpos, n, f, x):
    """Give link-heap node f level x, inserting it if absent; returns the heap's size.
    (Inlined: one call fewer per link a refill moves; lognormal16 0.95x, whole processes in alternation.)"""
    i = hpos[f]
    if i < 0:
        i = n
        n += 1
    _place(hp, hval, hpos, n, i, f, x)
    return n


@njit(cache=True, inline="always")
def _take(hp, hval, hpos, n, i):
    """Take the node in slot i out of the link heap (the last slot fills the hole);
    returns the heap's size."""
    hpos[hp[i]] = -1
    n -= 1
    if i < n:
        _place(hp, hval, hpos, n, i, hp[n], hval[n])
    return n


@njit(cache=True, inline="always")
def _rise(hp, hval, hpos, n, i, f, x):
    """Node f in slot i gets a level x, not below its old one but for rounding: a leaf
    (most are) stays where it is without a call (5-10% of the 16x16 log-normal run)
    unless x is below its parent's level; others move to their place."""
    if (i << _FANOUT) + 1 >= n:
        parent = max(i - 1, 0) >> _FANOUT
        y = hval[parent]
        if i == 0 or y < x or (y == x and hp[parent] < f):
            hval[i] = x
            return
    _place(hp, hval, hpos, n, i, f, x)
