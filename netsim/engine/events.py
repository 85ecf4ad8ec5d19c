"""The event handling of the compiled event loop (:func:`netsim.engine.loop.run_events`),
the same for every solver: the timed-event heap, releasing ops whose dependencies are met,
finishing ops and sub-flows, and per-link busy time and counts.

At each event the loop takes the earlier of the solver's first fluid completion and the
heap's first timed event (:func:`next_time`), passes the sub-flows that finish to
:func:`retire` (which finishes their ops and releases what those unblock), and pops the
timed events due (:func:`timed`, which starts the sub-flows whose latency has run out and
leaves them in ``started`` for the solver to add).

Timed events live in a binary heap ordered by (time, push order): times in ``ht``, and per
entry (push order, kind, sub-flow or op) in ``hq``; one entry per sub-flow activation,
compute completion or deferred release. The run's scalars live between calls in two small
arrays (``ints``: ``I_*``, ``floats``: ``F_*``), so a run paused for a progress report
resumes where it stopped. Link busy time is kept as "busy since" per link, so an event costs
nothing per idle link of the machine.

numba is a base dependency, compiled at install (netsim._precompile); where it is missing
(an install with ``--no-deps``) :data:`AVAILABLE` is False and the executor keeps its numpy
loop.
"""

from __future__ import annotations

import numpy as np

from .numba_loader import load as _load_numba
from .tolerance import _REL_TOL          # the merging window of exact runs (one owner)

_numba = _load_numba()                   # optional: the numpy loop runs without it
AVAILABLE = _numba is not None
if AVAILABLE:
    njit = _numba.njit
else:                                   # pragma: no cover - exercised without numba only

    def njit(*args, **kwargs):          # keeps the definitions below importable
        return (lambda f: f) if not args or not callable(args[0]) else args[0]

__all__ = ["AVAILABLE", "DONE", "PAUSED", "NO_CAPACITY", "STOPPED", "next_time", "done_limit",
           "retire",
           "timed", "make_room", "flows_at", "links_on", "links_off", "note_peaks"]

#: Status codes of :func:`netsim.engine.loop.run_events`: STOPPED before an event whose
#: merge window reaches ``floats[F_STOP]`` (a link fault, which the executor applies).
DONE, PAUSED, NO_CAPACITY, STOPPED = 0, 1, 2, 3

_SEND, _COMPUTE = 0, 1                   # netsim.schedule.ir's op kinds (BARRIER = 2)
# Timed-event kinds: the executor hands its numpy loop's heap over as is (executor's own
# _ACTIVATE, _COMPLETE, _RELEASE, which must equal these; a test checks).
_ACTIVATE, _COMPLETE, _RELEASE = 0, 1, 2

# Integer and float scalars of a run, kept in small arrays between calls. I_PAUSE: set
# (by another thread) to ask run_events to return after the event under way; I_BEGUN: the
# solver has taken over the draining flows (run_events' first call).
I_HEAP, I_SEQ, I_EVENTS, I_ACTIVE, I_SOLVED, I_PAUSE, I_BEGUN = range(7)
# F_STOP: the loop stops before an event whose merge window reaches this time (inf: never).
F_NOW, F_TOLERANCE, F_SCAN, F_STOP = range(4)


# -- the timed-event heap ------------------------------------------------------------------

@njit(cache=True, inline="always")   # called per op: a call costs more
def _before(ht, hq, i, t, seq):
    """Heap entry i comes before (t, seq)."""
    return ht[i] < t or (ht[i] == t and hq[i, 0] < seq)


@njit(cache=True, inline="always")
def _move(ht, hq, i, j):
    """Heap slot i takes the entry of slot j."""
    ht[i] = ht[j]
    hq[i, 0], hq[i, 1], hq[i, 2] = hq[j, 0], hq[j, 1], hq[j, 2]


@njit(cache=True, inline="always")
def _place(ht, hq, i, t, seq, kind, ident):
    """Heap slot i holds (t, seq, kind, ident)."""
    ht[i] = t
    hq[i, 0], hq[i, 1], hq[i, 2] = seq, kind, ident


@njit(cache=True, inline="always")   # called per op: a call costs more
def _push(ht, hq, size, t, seq, kind, ident):
    """Insert (t, seq, kind, ident) into a heap of ``size`` entries with room for one more."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if _before(ht, hq, parent, t, seq):
            break
        _move(ht, hq, i, parent)
        i = parent
    _place(ht, hq, i, t, seq, kind, ident)


@njit(cache=True, inline="always")   # called per op: a call costs more
def _pop(ht, hq, size):
    """Remove the first entry of a heap of ``size`` entries (read it before)."""
    size -= 1
    t, seq, kind, ident = ht[size], hq[size, 0], hq[size, 1], hq[size, 2]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and (ht[child + 1] < ht[child] or (
                ht[child + 1] == ht[child] and hq[child + 1, 0] < hq[child, 0])):
            child += 1
        if ht[child] > t or (ht[child] == t and hq[child, 0] > seq):
            break
        _move(ht, hq, i, child)
        i = child
    _place(ht, hq, i, t, seq, kind, ident)


@njit(cache=True)
def _grown(ht, hq):
    """The heap's arrays with twice the room."""
    n = ht.size
    ht2 = np.empty(2 * n + 16)
    hq2 = np.empty((2 * n + 16, 3), dtype=np.int64)
    ht2[:n] = ht
    hq2[:n] = hq
    return ht2, hq2


# -- time ------------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def next_time(now, t_fluid, ht, size):
    """The next event's time from the solver's first fluid completion ``t_fluid`` and the
    heap's first timed event: (t_next, whether it is the fluid completion, the heap's
    first time). ``t_next`` is inf when nothing is left to happen."""
    t_heap = ht[0] if size > 0 else np.inf
    fluid = t_fluid <= t_heap
    return (t_fluid if fluid else t_heap), fluid, t_heap


@njit(cache=True, inline="always")
def done_limit(dt, dt_fluid, fluid):
    """A draining flow due within this of the last event (s) finishes at this one."""
    return max(dt, dt_fluid if fluid else 0.0) * (1 + _REL_TOL)


# -- ops -------------------------------------------------------------------------------------

@njit(cache=True, inline="always")   # called per op: a call costs more
def _release(op, t, kind, seconds, overhead, not_before, op_subs_ptr, op_subs_idx,
             sub_latency, op_release, op_start, ht, hq, size, seq):
    """Release one ready op at ``t``; returns (finishes at once, heap size, seq). The heap
    must have room for the op's sub-flows plus one."""
    if not_before[op] > t * (1 + _REL_TOL):
        _push(ht, hq, size, not_before[op], seq, _RELEASE, op)
        return False, size + 1, seq + 1
    op_release[op] = t
    if kind[op] == _SEND:
        op_start[op] = t + overhead[op]
        for j in range(op_subs_ptr[op], op_subs_ptr[op + 1]):
            f = op_subs_idx[j]
            _push(ht, hq, size, t + overhead[op] + sub_latency[f], seq, _ACTIVATE, f)
            size += 1
            seq += 1
        return False, size, seq
    op_start[op] = t
    if kind[op] == _COMPUTE and seconds[op] > 0:
        _push(ht, hq, size, t + seconds[op], seq, _COMPLETE, op)
        return False, size + 1, seq + 1
    return True, size, seq


@njit(cache=True)
def _finish_ops(stack, n_stack, t, kind, seconds, overhead, not_before, succ_ptr, succ_idx,
                waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release, op_start,
                op_finish, ht, hq, size, seq):
    """Finish the ops ``stack[:n_stack]`` at ``t`` and, transitively, every op they release
    that finishes at once (barriers, zero-time computes); returns the heap (grown if it
    had to) with its size and seq."""
    while n_stack > 0:
        n_stack, size, seq = _finish_some(stack, n_stack, t, kind, seconds, overhead,
                                          not_before, succ_ptr, succ_idx, waiting,
                                          op_subs_ptr, op_subs_idx, sub_latency,
                                          op_release, op_start, op_finish, ht, hq, size,
                                          seq)
        if n_stack > 0:
            ht, hq = _grown(ht, hq)
    return ht, hq, size, seq


@njit(cache=True)
def _finish_some(stack, n_stack, t, kind, seconds, overhead, not_before, succ_ptr, succ_idx,
                 waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release, op_start,
                 op_finish, ht, hq, size, seq):
    """:func:`_finish_ops` while the heap has room: returns (ops left, heap size, seq).
    Ops stay on the stack when the heap has no room for what the next one may push (the
    heap is never re-allocated in here: that would cost reference counting at every op)."""
    while n_stack > 0:
        op = stack[n_stack - 1]
        need = 0
        for p in range(succ_ptr[op], succ_ptr[op + 1]):
            nxt = succ_idx[p]
            need += op_subs_ptr[nxt + 1] - op_subs_ptr[nxt] + 1
        if ht.size - size < need:
            return n_stack, size, seq
        n_stack -= 1
        op_finish[op] = t
        for p in range(succ_ptr[op], succ_ptr[op + 1]):
            nxt = succ_idx[p]
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                instant, size, seq = _release(nxt, t, kind, seconds, overhead, not_before,
                                              op_subs_ptr, op_subs_idx, sub_latency,
                                              op_release, op_start, ht, hq, size, seq)
                if instant:
                    stack[n_stack] = nxt
                    n_stack += 1
    return 0, size, seq


@njit(cache=True, inline="always")
def _sub_done(f, remaining, sub_done, sub_op, subs_left, stack, n_stack):
    """Sub-flow f is done: its op goes on ``stack`` when it was the op's last."""
    remaining[f] = 0.0
    sub_done[f] = True
    op = sub_op[f]
    subs_left[op] -= 1
    if subs_left[op] == 0:
        stack[n_stack] = op
        n_stack += 1
    return n_stack


@njit(cache=True, _nrt=False)
def retire(done_subs, n_done, t, ops, flows, ht, hq, size, seq):
    """The sub-flows ``done_subs[:n_done]`` finished draining at ``t``: finish the ops
    they complete and release what those unblock, while the heap has room. Returns (ops
    left on the stack for :func:`make_room`, heap size, seq). ``ops`` and ``flows`` are
    the tuples the loop passes around (:func:`timed`)."""
    (kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting, op_subs_ptr,
     op_subs_idx, sub_latency, op_release, op_start, op_finish, stack) = ops
    sub_op, subs_left, remaining, sub_done, _ = flows
    n_stack = 0
    for k in range(n_done):
        n_stack = _sub_done(done_subs[k], remaining, sub_done, sub_op, subs_left, stack,
                            n_stack)
    return _finish_some(stack, n_stack, t, kind, seconds, overhead, not_before, succ_ptr,
                        succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency,
                        op_release, op_start, op_finish, ht, hq, size, seq)


@njit(cache=True)
def make_room(n_stack, t, ops, ht, hq, size, seq):
    """The heap had no room for what came next (:func:`retire`, :func:`timed`): grow it,
    and finish the ops ``ops``' stack still holds (``n_stack``). Returns the heap, its size
    and seq."""
    (kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting, op_subs_ptr,
     op_subs_idx, sub_latency, op_release, op_start, op_finish, stack) = ops
    ht, hq = _grown(ht, hq)
    return _finish_ops(stack, n_stack, t, kind, seconds, overhead, not_before, succ_ptr,
                       succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release,
                       op_start, op_finish, ht, hq, size, seq)


# -- links -----------------------------------------------------------------------------------

@njit(cache=True, inline="always")
def flows_at(j, weight, weighted):
    """How many flows path incidence j stands for: its symmetry weight (a whole number,
    ``symmetry.quotient``), 1 where paths are unweighted."""
    return np.int64(np.rint(weight[j])) if weighted else np.int64(1)


@njit(cache=True, inline="always")
def links_on(f, now, path_start, path_len, path_links, weight, weighted, link_count,
             busy_from, grown, n_grown):
    """Sub-flow f starts draining at ``now``: count it on its links (a link that was idle
    is busy from now) and list them in ``grown``, which has room; returns its length."""
    for j in range(path_start[f], path_start[f] + path_len[f]):
        link = path_links[j]
        if link_count[link] == 0:
            busy_from[link] = now
        link_count[link] += flows_at(j, weight, weighted)
        grown[n_grown] = link
        n_grown += 1
    return n_grown


@njit(cache=True, inline="always")
def links_off(f, now, path_start, path_len, path_links, weight, weighted, link_count,
              link_busy, busy_from):
    """Sub-flow f stops draining at ``now``: a link it leaves idle was busy until now."""
    for j in range(path_start[f], path_start[f] + path_len[f]):
        link = path_links[j]
        link_count[link] -= flows_at(j, weight, weighted)
        if link_count[link] == 0:
            link_busy[link] += now - busy_from[link]


@njit(cache=True, _nrt=False)
def note_peaks(grown, n_grown, link_count, link_peak):
    """A link's peak of concurrent flows, looked at where counts rose (activations)."""
    for k in range(n_grown):
        link = grown[k]
        if link_count[link] > link_peak[link]:
            link_peak[link] = link_count[link]


# -- timed events ----------------------------------------------------------------------------

@njit(cache=True, _nrt=False)
def timed(horizon, t, ops, flows, paths, links, ht, hq, size, seq, started, grown, counts):
    """Pop and handle the timed events due by ``horizon``, at time ``t``: a sub-flow's
    latency ran out (it starts draining, or is done at once with no bytes or no links), a
    compute finished, a deferred release came due.

    ``ops``: (kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting,
    op_subs_ptr, op_subs_idx, sub_latency, op_release, op_start, op_finish, stack);
    ``flows``: (sub_op, subs_left, remaining, sub_done, earliest: no start before, s, which
    a reroute sets); ``paths``: (path_start, path_len,
    path_links, weight, weighted, sub_bytes); ``links``: (capacity, link_count, link_busy,
    busy_from, link_peak). The sub-flows that start draining go to ``started`` and their
    links to ``grown`` (for :func:`note_peaks`); the solver adds them. ``counts`` holds
    (whether the draining set changed, how many started, how many links ``grown`` lists,
    ops left on the stack) and is carried over when this stops for room: it returns (what
    it needs, heap size, seq), 0 nothing (done), 1 a larger heap (:func:`make_room`), 2 a
    larger ``grown``. Nothing here allocates, so it runs without reference counting.
    """
    (kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting, op_subs_ptr,
     op_subs_idx, sub_latency, op_release, op_start, op_finish, stack) = ops
    sub_op, subs_left, remaining, sub_done, earliest = flows
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    link_count, busy_from = links[1], links[3]
    need = 0
    while size > 0 and ht[0] <= horizon:
        what, ident = hq[0, 1], hq[0, 2]
        if what == _ACTIVATE and grown.size - counts[2] < path_len[ident]:
            need = 2
            break
        if what == _RELEASE and ht.size - size < op_subs_ptr[ident + 1] - op_subs_ptr[ident] + 2:
            need = 1
            break
        _pop(ht, hq, size)
        size -= 1
        n_stack = 0
        if what == _ACTIVATE:
            f = ident
            if sub_done[f]:
                continue
            counts[0] = 1
            if earliest[f] > t * (1 + _REL_TOL):   # rerouted while its latency ran: later
                _push(ht, hq, size, earliest[f], seq, _ACTIVATE, f)   # (room: one popped)
                size += 1
                seq += 1
                continue
            if path_len[f] == 0 or sub_bytes[f] == 0:
                n_stack = _sub_done(f, remaining, sub_done, sub_op, subs_left, stack, 0)
            else:
                started[counts[1]] = f
                counts[1] += 1
                counts[2] = links_on(f, t, path_start, path_len, path_links, weight,
                                     weighted, link_count, busy_from, grown, counts[2])
        elif what == _COMPLETE:
            stack[0] = ident
            n_stack = 1
        else:
            instant, size, seq = _release(ident, t, kind, seconds, overhead, not_before,
                                          op_subs_ptr, op_subs_idx, sub_latency,
                                          op_release, op_start, ht, hq, size, seq)
            if instant:
                stack[0] = ident
                n_stack = 1
        if n_stack:
            n_stack, size, seq = _finish_some(
                stack, n_stack, t, kind, seconds, overhead, not_before, succ_ptr, succ_idx,
                waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release, op_start,
                op_finish, ht, hq, size, seq)
            if n_stack:
                counts[3] = n_stack
                need = 1
                break
    return need, size, seq
