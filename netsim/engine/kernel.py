"""The compiled loop's solver that re-solves every draining flow when the set changes.

The executor's numpy loop pays a few dozen array passes, each with its Python and numpy call
overhead, at every event; a run where nearly every flow ends at its own time (log-normal
all-to-all, staggered joins, pipelined collectives) is then dominated by that overhead, not
by arithmetic. The compiled loop (:func:`netsim.engine.loop.run_events`) with this solver runs
the same events as compiled code over the executor's own arrays: the same merging windows,
the same max-min fair rates (progressive filling, one bottleneck link at a time in order of
its fair share), so its results equal the numpy loop's to rounding
(``tests/test_engine_conformance.py`` checks that on random schedules, with dependencies,
computes, barriers, release times, latencies, parallel paths and symmetry weights).

Each solve starts warm from the last one and touches only the links the draining flows
cross. The solver's steps (``new_state`` ... ``hand_back``) are the interface every solver
of the loop implements (engine.loop's docstring).
"""

from __future__ import annotations

import numpy as np

from .events import AVAILABLE, F_SCAN, I_SOLVED, _REL_TOL, links_off, njit

__all__ = ["AVAILABLE", "new_state", "start", "first_finish", "take_done", "add",
           "resolve", "end_event", "hand_back"]

_MARGIN = 1e-12                          # the warm start's margin below tau (maxmin._MARGIN)
# A solve fills one bottleneck link at a time when (links carrying flows)^2 is below
# floats[F_SCAN] times the flows to fill, else in parallel passes (_solve): the
# configuration's link_scan_factor (netsim.engine.config.EngineConfig).


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
    # the old flows' incidences on those links, grown as they are found
    link_of, r, w = np.empty(64, dtype=np.int64), np.empty(64), np.empty(64)
    m = 0
    for i in range(n_active):
        f = active[i]
        if not is_new[f]:
            for j in range(path_start[f], path_start[f] + path_len[f]):
                link = path_links[j]
                if mark[link]:
                    if m == link_of.size:
                        link_of = np.concatenate((link_of, np.empty(m, dtype=np.int64)))
                        r = np.concatenate((r, np.empty(m)))
                        w = np.concatenate((w, np.empty(m)))
                    link_of[m], r[m] = link, rate[f]
                    w[m] = weight[j] if weighted else 1.0
                    total_w[link] += w[m]
                    m += 1
    link_of, r, w = link_of[:m], r[:m], w[:m]
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


@njit(cache=True, inline="always")
def freeze_at(f, share, path_start, path_len, path_links, weight, weighted, remaining, count):
    """Flow f freezes at rate ``share`` in progressive filling: each link on its path has
    ``share`` (times the incidence's weight) less capacity ``remaining`` and counts the
    incidence's weight less among its rising flows (``count``)."""
    for j in range(path_start[f], path_start[f] + path_len[f]):
        w = weight[j] if weighted else 1.0
        remaining[path_links[j]] -= share * w
        count[path_links[j]] -= w


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
                freeze_at(f, m, path_start, path_len, path_links, weight, weighted,
                          remaining, count)
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
            freeze_at(f, share, path_start, path_len, path_links, weight, weighted,
                      remaining, count)
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
    used, n_used, any_new = _used_links(active, n_active, path_start, path_len, path_links,
                                        is_new, capacity, remaining, count, mark)
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
    if ok:
        _note_levels(active, n_active, path_start, path_len, path_links, weight, weighted,
                     capacity, rate, is_new, level, used, n_used, scratch[2], scratch[3])
    return ok


@njit(cache=True)
def _used_links(active, n_active, path_start, path_len, path_links, is_new, capacity,
                remaining, count, mark):
    """The links the draining flows cross, each once, with ``remaining`` at its capacity
    and ``count`` at 0; returns (links, how many, whether a flow is new). ``mark`` (links,
    all False) is work space, all False again on return."""
    any_new = False
    used = np.empty(64, dtype=np.int64)
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
    return used, n_used, any_new


@njit(cache=True)
def _note_levels(active, n_active, path_start, path_len, path_links, weight, weighted,
                 capacity, rate, is_new, level, used, n_used, load, top):
    """The saturation levels of this solution into ``level`` (maxmin.incidence_levels): a
    link's largest rate if its load reaches its capacity, else +inf; ``is_new`` is
    cleared. ``load`` and ``top`` are work space, one per link."""
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


# -- the solver's steps, called by engine.loop.run_events ---------------------------------

@njit(cache=True)
def new_state(n_links):
    """Work space: per link (the solve's), marks, and the smallest saturation level of
    the links that lost flows this event (``tau``)."""
    return np.empty((4, n_links)), np.zeros(n_links, dtype=np.bool_), np.full(1, np.inf)


@njit(cache=True, _nrt=False)
def start(n_active, now, paths, links, draining, st, ints, floats, warm):
    """Nothing to build: the numpy loop's rates are the last solution (its levels are
    not handed over, so the first solve here is cold)."""
    return True


@njit(cache=True, _nrt=False)
def first_finish(now, tolerance, t_heap, n_active, draining, st):
    """Each draining flow's time to finish into ``finish_dt``; returns the first finish
    (s, absolute), the event's time when ``tolerance`` merges completions (the last one
    due within the window, netsim.engine.tolerance, not after ``t_heap``) and the first
    finish from ``now`` as computed (``t_fluid - now`` may round to 0 late in a run)."""
    active, rate, finish_dt, remaining = draining[0], draining[1], draining[4], draining[7]
    dt_fluid = np.inf
    for i in range(n_active):
        f = active[i]
        finish_dt[i] = remaining[f] / rate[f]
        if finish_dt[i] < dt_fluid:
            dt_fluid = finish_dt[i]
    t_fluid = now + dt_fluid
    if tolerance > 0.0 and t_fluid <= t_heap:
        reach = min(dt_fluid * (1 + _REL_TOL) + tolerance * t_fluid, t_heap - now)
        late = dt_fluid
        for i in range(n_active):
            if late < finish_dt[i] <= reach:
                late = finish_dt[i]
        return t_fluid, now + late, dt_fluid
    return t_fluid, t_fluid, dt_fluid


@njit(cache=True, _nrt=False)
def take_done(now, before, limit, n_active, paths, links, draining, st):
    """Drain every flow up to ``now`` and take out those done by ``limit`` (their time
    to finish from ``before``) or nearly drained, keeping the others in order; returns
    (flows left, flows done). ``tau`` becomes the smallest saturation level of the links
    they leave."""
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    _, link_count, link_busy, busy_from, _ = links
    active, rate, level, finish_dt, done_subs, remaining = (
        draining[0], draining[1], draining[3], draining[4], draining[5], draining[7])
    dt = now - before
    if dt > 0:
        for i in range(n_active):
            f = active[i]
            remaining[f] -= rate[f] * dt
    tau = np.inf
    kept = 0
    n_done = 0
    for i in range(n_active):
        f = active[i]
        if finish_dt[i] <= limit or remaining[f] <= _REL_TOL * sub_bytes[f]:
            done_subs[n_done] = f
            n_done += 1
            links_off(f, now, path_start, path_len, path_links, weight, weighted,
                      link_count, link_busy, busy_from)
            for j in range(path_start[f], path_start[f] + path_len[f]):
                tau = min(tau, level[path_links[j]])
        else:
            active[kept] = f
            kept += 1
    st[2][0] = tau
    return kept, n_done


@njit(cache=True, _nrt=False)
def add(started, n_started, now, n_active, paths, draining, st):
    """The flows ``started[:n_started]`` start draining (at the end of the list); returns
    the draining count."""
    active, is_new = draining[0], draining[2]
    for k in range(n_started):
        active[n_active] = started[k]
        is_new[started[k]] = True
        n_active += 1
    return n_active


@njit(cache=True, inline="always")
def resolve(n_started, now, n_active, paths, capacity, draining, st, ints, floats, warm):
    """Max-min rates of every draining flow (:func:`_solve`), warm from the last solve
    when there is one and ``warm``; False if a flow meets a link with no capacity left."""
    path_start, path_len, path_links, weight, weighted, _ = paths
    active, rate, is_new, level = draining[0], draining[1], draining[2], draining[3]
    scratch, mark, tau = st
    if not _solve(active, n_active, path_start, path_len, path_links, weight, weighted,
                  capacity, rate, is_new, level, tau[0], warm and ints[I_SOLVED] == 1,
                  floats[F_SCAN], scratch, mark):
        return False
    ints[I_SOLVED] = 1
    return True


@njit(cache=True, _nrt=False)
def end_event(n_active, st, ints):
    """With nothing draining there is no solution to start from next time."""
    if n_active == 0:
        ints[I_SOLVED] = 0


@njit(cache=True, _nrt=False)
def hand_back(now, n_active, draining, st, ints):
    """The executor's arrays are up to date after every event: nothing to do."""
