"""The compiled event loop with incremental max-min: an event costs what it changes.

:func:`netsim.engine.kernel.run_events` re-solves the draining flows at every event (its
warm start keeps the rates below a cut, but it still passes over every draining incidence
three times). When thousands of flows drain together and each event moves few of their
rates, that is nearly all waste: on a 12x12 mesh all-to-all with log-normal sizes, a cold
re-solve after each of the 20,592 completions changes 16 rates in the median (3% on
average) of about 10,000. This loop keeps the solution between events and re-runs
progressive filling only where the event reaches.

What it keeps besides the kernel's state:

* per link, the draining flows crossing it, as a max-heap by rate (so its largest rate,
  and the flows above a rate, are found without a scan), and their summed rate
  (``load``, a running sum recomputed from the list every :data:`_RESCAN` updates);
* per flow, its remaining bytes as of the last time its rate changed, and its finish time
  in an indexed heap (with a second one for the time its remaining bytes fall to
  ``_REL_TOL`` of its size, which the kernel also counts as done). A flow whose rate does
  not move costs nothing at an event.

The refill (:func:`_refill`) is progressive filling in which every flow the event does not
reach is frozen at its rate in advance, and is brought back only when the filling proves
it wrong. Flows that start rise from zero; a link that a finishing flow leaves gets a
*check* at its old saturation level. Water rises over an indexed heap of the links the
rising flows cross, each at the level where it saturates given what the frozen flows
leave of it (a flow freezing only raises the levels of its other links, so those keys are
put right when they reach the top, not at every freeze). Then, in order of level ``t``:

* a link saturates at ``t``: if a frozen flow on it is faster than ``t``, that flow can
  not keep its rate (the link would be over capacity or unfair), so it joins the rising
  flows at ``t``, which it can since it was above ``t`` on every link it crosses; else
  the rising flows on the link freeze at ``t``;
* a check at a link's old level ``t`` finds the link no longer saturated: the flows
  that were bottlenecked there (rate ``t``) join the rising flows.

A frozen flow whose bottleneck nobody touched keeps a valid bottleneck (a saturated link
where no flow is faster); one whose bottleneck was touched got a check there; a flow that
froze in the refill froze on a saturated link with nobody faster. So every flow ends with a
bottleneck, no link is over capacity, and the rates are the max-min fair ones, which are
unique; the order of work is that of progressive filling, so the result is the same as a
cold solve's to rounding. A check finds its link still saturated to :data:`_SLACK` of
the level (not of the capacity: what it lets pass lands on the rates), "no flow faster"
is judged to :data:`_TOP`; a check is scheduled whenever a link is within :data:`_NEAR`
of its capacity, since a needless check costs time while a missed one would cost
exactness.
``tests/test_engine_conformance.py`` runs it (``EngineConfig(loop="incremental")``) on
random DAGs, symmetry weights, latencies, release floors and faults against the
reference, within the 1e-9 merge window and with the same events.

Numba note: helpers called per flow or per incidence are written out in the loops, or take
a batch per call, because each call (even inlined) paid reference counting per array
argument; that was half the time then. The helpers now compile with ``_nrt=False``, which
drops that cost from the calls that remain; the written-out copies stay as measured.
"""

from __future__ import annotations

import numpy as np

from .heaps import _heap_max_upto, _heap_pop, _heap_remove, _heap_set, _heap_set_many
from .kernel import (_ACTIVATE, _COMPLETE, _REL_TOL, DONE, F_NOW, F_TOLERANCE, I_ACTIVE,
                     I_EVENTS, I_HEAP, I_SEQ, I_SOLVED, NO_CAPACITY, PAUSED, _finish_ops,
                     _grown, _pop, _release, njit)

__all__ = ["run_events"]

#: A check finds its link still saturated at its old level t when the capacity left
#: there is at most this times t. Relative to t, not to the capacity: the slack a check
#: lets pass goes to the rates (the rising flows take it, or the flows at the top keep
#: less than their share), so ``capacity * 1e-12`` on a link of n flows left rates off by
#: up to n * 1e-12; past :data:`_TOP` a later check at the top rate then missed the flows
#: bottlenecked with it, and those kept a rate far from max-min (module docstring).
_SLACK = 1e-12
#: A link this close to its capacity (relative) gets a check when a refill touches it.
_NEAR = 1e-9
#: A rate within this (relative) of a link's largest rate counts as the largest.
_TOP = 1e-11
#: A link's load and top are recomputed from its list after this many running updates.
_RESCAN = 256
#: A re-solved rate within this (relative) of the flow's rate keeps the old one: the
#: difference is rounding, and keeping it spares the flow's finish time an update.
_KEEP = 1e-14


# The helpers below that are not inlined compile with ``_nrt=False``, as engine.heaps'
# do (its docstring says why and what that asks of them).


# -- per link: the draining flows crossing it ------------------------------------------

@njit(cache=True, _nrt=False)
def _lsift(link, i, lf_start, lf_n, lf_sub, lf_j, rate, inc_slot, inc_base, path_start):
    """Entry i of ``link``'s list (a max-heap by rate) moves up or down to its place."""
    base, n = lf_start[link], lf_n[link]
    g, jg = lf_sub[base + i], lf_j[base + i]
    r = rate[g]
    while True:
        if i > 0 and rate[lf_sub[base + ((i - 1) >> 1)]] < r:
            nxt = (i - 1) >> 1                 # up
        else:
            nxt = 2 * i + 1                    # down
            if nxt >= n:
                break
            if nxt + 1 < n and rate[lf_sub[base + nxt + 1]] > rate[lf_sub[base + nxt]]:
                nxt += 1
            if rate[lf_sub[base + nxt]] <= r:
                break
        h, jh = lf_sub[base + nxt], lf_j[base + nxt]
        lf_sub[base + i], lf_j[base + i] = h, jh
        inc_slot[inc_base[h] + jh - path_start[h]] = base + i
        i = nxt
    lf_sub[base + i], lf_j[base + i] = g, jg
    inc_slot[inc_base[g] + jg - path_start[g]] = base + i


@njit(cache=True, _nrt=False)
def _link_add(f, path_start, path_len, path_links, inc_base, inc_slot, lf_start, lf_n,
              lf_sub, lf_j, rate):
    for j in range(path_start[f], path_start[f] + path_len[f]):
        link = path_links[j]
        s = lf_start[link] + lf_n[link]
        lf_n[link] += 1
        lf_sub[s] = f
        lf_j[s] = j
        inc_slot[inc_base[f] + j - path_start[f]] = s
        _lsift(link, s - lf_start[link], lf_start, lf_n, lf_sub, lf_j, rate, inc_slot,
               inc_base, path_start)


@njit(cache=True, _nrt=False)
def _link_remove_one(f, j, link, path_start, inc_base, inc_slot, lf_start, lf_n, lf_sub,
                     lf_j, rate):
    s = inc_slot[inc_base[f] + j - path_start[f]]
    last = lf_start[link] + lf_n[link] - 1
    lf_n[link] -= 1
    if s != last:
        g, jg = lf_sub[last], lf_j[last]
        lf_sub[s] = g
        lf_j[s] = jg
        inc_slot[inc_base[g] + jg - path_start[g]] = s
        _lsift(link, s - lf_start[link], lf_start, lf_n, lf_sub, lf_j, rate, inc_slot,
               inc_base, path_start)


@njit(cache=True, inline="always")
def _top(link, lf_start, lf_n, lf_sub, rate):
    """The largest rate on ``link``: its list's root."""
    return rate[lf_sub[lf_start[link]]] if lf_n[link] > 0 else 0.0


@njit(cache=True, _nrt=False)
def _exact_load(link, lf_start, lf_n, lf_sub, lf_j, rate, weight, weighted):
    total = 0.0
    for s in range(lf_start[link], lf_start[link] + lf_n[link]):
        total += rate[lf_sub[s]] * (weight[lf_j[s]] if weighted else 1.0)
    return total


@njit(cache=True, _nrt=False)
def _faster(link, bar, strict, lf_start, lf_n, lf_sub, rate, state, out, stack):
    """The fixed flows on ``link`` with a rate above ``bar`` (or equal, unless
    ``strict``), found from the list's root down, into ``out``; returns how many.
    ``out`` and ``stack`` have room for every flow on the link."""
    base, n = lf_start[link], lf_n[link]
    n_out = 0
    if n == 0:
        return 0
    stack[0] = 0
    depth = 1
    while depth > 0:
        depth -= 1
        i = stack[depth]
        g = lf_sub[base + i]
        r = rate[g]
        if r < bar or (strict and r == bar):
            continue
        if state[g] == 0:
            out[n_out] = g
            n_out += 1
        child = 2 * i + 1
        if child < n:
            stack[depth] = child
            depth += 1
        if child + 1 < n:
            stack[depth] = child + 1
            depth += 1
    return n_out


@njit(cache=True, inline="always")
def _saturated(link, load, capacity):
    """Saturated, as far as scheduling a check goes: loose, since a needless check costs
    time only, while a missed one would keep a flow below its fair rate."""
    return load[link] >= capacity[link] * (1 - _NEAR)


@njit(cache=True, _nrt=False)
def _touch(link, capacity, load, touched, t_list, n_t, spare, cnt, hp, hpos, hkey, n_h,
           lf_start, lf_n, lf_sub, lf_j, rate, weight, weighted):
    """Start following ``link`` in this refill: what its fixed flows leave (``spare``),
    and a check at its old level if it was saturated (heap node ``n_links + link``)."""
    if touched[link]:
        return n_t, n_h
    touched[link] = True
    t_list[n_t] = link
    n_t += 1
    spare[link] = capacity[link] - load[link]
    cnt[link] = 0.0
    if lf_n[link] > 0 and _saturated(link, load, capacity):
        level = _top(link, lf_start, lf_n, lf_sub, rate)
        n_h = _heap_set(hp, hpos, hkey, n_h, capacity.size + link, level)
    return n_t, n_h


@njit(cache=True, _nrt=False)
def _unfreeze(flows, n_flows, record, orig, s_list, n_s, path_start, path_len, path_links,
              weight, weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt,
              hp, hpos, hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list,
              n_d, ch_head, ch_next, ch_flow, n_ch):
    """The flows ``flows[:n_flows]`` rise with the water from here (their rates before
    go to ``orig`` if ``record``): on each of their links their fixed rates become
    spare and they count among the rising flows (the links' levels are moved by
    :func:`_flush`). One call per batch: a call's cost is per array argument."""
    for q in range(n_flows):
        g = flows[q]
        if record:
            orig[g] = rate[g]
        s_list[n_s] = g
        n_s += 1
        state[g] = 1
        for j in range(path_start[g], path_start[g] + path_len[g]):
            link = path_links[j]
            w = weight[j] if weighted else 1.0
            if not touched[link]:              # _touch, written out: a call per
                touched[link] = True           # incidence costs reference counting
                t_list[n_t] = link
                n_t += 1
                spare[link] = capacity[link] - load[link]
                cnt[link] = 0.0
                if lf_n[link] > 0 and _saturated(link, load, capacity):
                    n_h = _heap_set(hp, hpos, hkey, n_h, capacity.size + link,
                                    rate[lf_sub[lf_start[link]]])
            spare[link] += rate[g] * w
            cnt[link] += w
            ch_next[n_ch] = ch_head[link]     # g joins the link's chain of rising flows
            ch_flow[n_ch] = g
            ch_head[link] = n_ch
            n_ch += 1
            if not dirty[link]:
                dirty[link] = True
                d_list[n_d] = link
                n_d += 1
    return n_t, n_h, n_d, n_ch, n_s


@njit(cache=True, _nrt=False)
def _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels):
    """Move each changed link to the level at which it now saturates (``levels`` is work
    space, one per link)."""
    n_move = 0
    for k in range(n_d):
        link = d_list[k]
        dirty[link] = False
        if cnt[link] >= 0.5:
            d_list[n_move] = link
            levels[n_move] = spare[link] / cnt[link]
            n_move += 1
    return _heap_set_many(hp, hpos, hkey, n_h, d_list, n_move, levels)


@njit(cache=True, _nrt=False)
def _refill(seeds, n_seeds, checks, check_level, n_checks, s_list, orig, state, path_start,
            path_len, path_links, weight, weighted, capacity, rate, load,
            lf_start, lf_n, lf_sub, lf_j, touched, spare, cnt, hp, hpos, hkey, dirty,
            updates, new_rate, ch_head, inc_base, inc_slot, work):
    """Progressive filling of what an event changed (module docstring); returns (ok, the
    number of flows in ``s_list``, whose rates before are in ``orig``).

    ``seeds[:n_seeds]``: flows that start (``orig`` -1, rate 0); ``checks[:n_checks]``:
    links left unsaturated by flows that ended, with their old level. Other flows keep
    their rates unless the filling shows they must move: a link saturating at a level
    below a fixed flow's rate brings that flow down into the filling, and a link found
    unsaturated at its old level lets the flows bottlenecked there rise. Levels live in
    an indexed heap (``hp``, ``hpos``, ``hkey``): node ``link`` is the level at which the
    link saturates, node ``n_links + link`` its check.
    """
    n_links = capacity.size
    t_list, d_list, out, stack, ch_next, ch_flow, levels = work
    n_t, n_h, n_d, n_s, n_ch = 0, 0, 0, 0, 0
    for k in range(n_checks):
        link = checks[k]
        n_t, n_h = _touch(link, capacity, load, touched, t_list, n_t, spare, cnt, hp,
                                  hpos, hkey, n_h, lf_start, lf_n, lf_sub, lf_j, rate, weight,
                                  weighted)
        n_h = _heap_set(hp, hpos, hkey, n_h, n_links + link, check_level[k])
    n_t, n_h, n_d, n_ch, n_s = _unfreeze(
        seeds, n_seeds, False, orig, s_list, n_s, path_start, path_len, path_links, weight,
        weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos,
        hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, n_d, ch_head,
        ch_next, ch_flow, n_ch)
    n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels)
    n_d = 0
    ok = True
    t = 0.0
    while n_h > 0:
        node = hp[0]
        x = hkey[node]
        n_h = _heap_pop(hp, hpos, hkey, n_h)
        if node >= n_links:
            link = node - n_links
            t = max(t, x)
            # still saturated at its old level? Judged relative to t, not to the capacity
            # (_SLACK): with capacity * 1e-12 on a link of ~100 flows, a slack of 6e-13
            # of the capacity passed as saturated; the one rising flow there took it and
            # froze 5e-11 above the 97 flows bottlenecked with it, more than _TOP, so the
            # next check, at its rate, left those 97 frozen and let it alone rise to
            # 1.15 times their rate (4x11 mesh, log-normal all-to-all, seed 1)
            if spare[link] - t * cnt[link] <= t * _SLACK:
                continue
            n_out = _faster(link, x * (1 - _TOP), False, lf_start, lf_n, lf_sub,
                                        rate, state, out, stack)
            n_t, n_h, n_d, n_ch, n_s = _unfreeze(
                out, n_out, True, orig, s_list, n_s, path_start, path_len, path_links, weight,
                weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp,
                hpos, hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, n_d,
                ch_head, ch_next, ch_flow, n_ch)
            n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels)
            n_d = 0
            continue
        link = node
        if cnt[link] < 0.5:
            continue
        level = spare[link] / cnt[link]
        if level != x:                         # its flows froze elsewhere since: its key
            n_h = _heap_set(hp, hpos, hkey, n_h, link, level)   # is stale; back in line
            continue
        t = max(t, x)
        # the link saturates at t: flows faster than t on it come down into the filling
        n_out = _faster(link, t * (1 + _TOP), True, lf_start, lf_n, lf_sub, rate,
                                    state, out, stack)
        n_t, n_h, n_d, n_ch, n_s = _unfreeze(
            out, n_out, True, orig, s_list, n_s, path_start, path_len, path_links, weight,
            weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos,
            hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, n_d, ch_head,
            ch_next, ch_flow, n_ch)
        if n_d:                                # its level rose; it comes back later
            n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels)
            n_d = 0
            continue
        if not t > 0.0:
            ok = False
            break
        c = ch_head[link]
        while c >= 0:
            g = ch_flow[c]
            c = ch_next[c]
            if state[g] != 1:
                continue
            state[g] = 2
            new_rate[g] = t                    # ``rate`` keeps the old ones until the end
            for j in range(path_start[g], path_start[g] + path_len[g]):
                other = path_links[j]       # its level rises (spare/cnt >= t): its key
                w = weight[j] if weighted else 1.0   # goes stale low, and is put right
                spare[other] -= t * w       # when it comes to the top (lazily: most
                cnt[other] -= w             # links take many such steps in between)
        cnt[link] = 0.0
    while n_h > 0:                             # leave the heap empty
        n_h = _heap_pop(hp, hpos, hkey, n_h)
    for k in range(n_t):
        touched[t_list[k]] = False
        ch_head[t_list[k]] = -1
    if not ok:
        for k in range(n_s):
            state[s_list[k]] = 0
        return False, n_s
    # keep a rate that moved by rounding only; move loads and tops with the rest
    for k in range(n_s):
        g = s_list[k]
        state[g] = 0
        old = max(orig[g], 0.0)
        new = new_rate[g]
        if orig[g] >= 0.0 and abs(new - old) <= _KEEP * old:
            continue
        rate[g] = new
        for j in range(path_start[g], path_start[g] + path_len[g]):
            link = path_links[j]
            # g moves in the link's list: _lsift written out, since this runs per
            # incidence of every flow whose rate moved, and a call there (ten arrays,
            # reference-counted) doubled the 12x12 log-normal run (15.7 s -> 30 s)
            base, n = lf_start[link], lf_n[link]
            i = inc_slot[inc_base[g] + j - path_start[g]] - base
            while True:
                if new > old:
                    if i == 0:
                        break
                    nxt = (i - 1) >> 1
                    if rate[lf_sub[base + nxt]] >= new:
                        break
                else:
                    nxt = 2 * i + 1
                    if nxt >= n:
                        break
                    if nxt + 1 < n and rate[lf_sub[base + nxt + 1]] > rate[lf_sub[base + nxt]]:
                        nxt += 1
                    if rate[lf_sub[base + nxt]] <= new:
                        break
                h, jh = lf_sub[base + nxt], lf_j[base + nxt]
                lf_sub[base + i], lf_j[base + i] = h, jh
                inc_slot[inc_base[h] + jh - path_start[h]] = base + i
                i = nxt
            lf_sub[base + i], lf_j[base + i] = g, j
            inc_slot[inc_base[g] + j - path_start[g]] = base + i
            load[link] += (new - old) * (weight[j] if weighted else 1.0)
            updates[link] += 1
            if updates[link] >= _RESCAN:      # bound the running sum's drift
                updates[link] = 0
                load[link] = _exact_load(link, lf_start, lf_n, lf_sub, lf_j, rate, weight,
                                         weighted)
    return True, n_s


@njit(cache=True)
def run_events(max_events, kind, seconds, overhead, not_before, succ_ptr, succ_idx, waiting,
               op_subs_ptr, op_subs_idx, subs_left, op_release, op_start, op_finish,
               sub_op, sub_bytes, sub_latency, path_start, path_len, path_links, weight,
               weighted, remaining, rate, is_new, level, sub_done, active, capacity,
               link_count, link_busy, busy_from, link_peak, ht, hq, ints, floats, warm,
               stack, finish_at, done_subs):
    """:func:`netsim.engine.kernel.run_events` (same arguments, same state handed back),
    each event repairing the last solution (module docstring). ``level`` and ``warm``
    are not used; ``finish_at`` holds each draining flow's finish time (s)."""
    n_links = capacity.size
    n_sub = sub_op.size
    now, tolerance = floats[F_NOW], floats[F_TOLERANCE]
    size, seq, events, n_active = ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE]
    # per link, room for every incidence of the schedule; per incidence, its slot
    inc_base = np.zeros(n_sub + 1, dtype=np.int64)
    lf_start = np.zeros(n_links + 1, dtype=np.int64)
    for f in range(n_sub):
        inc_base[f + 1] = inc_base[f] + path_len[f]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            lf_start[path_links[j] + 1] += 1
    for link in range(n_links):
        lf_start[link + 1] += lf_start[link]
    n_inc = inc_base[n_sub]
    lf_sub = np.empty(n_inc, dtype=np.int64)
    lf_j = np.empty(n_inc, dtype=np.int64)
    inc_slot = np.empty(n_inc, dtype=np.int64)
    lf_n = np.zeros(n_links, dtype=np.int64)
    load = np.zeros(n_links)
    updates = np.zeros(n_links, dtype=np.int64)
    opened = np.full(n_links, -1.0)       # per link: largest rate that left it unsaturated
    opened_list = np.empty(64, dtype=np.int64)
    check_level = np.empty(64)
    touched = np.zeros(n_links, dtype=np.bool_)
    spare = np.empty(n_links)
    cnt = np.empty(n_links)
    hp = np.empty(2 * n_links, dtype=np.int64)     # the refill's levels (indexed heap)
    hpos = np.full(2 * n_links, -1, dtype=np.int64)
    hkey = np.empty(2 * n_links)
    dirty = np.zeros(n_links, dtype=np.bool_)
    ch_head = np.full(n_links, -1, dtype=np.int64)
    # the refill's lists, each as long as it can get: touched links, changed links, flows
    # found on a link, a search stack, per link the chains of rising flows, levels
    work = (np.empty(n_links, dtype=np.int64), np.empty(n_links, dtype=np.int64),
            np.empty(n_sub + 1, dtype=np.int64), np.empty(n_sub + 2, dtype=np.int64),
            np.empty(n_inc + 1, dtype=np.int64), np.empty(n_inc + 1, dtype=np.int64),
            np.empty(n_links))
    grown = np.empty(64, dtype=np.int64)
    t_at = np.empty(n_sub)                # remaining[f] is f's remaining bytes at t_at[f]
    fheap = np.empty(n_sub, dtype=np.int64)
    fpos = np.full(n_sub, -1, dtype=np.int64)
    # the same flows by the time their remaining bytes fall to _REL_TOL of their size,
    # when the kernel counts them as done too
    nheap = np.empty(n_sub, dtype=np.int64)
    hstack = np.empty(n_sub, dtype=np.int64)       # the approximate mode's heap walk
    npos = np.full(n_sub, -1, dtype=np.int64)
    nearly = np.empty(n_sub)
    n_nh = 0
    times, times2 = np.empty(n_sub), np.empty(n_sub)
    apos = np.full(n_sub, -1, dtype=np.int64)
    state = np.zeros(n_sub, dtype=np.int8)  # in a refill: 0 fixed, 1 rising, 2 frozen
    orig = np.empty(n_sub)
    new_rate = np.empty(n_sub)
    seeds = np.empty(n_sub, dtype=np.int64)
    s_list = np.empty(n_sub, dtype=np.int64)
    n_fh = 0
    n_s = 0
    for i in range(n_active):             # the hand-over's draining flows, solved cold
        f = active[i]
        apos[f] = i
        rate[f] = 0.0                     # before it enters the lists, ordered by rate
        _link_add(f, path_start, path_len, path_links, inc_base, inc_slot, lf_start, lf_n,
                  lf_sub, lf_j, rate)
        seeds[i] = f
        orig[f] = -1.0
    status = PAUSED
    n_s = 0
    if n_active > 0:
        ok, n_s = _refill(seeds, n_active, opened_list, check_level, 0, s_list, orig, state,
                          path_start, path_len, path_links, weight, weighted, capacity, rate,
                          load, lf_start, lf_n, lf_sub, lf_j, touched, spare,
                          cnt, hp, hpos, hkey, dirty, updates, new_rate, ch_head,
                          inc_base, inc_slot, work)
        if not ok:
            status = NO_CAPACITY
            max_events = 0
    for k in range(n_s):
        f = s_list[k]
        t_at[f] = now
        n_fh = _heap_set(fheap, fpos, finish_at, n_fh, f, now + remaining[f] / rate[f])
        n_nh = _heap_set(nheap, npos, nearly, n_nh, f,
                         now + (remaining[f] - _REL_TOL * sub_bytes[f]) / rate[f])
    n_s = 0
    steps = 0
    while steps < max_events:
        changed = False
        n_grown = 0
        n_opened = 0
        n_seeds = 0
        t_heap = ht[0] if size > 0 else np.inf
        t_fluid = finish_at[fheap[0]] if n_fh > 0 else np.inf
        fluid = t_fluid <= t_heap
        t_next = t_fluid if fluid else t_heap
        if t_next == np.inf:
            status = DONE
            break
        if fluid and tolerance > 0.0:     # approximate: merge at the last due (tolerance.py)
            reach = min(t_fluid + (t_fluid - now) * _REL_TOL + tolerance * t_fluid, t_heap)
            t_next = max(t_fluid, _heap_max_upto(fheap, finish_at, n_fh, reach, hstack))
        dt = t_next - now
        dt_fluid = t_fluid - now
        before = now
        now = t_next
        if n_fh > 0:
            limit = max(dt, dt_fluid if fluid else 0.0) * (1 + _REL_TOL)
            n_done = 0
            while n_fh > 0 and finish_at[fheap[0]] - before <= limit:
                done_subs[n_done] = fheap[0]
                n_done += 1
                n_nh = _heap_remove(nheap, npos, nearly, n_nh, fheap[0])
                n_fh = _heap_pop(fheap, fpos, finish_at, n_fh)
            while n_nh > 0 and nearly[nheap[0]] <= now:   # nearly drained: done as well
                done_subs[n_done] = nheap[0]
                n_done += 1
                n_fh = _heap_remove(fheap, fpos, finish_at, n_fh, nheap[0])
                n_nh = _heap_pop(nheap, npos, nearly, n_nh)
            if n_done:
                changed = True
                n_stack = 0
                for k in range(n_done):
                    f = done_subs[k]
                    for j in range(path_start[f], path_start[f] + path_len[f]):
                        link = path_links[j]
                        w = weight[j] if weighted else 1.0
                        link_count[link] -= np.int64(np.rint(w)) if weighted else 1
                        if link_count[link] == 0:        # busy from busy_from to now
                            link_busy[link] += now - busy_from[link]
                        was = _saturated(link, load, capacity)
                        _link_remove_one(f, j, link, path_start, inc_base, inc_slot, lf_start,
                                         lf_n, lf_sub, lf_j, rate)
                        load[link] -= rate[f] * w
                        if lf_n[link] == 0:
                            load[link] = 0.0
                        if opened[link] >= 0.0:
                            opened[link] = max(opened[link], rate[f])
                        elif was:                # its bottlenecked flows may rise
                            opened[link] = rate[f]
                            if n_opened == opened_list.size:
                                opened_list = np.concatenate((opened_list, opened_list))
                            opened_list[n_opened] = link
                            n_opened += 1
                    last = active[n_active - 1]      # out of the draining list
                    active[apos[f]] = last
                    apos[last] = apos[f]
                    apos[f] = -1
                    n_active -= 1
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
                            succ_idx, waiting, op_subs_ptr, op_subs_idx, sub_latency,
                            op_release, op_start, op_finish, ht, hq, size, seq)
                    continue
                active[n_active] = f
                apos[f] = n_active
                n_active += 1
                rate[f] = 0.0
                t_at[f] = now
                _link_add(f, path_start, path_len, path_links, inc_base, inc_slot, lf_start,
                          lf_n, lf_sub, lf_j, rate)
                seeds[n_seeds] = f
                n_seeds += 1
                orig[f] = -1.0                      # starts now
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
        if changed and n_active > 0:
            if check_level.size < n_opened:
                check_level = np.empty(opened_list.size)
            for k in range(n_opened):               # checks at the old levels
                link = opened_list[k]
                check_level[k] = max(opened[link], _top(link, lf_start, lf_n, lf_sub, rate))
            n_s = 0
            if n_seeds + n_opened > 0:
                ok, n_s = _refill(seeds, n_seeds, opened_list, check_level, n_opened, s_list,
                                  orig, state, path_start, path_len, path_links, weight,
                                  weighted, capacity, rate, load, lf_start, lf_n, lf_sub,
                                  lf_j, touched, spare, cnt, hp, hpos, hkey, dirty, updates,
                                  new_rate, ch_head, inc_base, inc_slot, work)
                if not ok:
                    status = NO_CAPACITY
                    break
            n_moved = 0
            for k in range(n_s):                     # new finish times where rates moved
                f = s_list[k]
                if orig[f] < 0.0:
                    is_new[f] = False
                elif rate[f] == orig[f]:
                    continue
                else:
                    remaining[f] -= orig[f] * (now - t_at[f])
                    t_at[f] = now
                seeds[n_moved] = f                   # (seeds are spent: reused)
                times[n_moved] = now + remaining[f] / rate[f]
                times2[n_moved] = now + (remaining[f] - _REL_TOL * sub_bytes[f]) / rate[f]
                n_moved += 1
            n_fh = _heap_set_many(fheap, fpos, finish_at, n_fh, seeds, n_moved, times)
            n_nh = _heap_set_many(nheap, npos, nearly, n_nh, seeds, n_moved, times2)
            n_s = 0
            for k in range(n_grown):                 # a count only rises at activations
                link = grown[k]
                if link_count[link] > link_peak[link]:
                    link_peak[link] = link_count[link]
        for k in range(n_opened):
            opened[opened_list[k]] = -1.0
        events += 1
        steps += 1
    for i in range(n_active):                    # hand back each flow's bytes as of now
        f = active[i]
        remaining[f] -= rate[f] * (now - t_at[f])
        is_new[f] = False
    ints[I_SOLVED] = 1
    floats[F_NOW] = now
    ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE] = size, seq, events, n_active
    return status, ht, hq
