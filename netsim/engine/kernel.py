"""The event loop of :mod:`netsim.engine.executor`, compiled with numba.

The executor's numpy loop pays a few dozen array passes, each with its Python and numpy call
overhead, at every event; a run where nearly every flow ends at its own time (log-normal
all-to-all, staggered joins, pipelined collectives) is then dominated by that overhead, not
by arithmetic. This module runs the same loop as compiled code over the executor's own arrays
(:class:`~netsim.engine.executor._Execution`): the same events, the same merging windows, the
same max-min fair rates (progressive filling, one bottleneck link at a time in order of its
fair share), so its results equal the numpy loop's to rounding (``tests/test_engine_kernel.py``
checks that on random schedules, with dependencies, computes, barriers, release times,
latencies, parallel paths, symmetry weights and tolerance).

numba is an optional dependency (``pip install netsim[fast]``): without it
:data:`AVAILABLE` is False and the executor keeps its numpy loop. Runs with faults or a
recorded timeline always use the numpy loop.

Timed events live in a binary heap ordered by (time, push order), one entry per sub-flow
activation, compute completion or deferred release. Every solve is cold: it costs
O(incidences x log(links)) in compiled code, which is less than the numpy warm start's
bookkeeping at every size measured (``benchmarks/bench_engine_events.py``).
"""

from __future__ import annotations

import numpy as np

try:                                    # optional: the numpy loop runs without it
    from numba import njit
    AVAILABLE = True
except ImportError:                     # pragma: no cover - exercised without numba only
    AVAILABLE = False

    def njit(*args, **kwargs):          # keeps the definitions below importable
        return (lambda f: f) if not args or not callable(args[0]) else args[0]

__all__ = ["AVAILABLE", "run_events", "DONE", "PAUSED", "NO_CAPACITY"]

#: Status codes of :func:`run_events`.
DONE, PAUSED, NO_CAPACITY = 0, 1, 2

_SEND, _COMPUTE = 0, 1                   # netsim.schedule.ir's op kinds (BARRIER = 2)
_ACTIVATE, _COMPLETE, _RELEASE = 0, 1, 2
_REL_TOL = 1e-9                          # the executor's merging window (executor._REL_TOL)

# Integer and float scalars of a run, kept in small arrays between calls (a paused run
# resumes where it stopped).
I_HEAP, I_SEQ, I_EVENTS, I_ACTIVE, I_STARTED = range(5)
F_NOW, F_TOLERANCE = range(2)


@njit(cache=True)
def _before(ht, hq, i, t, seq):
    """Heap entry i comes before (t, seq)."""
    return ht[i] < t or (ht[i] == t and hq[i, 0] < seq)


@njit(cache=True)
def _push(ht, hq, size, t, seq, kind, ident):
    """Insert (t, seq, kind, ident) into a heap of ``size`` entries with room for one more."""
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if _before(ht, hq, parent, t, seq):
            break
        ht[i] = ht[parent]
        hq[i, 0], hq[i, 1], hq[i, 2] = hq[parent, 0], hq[parent, 1], hq[parent, 2]
        i = parent
    ht[i] = t
    hq[i, 0], hq[i, 1], hq[i, 2] = seq, kind, ident


@njit(cache=True)
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
        ht[i] = ht[child]
        hq[i, 0], hq[i, 1], hq[i, 2] = hq[child, 0], hq[child, 1], hq[child, 2]
        i = child
    ht[i] = t
    hq[i, 0], hq[i, 1], hq[i, 2] = seq, kind, ident


@njit(cache=True)
def _grown(ht, hq):
    """The heap's arrays with twice the room."""
    n = ht.size
    ht2 = np.empty(2 * n + 16)
    hq2 = np.empty((2 * n + 16, 3), dtype=np.int64)
    ht2[:n] = ht
    hq2[:n] = hq
    return ht2, hq2


@njit(cache=True)
def _solve(active, n_active, path_start, path_len, path_links, weight, weighted, capacity,
           rate):
    """Max-min fair rates of the draining sub-flows ``active[:n_active]`` into ``rate``.

    Progressive filling: the link of smallest fair share (remaining capacity / unfrozen
    flows on it) saturates at that share; its unfrozen flows freeze at it, which lowers the
    remaining capacity and the count of every link they cross; repeat. Each level scans the
    links that still carry unfrozen flows (a heap keyed by share costs more: every frozen
    incidence would push an entry), so a solve is O(incidences + levels x links). Returns
    False if a flow meets a link with no capacity left.
    """
    n_links = capacity.size
    count = np.zeros(n_links)              # unfrozen flows on each link (weighted)
    link_ptr = np.zeros(n_links + 1, dtype=np.int64)
    for i in range(n_active):
        f = active[i]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            link_ptr[link + 1] += 1
            count[link] += weight[j] if weighted else 1.0
    for link in range(n_links):
        link_ptr[link + 1] += link_ptr[link]
    fill = link_ptr[:-1].copy()
    flows_on = np.empty(link_ptr[n_links], dtype=np.int64)     # active positions, by link
    for i in range(n_active):
        f = active[i]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            flows_on[fill[link]] = i
            fill[link] += 1
    remaining = capacity.copy()
    live = np.empty(n_links, dtype=np.int64)    # links with unfrozen flows
    n_live = 0
    for link in range(n_links):
        if count[link] > 0.5:
            live[n_live] = link
            n_live += 1
    frozen = np.zeros(n_active, dtype=np.bool_)
    while n_live > 0:
        # the link of smallest fair share saturates next; drop links left without flows
        best, share, kept = -1, np.inf, 0
        for k in range(n_live):
            link = live[k]
            if count[link] <= 0.5:
                continue
            live[kept] = link
            kept += 1
            s = max(remaining[link], 0.0) / count[link]
            if s < share:
                best, share = link, s
        n_live = kept
        if best < 0:
            break
        if share <= 0.0:
            return False
        for p in range(link_ptr[best], link_ptr[best + 1]):
            i_flow = flows_on[p]
            if frozen[i_flow]:
                continue
            frozen[i_flow] = True
            f = active[i_flow]
            rate[f] = share
            for j in range(path_start[f], path_start[f] + path_len[f]):
                w = weight[j] if weighted else 1.0
                remaining[path_links[j]] -= share * w
                count[path_links[j]] -= w
        count[best] = 0.0
    return True


@njit(cache=True)
def run_events(max_events, kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting,
               op_subs_ptr, op_subs_idx, subs_left, op_release, op_start, op_finish,
               sub_op, sub_bytes, sub_latency, path_start, path_len, path_links, weight,
               weighted, remaining, rate, sub_done, active, capacity, link_count, link_busy,
               link_peak, ht, hq, ints, floats):
    """Run up to ``max_events`` events; returns (status, heap times, heap entries).

    Arrays are the executor's (see :class:`~netsim.engine.executor._Execution`) and are
    updated in place; ``ints``/``floats`` hold the run's scalars (``I_*``/``F_*``). The heap
    arrays are returned because they may have grown.
    """
    n_links = capacity.size
    now, tolerance = floats[F_NOW], floats[F_TOLERANCE]
    size, seq, events, n_active = ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE]
    stack = np.empty(kind.size + 1, dtype=np.int64)     # ops finishing at this instant
    finish_dt = np.empty(max(active.size, 1))
    done_subs = np.empty(max(active.size, 1), dtype=np.int64)
    status = PAUSED
    if ints[I_STARTED] == 0:
        # time 0: release every op without dependencies (the instant ones finish and
        # release what they unblock), then solve; not an event of its own
        ints[I_STARTED] = 1
        n_ready = 0
        for op in range(kind.size):
            if waiting[op] == 0:
                stack[n_ready] = op
                n_ready += 1
        n_stack = 0
        for k in range(n_ready):
            op = stack[k]
            if ht.size - size < op_subs_ptr[op + 1] - op_subs_ptr[op] + 2:
                ht, hq = _grown(ht, hq)
            instant, size, seq = _release(op, 0.0, kind, seconds, overhead, not_before,
                                          op_subs_ptr, op_subs_idx, sub_latency,
                                          op_release, op_start, ht, hq, size, seq)
            if instant:                  # n_stack <= k: no ready op is overwritten
                stack[n_stack] = op
                n_stack += 1
        ht, hq, size, seq = _finish_ops(stack, n_stack, 0.0, kind, seconds, overhead,
                                        not_before, succ_ptr, succ_idx, waiting,
                                        op_subs_ptr, op_subs_idx, sub_latency, op_release,
                                        op_start, op_finish, ht, hq, size, seq)
        if n_active > 0 and not _solve(active, n_active, path_start, path_len, path_links,
                                       weight, weighted, capacity, rate):
            max_events = 0
            status = NO_CAPACITY
    steps = 0
    while steps < max_events:
        changed = False
        if True:
            t_heap = ht[0] if size > 0 else np.inf
            dt_fluid = np.inf
            for i in range(n_active):
                f = active[i]
                finish_dt[i] = remaining[f] / rate[f]
                if finish_dt[i] < dt_fluid:
                    dt_fluid = finish_dt[i]
            fluid = now + dt_fluid <= t_heap
            t_next = now + dt_fluid if fluid else t_heap
            if t_next == np.inf:
                status = DONE
                break
            dt = t_next - now
            if n_active > 0 and dt > 0:
                for i in range(n_active):
                    f = active[i]
                    remaining[f] -= rate[f] * dt
                for link in range(n_links):
                    if link_count[link] > 0:
                        link_busy[link] += dt
            now = t_next
            if n_active > 0:
                limit = max(dt, dt_fluid if fluid else 0.0) * (1 + _REL_TOL) \
                    + tolerance * t_next
                kept = 0
                n_done = 0
                for i in range(n_active):
                    f = active[i]
                    if finish_dt[i] <= limit or remaining[f] <= _REL_TOL * sub_bytes[f]:
                        done_subs[n_done] = f
                        n_done += 1
                        for j in range(path_start[f], path_start[f] + path_len[f]):
                            link_count[path_links[j]] -= np.int64(
                                np.rint(weight[j])) if weighted else 1
                    else:
                        active[kept] = f
                        kept += 1
                n_active = kept
                if n_done:
                    changed = True
                    n_stack = 0
                    for k in range(n_done):
                        f = done_subs[k]
                        remaining[f] = 0.0
                        sub_done[f] = True
                        op = sub_op[f]
                        subs_left[op] -= 1
                        if subs_left[op] == 0:
                            stack[n_stack] = op
                            n_stack += 1
                    ht, hq, size, seq = _finish_ops(
                        stack, n_stack, t_next, kind, seconds, overhead, not_before,
                        succ_ptr, succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency,
                        op_release, op_start, op_finish, ht, hq, size, seq)
        horizon = t_next + _REL_TOL * max(dt, 0.0)
        while size > 0 and ht[0] <= horizon:
            what, ident = hq[0, 1], hq[0, 2]
            _pop(ht, hq, size)
            size -= 1
            if what == _ACTIVATE:
                f = ident
                if sub_done[f]:
                    continue
                changed = True
                if path_len[f] == 0 or sub_bytes[f] == 0:
                    remaining[f] = 0.0
                    sub_done[f] = True
                    op = sub_op[f]
                    subs_left[op] -= 1
                    if subs_left[op] == 0:
                        stack[0] = op
                        ht, hq, size, seq = _finish_ops(
                            stack, 1, t_next, kind, seconds, overhead, not_before,
                            succ_ptr, succ_idx, waiting, op_subs_ptr, op_subs_idx,
                            sub_latency, op_release, op_start, op_finish, ht, hq, size, seq)
                    continue
                active[n_active] = f
                n_active += 1
                for j in range(path_start[f], path_start[f] + path_len[f]):
                    link_count[path_links[j]] += np.int64(np.rint(weight[j])) \
                        if weighted else 1
            elif what == _COMPLETE:
                stack[0] = ident
                ht, hq, size, seq = _finish_ops(
                    stack, 1, t_next, kind, seconds, overhead, not_before, succ_ptr,
                    succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release,
                    op_start, op_finish, ht, hq, size, seq)
            else:
                if ht.size - size < op_subs_ptr[ident + 1] - op_subs_ptr[ident] + 2:
                    ht, hq = _grown(ht, hq)
                instant, size, seq = _release(ident, t_next, kind, seconds, overhead,
                                              not_before, op_subs_ptr, op_subs_idx,
                                              sub_latency, op_release, op_start, ht, hq,
                                              size, seq)
                if instant:
                    stack[0] = ident
                    ht, hq, size, seq = _finish_ops(
                        stack, 1, t_next, kind, seconds, overhead, not_before, succ_ptr,
                        succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency,
                        op_release, op_start, op_finish, ht, hq, size, seq)
        if changed and n_active > 0:
            if not _solve(active, n_active, path_start, path_len, path_links, weight,
                          weighted, capacity, rate):
                status = NO_CAPACITY
                break
            for link in range(n_links):
                if link_count[link] > link_peak[link]:
                    link_peak[link] = link_count[link]
        events += 1
        steps += 1
    floats[F_NOW] = now
    ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE] = size, seq, events, n_active
    return status, ht, hq


@njit(cache=True)
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
    that finishes at once (barriers, zero-time computes)."""
    while n_stack > 0:
        n_stack -= 1
        op = stack[n_stack]
        op_finish[op] = t
        for p in range(succ_ptr[op], succ_ptr[op + 1]):
            nxt = succ_idx[p]
            waiting[nxt] -= 1
            if waiting[nxt] == 0:
                if ht.size - size < op_subs_ptr[nxt + 1] - op_subs_ptr[nxt] + 2:
                    ht, hq = _grown(ht, hq)
                instant, size, seq = _release(nxt, t, kind, seconds, overhead, not_before,
                                              op_subs_ptr, op_subs_idx, sub_latency,
                                              op_release, op_start, ht, hq, size, seq)
                if instant:
                    stack[n_stack] = nxt
                    n_stack += 1
    return ht, hq, size, seq
