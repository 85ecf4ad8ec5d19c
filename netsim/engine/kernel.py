"""The event loop of :mod:`netsim.engine.executor`, compiled with numba.

The executor's numpy loop pays a few dozen array passes, each with its Python and numpy call
overhead, at every event; a run where nearly every flow ends at its own time (log-normal
all-to-all, staggered joins, pipelined collectives) is then dominated by that overhead, not
by arithmetic. This module runs the same loop as compiled code over the executor's own arrays
(:class:`~netsim.engine.executor._Execution`): the same events, the same merging windows, the
same max-min fair rates (progressive filling, one bottleneck link at a time in order of its
fair share), so its results equal the numpy loop's to rounding
(``tests/test_engine_conformance.py`` checks that on random schedules, with dependencies,
computes, barriers, release times, latencies, parallel paths and symmetry weights).

numba is a base dependency, compiled at install (netsim._precompile); where it is missing
(an install with ``--no-deps``) :data:`AVAILABLE` is False and the executor keeps its numpy
loop. Runs with faults or a recorded timeline always use the numpy loop.

Timed events live in a binary heap ordered by (time, push order), one entry per sub-flow
activation, compute completion or deferred release. Each solve starts warm from the last
one and touches only the links the draining flows cross; link busy time is kept as "busy
since" per link, so an event costs nothing per idle link of the machine.
"""

from __future__ import annotations

import numpy as np

from .numba_loader import load as _load_numba

_numba = _load_numba()                   # optional: the numpy loop runs without it
AVAILABLE = _numba is not None
if AVAILABLE:
    njit = _numba.njit
else:                                   # pragma: no cover - exercised without numba only

    def njit(*args, **kwargs):          # keeps the definitions below importable
        return (lambda f: f) if not args or not callable(args[0]) else args[0]

__all__ = ["AVAILABLE", "run_events", "DONE", "PAUSED", "NO_CAPACITY"]

#: Status codes of :func:`run_events`.
DONE, PAUSED, NO_CAPACITY = 0, 1, 2

_SEND, _COMPUTE = 0, 1                   # netsim.schedule.ir's op kinds (BARRIER = 2)
_ACTIVATE, _COMPLETE, _RELEASE = 0, 1, 2
_REL_TOL = 1e-9                          # the executor's merging window (executor._REL_TOL)
_MARGIN = 1e-12                          # the warm start's margin below tau (maxmin._MARGIN)
# A solve fills one bottleneck link at a time when (links carrying flows)^2 is below
# floats[F_SCAN] times the flows to fill, else in parallel passes (_solve): the
# configuration's link_scan_factor (netsim.engine.config.EngineConfig).

# Integer and float scalars of a run, kept in small arrays between calls (a paused run
# resumes where it stopped).
I_HEAP, I_SEQ, I_EVENTS, I_ACTIVE, I_SOLVED = range(5)
F_NOW, F_TOLERANCE, F_SCAN = range(3)


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


@njit(cache=True)
def _gained_levels(active, n_active, path_start, path_len, path_links, weight, weighted,
                   capacity, rate, is_new, scratch, mark):
    """Smallest level at which a link with new flows saturates, its old flows at their old
    rates and the new ones rising (maxmin._gained_water_levels, the same sums in order).
    ``scratch`` (2 x links) and ``mark`` (links, all False) are work space; ``mark`` is
    all False again on return."""
    added, total_w = scratch[0], scratch[1]
    touched = np.empty(n_active, dtype=np.int64)
    n_touched = 0
    for i in range(n_active):
        f = active[i]
        if is_new[f]:
            for j in range(path_start[f], path_start[f] + path_len[f]):
                link = path_links[j]
                if not mark[link]:
                    mark[link] = True
                    added[link] = 0.0
                    total_w[link] = 0.0
                    if n_touched == touched.size:
                        touched = np.concatenate((touched, np.empty(touched.size,
                                                                    dtype=np.int64)))
                    touched[n_touched] = link
                    n_touched += 1
                added[link] += weight[j] if weighted else 1.0
    m = 0
    for i in range(n_active):
        f = active[i]
        if not is_new[f]:
            for j in range(path_start[f], path_start[f] + path_len[f]):
                if mark[path_links[j]]:
                    m += 1
    link_of = np.empty(m, dtype=np.int64)
    r = np.empty(m)
    w = np.empty(m)
    k = 0
    for i in range(n_active):
        f = active[i]
        if not is_new[f]:
            for j in range(path_start[f], path_start[f] + path_len[f]):
                if mark[path_links[j]]:
                    link_of[k], r[k] = path_links[j], rate[f]
                    w[k] = weight[j] if weighted else 1.0
                    total_w[path_links[j]] += w[k]
                    k += 1
    by_rate = np.argsort(r, kind="mergesort")
    order = by_rate[np.argsort(link_of[by_rate], kind="mergesort")]   # by link, then rate
    best = np.inf
    q = 0
    while q < m:                       # one segment per touched link with old flows
        lk = link_of[order[q]]
        below, below_w, first = 0.0, 0.0, np.inf
        while q < m and link_of[order[q]] == lk:
            rq, wq = r[order[q]], w[order[q]]
            level = (capacity[lk] - below) / (total_w[lk] - below_w + added[lk])
            if level <= rq and level < first:
                first = level
            below += rq * wq
            below_w += wq
            q += 1
        best = min(best, first, (capacity[lk] - below) / added[lk])
        mark[lk] = False
    for k in range(n_touched):         # touched links without old flows
        lk = touched[k]
        if mark[lk]:
            best = min(best, capacity[lk] / added[lk])
            mark[lk] = False
    return best


@njit(cache=True)
def _fill_by_passes(unfrozen, n_u, path_start, path_len, path_links, weight, weighted,
                    remaining, count, used, n_used, scratch, rate):
    """Progressive filling of the flows ``unfrozen[:n_u]`` in parallel passes (see
    :func:`_solve`) over the links ``used[:n_used]``; False if a flow meets a link with no
    capacity left."""
    share, smallest = scratch[0], scratch[1]
    flow_min = np.empty(n_u)
    while n_u > 0:
        for k in range(n_used):
            link = used[k]
            share[link] = max(remaining[link], 0.0) / count[link] if count[link] > 0.5 \
                else np.inf
            smallest[link] = np.inf
        for k in range(n_u):
            f = unfrozen[k]
            m = np.inf
            for j in range(path_start[f], path_start[f] + path_len[f]):
                m = min(m, share[path_links[j]])
            flow_min[k] = m
            for j in range(path_start[f], path_start[f] + path_len[f]):
                if m < smallest[path_links[j]]:
                    smallest[path_links[j]] = m
        kept = 0
        for k in range(n_u):
            f = unfrozen[k]
            m = flow_min[k]
            hit = False
            for j in range(path_start[f], path_start[f] + path_len[f]):
                s = share[path_links[j]]
                if s <= smallest[path_links[j]] and s <= m:
                    hit = True
                    break
            if hit:
                if not m > 0.0:
                    return False
                rate[f] = m
                for j in range(path_start[f], path_start[f] + path_len[f]):
                    w = weight[j] if weighted else 1.0
                    remaining[path_links[j]] -= m * w
                    count[path_links[j]] -= w
            else:
                unfrozen[kept] = f
                flow_min[kept] = m
                kept += 1
        n_u = kept
    return True


@njit(cache=True)
def _fill_by_links(unfrozen, n_u, path_start, path_len, path_links, weight, weighted,
                   remaining, count, used, n_used, scratch, rate):
    """Progressive filling of the flows ``unfrozen[:n_u]`` one bottleneck link at a time:
    each level scans the links that still carry unfrozen flows (of ``used[:n_used]``) for
    the smallest fair share and freezes the flows crossing it, found by a links -> flows
    index built once. Cheaper than passes when few links carry flows (levels x links <
    incidences)."""
    start = scratch[0]                  # per link: its first slot in ``flow_on``, then fill
    n_inc = 0
    for k in range(n_used):
        start[used[k]] = 0.0
    for k in range(n_u):
        f = unfrozen[k]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            start[path_links[j]] += 1.0
            n_inc += 1
    live = np.empty(n_used, dtype=np.int64)
    ptr = np.empty(n_used + 1, dtype=np.int64)  # by position in ``live``
    n_live = 0
    total = 0
    for k in range(n_used):
        link = used[k]
        if start[link] > 0.5:
            live[n_live] = link
            ptr[n_live] = total
            total += np.int64(start[link])
            start[link] = ptr[n_live]    # the link's fill position, counted up below
            n_live += 1
    ptr[n_live] = total
    slot = scratch[1]                   # per link: its position in ``live``
    for k in range(n_live):
        slot[live[k]] = k
    flow_on = np.empty(n_inc, dtype=np.int64)
    for k in range(n_u):
        f = unfrozen[k]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            flow_on[np.int64(start[link])] = k
            start[link] += 1.0
    frozen = np.zeros(n_u, dtype=np.bool_)
    while n_live > 0:
        best, share, kept = -1, np.inf, 0
        for k in range(n_live):
            link = live[k]
            if count[link] <= 0.5:
                continue                       # every flow on it is frozen
            live[kept] = link
            kept += 1
            s = max(remaining[link], 0.0) / count[link]
            if s < share:
                best, share = link, s
        n_live = kept
        if best < 0:
            break
        if not share > 0.0:
            return False
        b = np.int64(slot[best])
        for p in range(ptr[b], ptr[b + 1]):
            k = flow_on[p]
            if frozen[k]:
                continue
            frozen[k] = True
            f = unfrozen[k]
            rate[f] = share
            for j in range(path_start[f], path_start[f] + path_len[f]):
                w = weight[j] if weighted else 1.0
                remaining[path_links[j]] -= share * w
                count[path_links[j]] -= w
        count[best] = 0.0
    return True


@njit(cache=True)
def _solve(active, n_active, path_start, path_len, path_links, weight, weighted, capacity,
           rate, is_new, level, tau, warm, scan_factor, scratch, mark):
    """Max-min fair rates of the draining sub-flows ``active[:n_active]`` into ``rate``.

    Parallel progressive filling, as :func:`netsim.engine.maxmin.max_min_rates_csr` does it:
    each pass computes every link's fair share (remaining capacity / unfrozen flows) and
    every unfrozen flow's smallest share on its path, and freezes at that share each flow
    crossing a *locally minimal* link (a share no larger than that of any flow crossing it),
    which saturates there in progressive filling. Passes run flow by flow over the unfrozen
    flows only, reading and writing per-link arrays that stay in cache; their number is the
    depth of the bottleneck chain, not the number of levels. When few links carry flows,
    filling one bottleneck link at a time costs less (:func:`_fill_by_links`). Work is over
    the links the draining flows cross, never over every link of the machine.

    ``warm``: the rates of the last solve are in ``rate`` (``is_new`` marks flows added
    since) and ``tau`` is the smallest saturation level (``level``) of the links that lost
    flows since. Flows whose old rate is below both ``tau`` and the level where a link with
    new flows first saturates keep it (the warm start of :mod:`netsim.engine.maxmin`, same
    argument), so only the rest is filled. On return ``level`` holds this solution's
    saturation levels (on the links in use) and ``is_new`` is cleared. ``scratch`` (6 x
    links) and ``mark`` (links, all False) are work space. Returns False if a flow meets a
    link with no capacity left.
    """
    remaining, count = scratch[0], scratch[1]
    any_new = False
    used = np.empty(64, dtype=np.int64)         # the links the draining flows cross
    n_used = 0
    for i in range(n_active):
        f = active[i]
        any_new = any_new or is_new[f]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            if not mark[link]:
                mark[link] = True
                if n_used == used.size:
                    used = np.concatenate((used, np.empty(used.size, dtype=np.int64)))
                used[n_used] = link
                n_used += 1
                remaining[link] = capacity[link]
                count[link] = 0.0
    for k in range(n_used):
        mark[used[k]] = False
    if warm and any_new:
        tau = min(tau, _gained_levels(active, n_active, path_start, path_len, path_links,
                                      weight, weighted, capacity, rate, is_new,
                                      scratch[2:], mark))
    cut = tau * (1 - _MARGIN) if warm else -np.inf
    unfrozen = np.empty(n_active, dtype=np.int64)
    n_u = 0
    for i in range(n_active):
        f = active[i]
        if not is_new[f] and rate[f] < cut:    # keeps its rate
            for j in range(path_start[f], path_start[f] + path_len[f]):
                remaining[path_links[j]] -= rate[f] * (weight[j] if weighted else 1.0)
        else:
            unfrozen[n_u] = f
            n_u += 1
            for j in range(path_start[f], path_start[f] + path_len[f]):
                count[path_links[j]] += weight[j] if weighted else 1.0
    live = 0
    for k in range(n_used):
        if count[used[k]] > 0.5:
            live += 1
    if live * live < scan_factor * n_u:
        ok = _fill_by_links(unfrozen, n_u, path_start, path_len, path_links, weight,
                            weighted, remaining, count, used, n_used, scratch[2:], rate)
    else:
        ok = _fill_by_passes(unfrozen, n_u, path_start, path_len, path_links, weight,
                             weighted, remaining, count, used, n_used, scratch[2:], rate)
    if not ok:
        return False
    # saturation levels of this solution (maxmin.incidence_levels): a link's largest rate
    # if its load reaches its capacity, else +inf
    load, top = scratch[2], scratch[3]
    for k in range(n_used):
        load[used[k]] = 0.0
        top[used[k]] = 0.0
    for i in range(n_active):
        f = active[i]
        is_new[f] = False
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            load[link] += rate[f] * (weight[j] if weighted else 1.0)
            top[link] = max(top[link], rate[f])
    for k in range(n_used):
        link = used[k]
        level[link] = top[link] if load[link] >= capacity[link] * (1 - 1e-9) else np.inf
    return True


@njit(cache=True)
def run_events(max_events, kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting,
               op_subs_ptr, op_subs_idx, subs_left, op_release, op_start, op_finish,
               sub_op, sub_bytes, sub_latency, path_start, path_len, path_links, weight,
               weighted, remaining, rate, is_new, level, sub_done, active, capacity,
               link_count, link_busy, busy_from, link_peak, ht, hq, ints, floats, warm,
               stack, finish_dt, done_subs):
    """Run up to ``max_events`` events; returns (status, heap times, heap entries).

    The run has begun: the numpy loop released the ops of time 0 and ran its first events
    (:meth:`~netsim.engine.executor._Execution._run_compiled` hands its state over).

    Arrays are the executor's (see :class:`~netsim.engine.executor._Execution`) and are
    updated in place; ``ints``/``floats`` hold the run's scalars (``I_*``/``F_*``). The heap
    arrays are returned because they may have grown. ``warm``: start each solve from the
    last one (False: cold at every event, the reference for the warm start).
    """
    n_links = capacity.size
    now, tolerance = floats[F_NOW], floats[F_TOLERANCE]
    size, seq, events, n_active = ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE]
    scratch = np.empty((4, n_links))                    # the solver's per-link work space
    mark = np.zeros(n_links, dtype=np.bool_)
    grown = np.empty(64, dtype=np.int64)                # links that gained a flow this event
    status = PAUSED
    steps = 0
    while steps < max_events:
        changed = False
        n_grown = 0
        tau = np.inf           # smallest saturation level of the links that lose flows
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
        if fluid and tolerance > 0.0:     # approximate: merge at the last due (tolerance.py)
            reach = min(dt_fluid * (1 + _REL_TOL) + tolerance * t_next, t_heap - now)
            late = dt_fluid
            for i in range(n_active):
                if late < finish_dt[i] <= reach:
                    late = finish_dt[i]
            t_next = now + late
        dt = t_next - now
        if n_active > 0 and dt > 0:
            for i in range(n_active):
                f = active[i]
                remaining[f] -= rate[f] * dt
        now = t_next
        if n_active > 0:
            limit = max(dt, dt_fluid if fluid else 0.0) * (1 + _REL_TOL)
            kept = 0
            n_done = 0
            for i in range(n_active):
                f = active[i]
                if finish_dt[i] <= limit or remaining[f] <= _REL_TOL * sub_bytes[f]:
                    done_subs[n_done] = f
                    n_done += 1
                    for j in range(path_start[f], path_start[f] + path_len[f]):
                        link = path_links[j]
                        link_count[link] -= np.int64(np.rint(weight[j])) if weighted else 1
                        if link_count[link] == 0:        # busy from busy_from to now
                            link_busy[link] += now - busy_from[link]
                        tau = min(tau, level[link])
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
                    stack, n_stack, t_next, kind, seconds, overhead, not_before, succ_ptr,
                    succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release,
                    op_start, op_finish, ht, hq, size, seq)
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
                            stack, 1, t_next, kind, seconds, overhead, not_before, succ_ptr,
                            succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release,
                            op_start, op_finish, ht, hq, size, seq)
                    continue
                active[n_active] = f
                n_active += 1
                is_new[f] = True
                for j in range(path_start[f], path_start[f] + path_len[f]):
                    link = path_links[j]
                    if link_count[link] == 0:
                        busy_from[link] = now
                    link_count[link] += np.int64(np.rint(weight[j])) if weighted else 1
                    if n_grown == grown.size:
                        grown = np.concatenate((grown, np.empty(grown.size, np.int64)))
                    grown[n_grown] = link
                    n_grown += 1
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
                        succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency, op_release,
                        op_start, op_finish, ht, hq, size, seq)
        if n_active == 0:
            ints[I_SOLVED] = 0                  # nothing to start from next time
        if changed and n_active > 0:
            if not _solve(active, n_active, path_start, path_len, path_links, weight,
                          weighted, capacity, rate, is_new, level, tau,
                          warm and ints[I_SOLVED] == 1, floats[F_SCAN], scratch, mark):
                status = NO_CAPACITY
                break
            ints[I_SOLVED] = 1
            for k in range(n_grown):                # a count only rises at activations
                link = grown[k]
                if link_count[link] > link_peak[link]:
                    link_peak[link] = link_count[link]
        events += 1
        steps += 1
    floats[F_NOW] = now
    ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE] = size, seq, events, n_active
    return status, ht, hq


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
