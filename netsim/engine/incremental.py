"""The compiled loop's incremental max-min solver: an event costs what it changes.

engine.kernel re-solves the draining flows at every event (its warm start keeps the rates
below a cut, but it still passes over every draining incidence three times). When
thousands of flows drain together and each event moves few of their rates, that is nearly
all waste. This solver keeps the solution between events and re-runs progressive filling
only where the event reaches (the loop is engine.loop's).

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

The helpers compile with ``_nrt=False`` (engine.heaps' docstring says what that asks of
them): a call then costs no reference counting per array argument, so even the steps
taken per incidence (:func:`_touch`, :func:`_lsift`, ``kernel.freeze_at``) are plain calls.
"""

from __future__ import annotations

import numpy as np

from .heaps import _heap_max_upto, _heap_pop, _heap_remove, _heap_set, _heap_set_many
from .events import _REL_TOL, I_SOLVED, links_off, njit
from .kernel import freeze_at

__all__ = ["new_state", "start", "first_finish", "take_done", "add", "resolve", "end_event",
           "hand_back"]

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
            n_t, n_h = _touch(link, capacity, load, touched, t_list, n_t, spare, cnt, hp,
                              hpos, hkey, n_h, lf_start, lf_n, lf_sub, lf_j, rate, weight,
                              weighted)
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
def _lift(flows, n_flows, orig, s_list, n_s, path_start, path_len, path_links, weight,
          weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos,
          hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, ch_head, ch_next, ch_flow,
          n_ch, levels):
    """The fixed flows ``flows[:n_flows]`` rise with the water from here (:func:`_unfreeze`,
    their rates before to ``orig``) and the levels of their links move (:func:`_flush`);
    returns the counts and whether any level moved."""
    n_t, n_h, n_d, n_ch, n_s = _unfreeze(
        flows, n_flows, True, orig, s_list, n_s, path_start, path_len, path_links, weight,
        weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos,
        hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, 0, ch_head, ch_next,
        ch_flow, n_ch)
    n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels)
    return n_t, n_h, n_ch, n_s, n_d > 0


@njit(cache=True, _nrt=False)
def _freeze(link, t, state, new_rate, path_start, path_len, path_links, weight, weighted,
            spare, cnt, ch_head, ch_next, ch_flow):
    """``link`` saturates at level ``t``: the rising flows on it (its chain) freeze at
    ``t``. Their other links' levels rise (spare / cnt >= t), so those heap keys go stale
    low and are put right when they come to the top (lazily: most links take many such
    steps in between)."""
    c = ch_head[link]
    while c >= 0:
        g = ch_flow[c]
        c = ch_next[c]
        if state[g] != 1:
            continue
        state[g] = 2
        new_rate[g] = t                    # ``rate`` keeps the old ones until the end
        freeze_at(g, t, path_start, path_len, path_links, weight, weighted, spare, cnt)
    cnt[link] = 0.0


@njit(cache=True, _nrt=False)
def _rise(n_links, orig, s_list, n_s, state, path_start, path_len, path_links, weight,
          weighted, capacity, rate, load, lf_start, lf_n, lf_sub, lf_j, touched, spare, cnt,
          hp, hpos, hkey, n_h, dirty, new_rate, ch_head, work, n_t, n_ch):
    """The water rises over the heap of levels until it is empty (module docstring);
    returns (ok, touched links, flows in ``s_list``). Node ``link`` is the level at which
    the link saturates, node ``n_links + link`` a check at its old level."""
    t_list, d_list, out, stack, ch_next, ch_flow, levels = work
    t = 0.0
    while n_h > 0:
        node = hp[0]
        x = hkey[node]
        n_h = _heap_pop(hp, hpos, hkey, n_h)
        if node >= n_links:
            link = node - n_links
            t = max(t, x)
            # still saturated at its old level? Judged relative to t (_SLACK)
            if spare[link] - t * cnt[link] <= t * _SLACK:
                continue
            n_out = _faster(link, x * (1 - _TOP), False, lf_start, lf_n, lf_sub, rate, state,
                            out, stack)
            n_t, n_h, n_ch, n_s, _ = _lift(
                out, n_out, orig, s_list, n_s, path_start, path_len, path_links, weight,
                weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp,
                hpos, hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, ch_head,
                ch_next, ch_flow, n_ch, levels)
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
        n_out = _faster(link, t * (1 + _TOP), True, lf_start, lf_n, lf_sub, rate, state, out,
                        stack)
        n_t, n_h, n_ch, n_s, raised = _lift(
            out, n_out, orig, s_list, n_s, path_start, path_len, path_links, weight, weighted,
            capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos, hkey,
            n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, ch_head, ch_next, ch_flow, n_ch,
            levels)
        if raised:                             # its level rose; it comes back later
            continue
        if not t > 0.0:
            while n_h > 0:                     # leave the heap empty
                n_h = _heap_pop(hp, hpos, hkey, n_h)
            return False, n_t, n_s
        _freeze(link, t, state, new_rate, path_start, path_len, path_links, weight, weighted,
                spare, cnt, ch_head, ch_next, ch_flow)
    return True, n_t, n_s


@njit(cache=True, _nrt=False)
def _settle(s_list, n_s, orig, state, new_rate, path_start, path_len, path_links, weight,
            weighted, rate, load, updates, lf_start, lf_n, lf_sub, lf_j, inc_base, inc_slot):
    """The refill's flows take their new rates, keeping a rate that moved by rounding
    only; each one that moved takes its place in its links' lists, and their loads move."""
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
            _lsift(link, inc_slot[inc_base[g] + j - path_start[g]] - lf_start[link],
                   lf_start, lf_n, lf_sub, lf_j, rate, inc_slot, inc_base, path_start)
            load[link] += (new - old) * (weight[j] if weighted else 1.0)
            updates[link] += 1
            if updates[link] >= _RESCAN:      # bound the running sum's drift
                updates[link] = 0
                load[link] = _exact_load(link, lf_start, lf_n, lf_sub, lf_j, rate, weight,
                                         weighted)


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
    n_t, n_h = 0, 0
    for k in range(n_checks):
        link = checks[k]
        n_t, n_h = _touch(link, capacity, load, touched, t_list, n_t, spare, cnt, hp, hpos,
                          hkey, n_h, lf_start, lf_n, lf_sub, lf_j, rate, weight, weighted)
        n_h = _heap_set(hp, hpos, hkey, n_h, n_links + link, check_level[k])
    n_t, n_h, n_d, n_ch, n_s = _unfreeze(
        seeds, n_seeds, False, orig, s_list, 0, path_start, path_len, path_links, weight,
        weighted, capacity, load, rate, state, touched, t_list, n_t, spare, cnt, hp, hpos,
        hkey, n_h, lf_start, lf_n, lf_sub, lf_j, dirty, d_list, 0, ch_head, ch_next, ch_flow,
        0)
    n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hpos, hkey, n_h, levels)
    ok, n_t, n_s = _rise(n_links, orig, s_list, n_s, state, path_start, path_len, path_links,
                         weight, weighted, capacity, rate, load, lf_start, lf_n, lf_sub, lf_j,
                         touched, spare, cnt, hp, hpos, hkey, n_h, dirty, new_rate, ch_head,
                         work, n_t, n_ch)
    for k in range(n_t):
        touched[t_list[k]] = False
        ch_head[t_list[k]] = -1
    if not ok:
        for k in range(n_s):
            state[s_list[k]] = 0
        return False, n_s
    _settle(s_list, n_s, orig, state, new_rate, path_start, path_len, path_links, weight,
            weighted, rate, load, updates, lf_start, lf_n, lf_sub, lf_j, inc_base, inc_slot)
    return True, n_s


@njit(cache=True)
def new_state(n_sub, n_links, paths):
    """The loop's state beyond the executor's arrays (module docstring): per link its
    draining flows, per flow its finish times, the refill's work space. Scalars in ``sc``:
    the sizes of the two finish heaps, the links opened this event."""
    path_start, path_len, path_links = paths[0], paths[1], paths[2]
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
    lists = (inc_base, np.empty(n_inc, dtype=np.int64), lf_start,
             np.zeros(n_links, dtype=np.int64), np.empty(n_inc, dtype=np.int64),
             np.empty(n_inc, dtype=np.int64))
    # per link: load, updates since its rescan, the largest rate that left it
    # unsaturated this event (-1: none), opened links and their check levels
    per_link = (np.zeros(n_links), np.zeros(n_links, dtype=np.int64),
                np.full(n_links, -1.0), np.empty(n_links, dtype=np.int64),
                np.empty(n_links))
    # the refill's levels (indexed heap) and marks; its lists, each as long as it can
    # get: touched links, changed links, flows found on a link, a search stack, per link
    # the chains of rising flows, levels
    refill = (np.zeros(n_links, dtype=np.bool_), np.empty(n_links), np.empty(n_links),
              np.empty(2 * n_links, dtype=np.int64), np.full(2 * n_links, -1, dtype=np.int64),
              np.empty(2 * n_links), np.zeros(n_links, dtype=np.bool_),
              np.full(n_links, -1, dtype=np.int64),
              (np.empty(n_links, dtype=np.int64), np.empty(n_links, dtype=np.int64),
               np.empty(n_sub + 1, dtype=np.int64), np.empty(n_sub + 2, dtype=np.int64),
               np.empty(n_inc + 1, dtype=np.int64), np.empty(n_inc + 1, dtype=np.int64),
               np.empty(n_links)))
    # per flow: remaining[f] is f's remaining bytes at t_at[f]; its finish heap, and the
    # same flows by the time their remaining bytes fall to _REL_TOL of their size, when
    # the kernel counts them as done too; the approximate mode's heap walk; its place in
    # the draining list; in a refill its state (0 fixed, 1 rising, 2 frozen), rate before
    # and after; seeds and the refill's flows
    per_flow = (np.empty(n_sub), np.empty(n_sub, dtype=np.int64),
                np.full(n_sub, -1, dtype=np.int64), np.empty(n_sub, dtype=np.int64),
                np.full(n_sub, -1, dtype=np.int64), np.empty(n_sub),
                np.empty(n_sub, dtype=np.int64), np.empty(n_sub), np.empty(n_sub),
                np.full(n_sub, -1, dtype=np.int64), np.zeros(n_sub, dtype=np.int8),
                np.empty(n_sub), np.empty(n_sub), np.empty(n_sub, dtype=np.int64),
                np.empty(n_sub, dtype=np.int64))
    return lists, per_link, refill, per_flow, np.zeros(3, dtype=np.int64)


@njit(cache=True, _nrt=False)
def add(started, n_started, now, n_active, paths, draining, st):
    """The flows ``started[:n_started]`` start draining at ``now``, rising from rate 0 at
    the next refill; returns the draining count."""
    path_start, path_len, path_links = paths[0], paths[1], paths[2]
    active, rate = draining[0], draining[1]
    inc_base, inc_slot, lf_start, lf_n, lf_sub, lf_j = st[0]
    t_at, apos, orig, seeds = st[3][0], st[3][9], st[3][11], st[3][13]
    for k in range(n_started):
        f = started[k]
        active[n_active] = f
        apos[f] = n_active
        n_active += 1
        rate[f] = 0.0                     # before it enters the lists, ordered by rate
        t_at[f] = now
        _link_add(f, path_start, path_len, path_links, inc_base, inc_slot, lf_start, lf_n,
                  lf_sub, lf_j, rate)
        seeds[k] = f
        orig[f] = -1.0                    # starts now
    return n_active


@njit(cache=True, _nrt=False)
def take_done(now, before, limit, n_active, paths, links, draining, st):
    """Take out the flows due by ``before + limit`` or nearly drained by ``now``, and
    open (for a check at the next refill) the saturated links they leave; returns the
    draining count and how many are done (in ``draining[5]``)."""
    path_start, path_len, path_links, weight, weighted = paths[:5]
    capacity, link_count, link_busy, busy_from = links[:4]
    active, rate, finish_at, done_subs = draining[0], draining[1], draining[4], draining[5]
    inc_base, inc_slot, lf_start, lf_n, lf_sub, lf_j = st[0]
    load, _, opened, opened_list, _ = st[1]
    fheap, fpos, nheap, npos, nearly, apos = (st[3][1], st[3][2], st[3][3], st[3][4],
                                              st[3][5], st[3][9])
    sc = st[4]
    n_fh, n_nh, n_opened = sc[0], sc[1], sc[2]
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
    for k in range(n_done):
        f = done_subs[k]
        links_off(f, now, path_start, path_len, path_links, weight, weighted, link_count,
                  link_busy, busy_from)
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            w = weight[j] if weighted else 1.0
            was = _saturated(link, load, capacity)
            _link_remove_one(f, j, link, path_start, inc_base, inc_slot, lf_start, lf_n,
                             lf_sub, lf_j, rate)
            load[link] -= rate[f] * w
            if lf_n[link] == 0:
                load[link] = 0.0
            if opened[link] >= 0.0:
                opened[link] = max(opened[link], rate[f])
            elif was:                    # its bottlenecked flows may rise
                opened[link] = rate[f]
                opened_list[n_opened] = link
                n_opened += 1
        last = active[n_active - 1]      # out of the draining list
        active[apos[f]] = last
        apos[last] = apos[f]
        apos[f] = -1
        n_active -= 1
    sc[0], sc[1], sc[2] = n_fh, n_nh, n_opened
    return n_active, n_done


@njit(cache=True, _nrt=False)
def resolve(n_seeds, now, n_active, paths, capacity, draining, st, ints, floats, warm):
    """Refill what changed (the flows ``seeds[:n_seeds]`` that started, the links opened)
    and move the finish times of the flows whose rates moved; False if a flow meets a
    link with no capacity left."""
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    rate, is_new, finish_at = draining[1], draining[2], draining[4]
    remaining = draining[7]
    inc_base, inc_slot, lf_start, lf_n, lf_sub, lf_j = st[0]
    load, updates, opened, opened_list, check_level = st[1]
    touched, spare, cnt, hp, hpos, hkey, dirty, ch_head, work = st[2]
    (t_at, fheap, fpos, nheap, npos, nearly, _, times, times2, _, state, orig, new_rate,
     seeds, s_list) = st[3]
    sc = st[4]
    n_opened = sc[2]
    for k in range(n_opened):               # checks at the old levels
        link = opened_list[k]
        check_level[k] = max(opened[link], _top(link, lf_start, lf_n, lf_sub, rate))
    if n_seeds + n_opened == 0:
        return True
    ok, n_s = _refill(seeds, n_seeds, opened_list, check_level, n_opened, s_list, orig,
                      state, path_start, path_len, path_links, weight, weighted, capacity,
                      rate, load, lf_start, lf_n, lf_sub, lf_j, touched, spare, cnt, hp,
                      hpos, hkey, dirty, updates, new_rate, ch_head, inc_base, inc_slot,
                      work)
    if not ok:
        return False
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
    sc[0] = _heap_set_many(fheap, fpos, finish_at, sc[0], seeds, n_moved, times)
    sc[1] = _heap_set_many(nheap, npos, nearly, sc[1], seeds, n_moved, times2)
    return True


@njit(cache=True, _nrt=False)
def start(n_active, now, paths, links, draining, st, ints, floats, warm):
    """Take over the draining flows (all new) and solve them cold; False if a flow meets
    a link with no capacity left."""
    active, started = draining[0], draining[6]
    for i in range(n_active):
        started[i] = active[i]
    add(started, n_active, now, 0, paths, draining, st)
    return n_active == 0 or resolve(n_active, now, n_active, paths, links[0], draining, st,
                                    ints, floats, warm)


@njit(cache=True, _nrt=False)
def first_finish(now, tolerance, t_heap, n_active, draining, st):
    """The first finish time (s) of a draining flow, and the event's time when
    ``tolerance`` merges completions: the last one due within the window
    (netsim.engine.tolerance), not after ``t_heap``."""
    finish_at = draining[4]
    fheap, hstack, n_fh = st[3][1], st[3][6], st[4][0]
    t_fluid = finish_at[fheap[0]] if n_fh > 0 else np.inf
    if tolerance > 0.0 and t_fluid <= t_heap:
        reach = min(t_fluid + (t_fluid - now) * _REL_TOL + tolerance * t_fluid, t_heap)
        late = _heap_max_upto(fheap, finish_at, n_fh, reach, hstack)
        return t_fluid, max(t_fluid, late), t_fluid - now
    return t_fluid, t_fluid, t_fluid - now


@njit(cache=True, _nrt=False)
def end_event(n_active, st, ints):
    """The links opened this event are closed again."""
    opened, opened_list, sc = st[1][2], st[1][3], st[4]
    for k in range(sc[2]):
        opened[opened_list[k]] = -1.0
    sc[2] = 0


@njit(cache=True, _nrt=False)
def hand_back(now, n_active, draining, st, ints):
    """Each draining flow's remaining bytes as of ``now`` into the executor's array."""
    active, rate, is_new, remaining = draining[0], draining[1], draining[2], draining[7]
    t_at = st[3][0]
    for i in range(n_active):
        f = active[i]
        remaining[f] -= rate[f] * (now - t_at[f])
        is_new[f] = False
    ints[I_SOLVED] = 1
