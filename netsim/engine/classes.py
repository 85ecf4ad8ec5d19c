"""The compiled loop's incremental max-min solver: an event costs what it changes, per class.

engine.kernel re-solves every draining flow at each event. When thousands of flows drain
together and an event moves few of their rates, that is nearly all waste. This solver
keeps the solution between events and re-runs progressive filling only where the event
reaches (the loop is engine.loop's).

**The refill, on flows.** Every flow the event does not reach stays frozen at its rate and
comes back only when the filling proves that rate wrong. Flows that start rise from zero;
a link that a finishing flow leaves gets a *check* at its old level. The water rises over
an indexed heap of the links the rising flows cross, each keyed by the level at which it
saturates given what the frozen flows leave of it. In order of level ``t``:

* a link saturates at ``t``: a frozen flow on it faster than ``t`` cannot keep its rate
  (the link would be over capacity, or unfair), so it rises with the water from ``t``,
  which it can, being above ``t`` on every link it crosses; otherwise the rising flows on
  the link stop at ``t`` with it as their bottleneck;
* a check at a link's old level ``t`` finds it no longer saturated: the flows
  bottlenecked there at that level rise.

A frozen flow whose bottleneck no one touched keeps a valid bottleneck (a saturated link on
which no flow is faster); one whose bottleneck was touched got a check there; a flow that
stopped in the refill stopped on a saturated link with no one faster. So every flow ends
with a bottleneck and no link is over capacity: the rates are the max-min fair ones, which
are unique, and the work follows progressive filling's order, so they equal a cold solve's
to rounding. A check finds its link still saturated to :data:`_SLACK` of the level, "no
flow faster" is judged to :data:`_TOP`, and a link within :data:`_NEAR` of its capacity
gets a check when a refill touches it (a needless check costs time, a missed one would
cost exactness).

**Classes.** The rates that move come in blocks: flows held back by the same link at the
same level rise and settle together (``benchmarks/measure_ripple.py``). This solver keeps
those blocks, so that a level change costs per class and per link, not per flow.

A *class* is a set of draining flows with one rate and one bottleneck link (``CB``: a
saturated link on which no flow is faster) that every member crosses. Per class it keeps:

* its rate ``RR`` and its progress ``PA`` (bytes each member has drained since an origin)
  as of ``TA``; a member finishes when the progress reaches its threshold ``thr`` (its
  bytes left plus the progress when it joined), so a class's next finish is one key in an
  indexed heap over classes, and a rate change moves one key, not one per member;
* its members (a linked list) and, per link its members cross, how many do (an
  *entry*: class, link, count, on the class's list and the link's, found by hash).

A link's load is the sum over its entries of rate x count, its largest rate the largest
rate among them. The refill (:func:`_refill`) is the filling above with classes in place
of flows:

* new flows of an event form one class that rises from zero; a link that a finishing
  flow leaves gets a check at its old level, and a link touched while saturated a check
  at its largest rate (:func:`_begin`, :func:`_touch`);
* a check that finds its link unsaturated lets the classes bottlenecked there rise
  (:func:`_check`; a class bottlenecked elsewhere keeps a valid bottleneck unless that
  link is touched too, in which case it has a check of its own);
* a link saturating at level ``t`` first brings down the fixed classes faster than ``t``
  on it, whole (:func:`_bring_down`): a member that does not cross the link rises again
  from ``t`` with the others and settles where it was unless something changed, which is
  sound because at water level ``t`` every flow not yet frozen has a fair rate of at least
  ``t``. Taking only the members on the link would split the class, and nearly all such
  splits are merged back by the end of the same refill.
  A class brought down is *pinned* (:func:`_pin`): it rises with the water on that link
  only, and stays counted at its old rate ``r`` on its other links; its bottleneck,
  saturated at ``r`` and untouched, caps it at ``r`` (:func:`_cap_reached`), and it rises
  there only if something else touches that link in the refill. While the water ``t`` is
  below ``r`` that counts more than it carries, so a link's level there is never above its
  true one: a link that saturates with a pinned class counted on it brings it down there
  too (the same rule), and a link that does not cannot stop it before its true level
  would. When the water passes ``r`` (:func:`_unfreeze`) the class rises on every link. A
  pinned class that stops at a level other than ``r`` gives its links the difference
  (:func:`_freeze_pinned`), which is what the whole demotion would have cost; one that
  stops at ``r`` on its own bottleneck, as about half of them do, touched one link
  instead of all of them.
* then it freezes the rising classes on it at ``t`` with the link as their bottleneck
  (:func:`_settle`); of a class with members off the link only those on it stop (the
  class *splits*) and the others rise on.

So the work of a refill is per class and per distinct link of the classes that move;
members move between classes only on splits. After the refill (:func:`_apply`) a class
merges with every class of the same rate (to :data:`_SAME`) whose members all cross its
bottleneck, which then serves them all (:func:`_merge_equal`: the smaller joins the
larger, its members' thresholds shifted by the difference of progress); this keeps
classes from fragmenting. The result is the filling above on a grouping in which every
member of a class has the same rate and bottleneck, so its argument carries over. (The
same refill flow by flow, engine.incremental, ran beside this one until classes carried
symmetry weights: on the 16x16 log-normal all-to-all it took 137-170 s where classes take
20.4 s, ``benchmarks/compare_loops.py``.) On a symmetry quotient
a member stands for as many flows on each link as its path's weight there: an entry
counts both its members (to tell whether a class lies wholly on a link) and the flows they
stand for (the link's load and level). ``tests/test_engine_conformance.py`` runs it
(``EngineConfig(loop="classes")``) against the reference on random cases, within the 1e-9
merge window and with the same events. What each choice measured is recorded in
``benchmarks/bench_irregular.py``.
"""

from __future__ import annotations

import numpy as np

from .heaps import _heap_max_upto, _heap_remove, _heap_set, _put, _rise, _take
from .events import _REL_TOL, I_SOLVED, flows_at, links_off, njit

__all__ = ["new_state", "start", "first_finish", "take_done", "add", "resolve", "end_event",
           "hand_back"]

#: A check finds its link still saturated at its old level t when the capacity left there
#: is at most this times t. Relative to t, not to the capacity: the slack a check lets
#: pass goes to the rates, so ``capacity * 1e-12`` on a link of n flows left rates off by
#: up to n * 1e-12, and past :data:`_TOP` a later check at the top rate then missed the
#: flows bottlenecked with it, which kept a rate far from max-min.
_SLACK = 1e-12
#: A link this close to its capacity (relative) gets a check when a refill touches it.
_NEAR = 1e-9
#: A rate within this (relative) of a link's largest rate counts as the largest.
_TOP = 1e-11
#: A new rate within this (relative) of the old one keeps the old one: the difference is
#: rounding, and keeping it spares the class's finish keys an update.
_KEEP = 1e-14
#: Classes whose rates are this close (relative) are one rate, apart by rounding.
_SAME = 1e-14
#: A link's load is recomputed from its list after this many rate updates, a guard only:
#: the running sum is compensated (:func:`_add_load`).
_LOAD_RESCAN = 1 << 14

# class rows (int): size, first member, first entry, bottleneck link, refill state (0 fixed,
# 1 rising, 2 frozen, 3 pinned, 4 pinned and capped by its bottleneck: _pin), member with
# the least threshold, member due first by the nearly-drained rule, in this refill's list,
# minimum to rescan, alive
CS, CM, CE, CB, CST, CMIN, CNEAR, CINS, CDIRTY, CALIVE = range(10)
# class rows (float): rate (B/s), progress (B) as of TA (s), rate before the refill, after
RR, PA, TA, ORIG, NEW = range(5)
# entry rows: class, link, the flows the class's members stand for on the link (their
# symmetry weights summed: the members where paths are unweighted), next and previous on
# the class's list, next and previous on the link's list, counted among the link's rising
# (a pinned class's entries only, during a refill), members crossing the link
EC, EL, EK, ECN, ECP, ELN, ELP, EM, EN = range(9)
# flow rows: class (-1 when not draining), next and previous member
FC, FN, FP = range(3)

# The helpers below that are not inlined compile with ``_nrt=False``, as engine.heaps'
# do (its docstring says why and what that asks of them).


@njit(cache=True, inline="always")
def _slot(key, bits):
    """Fibonacci hashing of a (class, link) key into a table of 2**bits slots."""
    x = key * np.int64(-7046029254386353131)
    return (x >> np.int64(64 - bits)) & ((np.int64(1) << bits) - 1)


@njit(cache=True, inline="always")
def _push(rows, nxt, prv, x, heads, h):
    """Put x first on the doubly linked list ``heads[h]`` whose links are the rows ``nxt``
    and ``prv`` of ``rows`` (the class and link lists of entries, a class's members)."""
    first = heads[h]
    rows[nxt, x], rows[prv, x] = first, -1
    if first >= 0:
        rows[prv, first] = x
    heads[h] = x


@njit(cache=True, inline="always")
def _unlink(rows, nxt, prv, x, heads, h):
    """Take x off the doubly linked list ``heads[h]`` (:func:`_push`'s)."""
    n, p = rows[nxt, x], rows[prv, x]
    if p >= 0:
        rows[nxt, p] = n
    else:
        heads[h] = n
    if n >= 0:
        rows[prv, n] = p


@njit(cache=True, _nrt=False)
def _count(c, link, k, w, n_links, htab, bits, ei, ci, lhead, efree, tops):
    """Add ``k`` members of class c on ``link``, standing for ``w`` flows there (the
    entry is made or dropped as its count of members leaves or reaches zero)."""
    key = c * n_links + link
    mask = htab.size - 1
    i = _slot(key, bits)
    while True:
        e = htab[i]
        if e < 0 or (ei[EC, e] == c and ei[EL, e] == link):
            break
        i = (i + 1) & mask
    if e < 0:                                  # a new entry, first on both lists
        tops[1] -= 1
        e = efree[tops[1]]
        htab[i] = e
        ei[EC, e], ei[EL, e], ei[EK, e], ei[EM, e], ei[EN, e] = c, link, 0, 0, 0
        _push(ei, ECN, ECP, e, ci[CE], c)
        _push(ei, ELN, ELP, e, lhead, link)
    ei[EK, e] += w
    ei[EN, e] += k
    if ei[EN, e] != 0:
        return
    _unlink(ei, ECN, ECP, e, ci[CE], c)        # off both lists
    _unlink(ei, ELN, ELP, e, lhead, link)
    efree[tops[1]] = e
    tops[1] += 1
    while True:                                # out of the table: shift the run back
        j = (i + 1) & mask                     # (linear probing's deletion)
        while True:
            g = htab[j]
            if g < 0:
                htab[i] = -1
                return
            home = _slot(ei[EC, g] * n_links + ei[EL, g], bits)
            stays = (i < home <= j) if i <= j else (home > i or home <= j)
            if not stays:
                htab[i] = g
                i = j
                break
            j = (j + 1) & mask


@njit(cache=True, _nrt=False)
def _find(c, link, n_links, htab, bits, ei):
    """The entry of class c on ``link`` (-1 if its members do not cross it)."""
    mask = htab.size - 1
    i = _slot(c * n_links + link, bits)
    while True:
        e = htab[i]
        if e < 0 or (ei[EC, e] == c and ei[EL, e] == link):
            return e
        i = (i + 1) & mask


@njit(cache=True, _nrt=False)
def _new_class(ci, cf, cfree, tops):
    tops[0] -= 1
    c = cfree[tops[0]]
    ci[CS, c], ci[CM, c], ci[CE, c], ci[CB, c], ci[CST, c] = 0, -1, -1, -1, 0
    ci[CMIN, c], ci[CNEAR, c], ci[CINS, c], ci[CDIRTY, c] = -1, -1, 0, 0
    ci[CALIVE, c] = 1
    return c


@njit(cache=True, inline="always")
def _add_member(f, c, fm, ci, thr, sub_bytes):
    fm[FC, f] = c
    _push(fm, FN, FP, f, ci[CM], c)
    ci[CS, c] += 1
    if ci[CDIRTY, c] == 0:
        m = ci[CMIN, c]
        if m < 0 or thr[f] < thr[m]:
            ci[CMIN, c] = f
        m = ci[CNEAR, c]
        if m < 0 or thr[f] - _REL_TOL * sub_bytes[f] < thr[m] - _REL_TOL * sub_bytes[m]:
            ci[CNEAR, c] = f


@njit(cache=True, inline="always")
def _drop_member(f, c, fm, ci):
    _unlink(fm, FN, FP, f, ci[CM], c)
    fm[FC, f] = -1
    ci[CS, c] -= 1
    if ci[CMIN, c] == f or ci[CNEAR, c] == f:
        ci[CDIRTY, c] = 1


@njit(cache=True, _nrt=False)
def _rescan(c, fm, ci, thr, sub_bytes):
    """The members due first of class c, found again."""
    best, near = -1, -1
    tb, tn = np.inf, np.inf
    f = ci[CM, c]
    while f >= 0:
        if thr[f] < tb:
            best, tb = f, thr[f]
        x = thr[f] - _REL_TOL * sub_bytes[f]
        if x < tn:
            near, tn = f, x
        f = fm[FN, f]
    ci[CMIN, c], ci[CNEAR, c], ci[CDIRTY, c] = best, near, 0


@njit(cache=True, _nrt=False)
def _refresh(c, fm, ci, cf, thr, sub_bytes, fheap, fpos, fkey, nheap, npos, nkey, hsize,
             cfree, tops):
    """Put class c's finish keys right (or drop it if it has no members left); ``hsize``
    holds the two heaps' sizes."""
    if ci[CALIVE, c] == 0:
        return
    if ci[CS, c] == 0:
        hsize[0] = _heap_remove(fheap, fpos, fkey, hsize[0], c)
        hsize[1] = _heap_remove(nheap, npos, nkey, hsize[1], c)
        ci[CALIVE, c] = 0
        cfree[tops[0]] = c
        tops[0] += 1
        return
    if ci[CDIRTY, c]:
        _rescan(c, fm, ci, thr, sub_bytes)
    r = cf[RR, c]
    m, q = ci[CMIN, c], ci[CNEAR, c]
    hsize[0] = _heap_set(fheap, fpos, fkey, hsize[0], c,
                         cf[TA, c] + (thr[m] - cf[PA, c]) / r)
    hsize[1] = _heap_set(nheap, npos, nkey, hsize[1], c,
                         cf[TA, c] + (thr[q] - _REL_TOL * sub_bytes[q] - cf[PA, c]) / r)


@njit(cache=True, _nrt=False)
def _split(c, link, lfl_win, lfl, path_start, path_len, path_links, weight, weighted, fm,
           ci, cf, thr, sub_bytes, n_links, htab, bits, ei, lhead, efree, cfree, tops):
    """The members of class c that cross ``link`` leave it for a new class (same rate,
    progress and bottleneck); returns the new class. They are found in the link's window
    of ``lfl`` (:func:`_open`), narrowed first past flows not draining at either end, or,
    when the class is the smaller of the two, among its members: on a 384-host leaf-spine
    all-to-all a split read 392 flows of a window on average, and about a third of those
    reads went when small classes walked their own members instead."""
    d = _new_class(ci, cf, cfree, tops)
    for r in range(5):
        cf[r, d] = cf[r, c]
    ci[CB, d], ci[CST, d] = ci[CB, c], ci[CST, c]
    pinned = ci[CST, c] >= 3                  # d's entries counted where c's are
    lo, hi = lfl_win[0, link], lfl_win[1, link]
    while lo < hi and fm[FC, lfl[lo]] < 0:
        lo += 1
    while hi > lo and fm[FC, lfl[hi - 1]] < 0:
        hi -= 1
    lfl_win[0, link], lfl_win[1, link] = lo, hi
    f = ci[CM, c]
    if ci[CS, c] * path_len[f] < hi - lo:     # (a member's path: its cost to test)
        while f >= 0:
            g = f
            f = fm[FN, f]
            for j in range(path_start[g], path_start[g] + path_len[g]):
                if path_links[j] == link:
                    _move(g, c, d, pinned, path_start, path_len, path_links, weight,
                          weighted, fm, ci, thr, sub_bytes, n_links, htab, bits, ei, lhead,
                          efree, tops)
                    break
        return d
    for s in range(lo, hi):
        f = lfl[s]
        if fm[FC, f] == c:
            _move(f, c, d, pinned, path_start, path_len, path_links, weight, weighted, fm,
                  ci, thr, sub_bytes, n_links, htab, bits, ei, lhead, efree, tops)
    return d


@njit(cache=True, inline="always")
def _move(f, c, d, pinned, path_start, path_len, path_links, weight, weighted, fm, ci, thr,
          sub_bytes, n_links, htab, bits, ei, lhead, efree, tops):
    """Flow f leaves class c for class d, with its counts on its links (and, for a
    pinned class, the marks of the links where it rose)."""
    _drop_member(f, c, fm, ci)
    _add_member(f, d, fm, ci, thr, sub_bytes)
    for j in range(path_start[f], path_start[f] + path_len[f]):
        other = path_links[j]
        w = flows_at(j, weight, weighted)
        lifted = pinned and ei[EM, _find(c, other, n_links, htab, bits, ei)] == 1
        _count(c, other, -1, -w, n_links, htab, bits, ei, ci, lhead, efree, tops)
        _count(d, other, 1, w, n_links, htab, bits, ei, ci, lhead, efree, tops)
        if lifted:
            ei[EM, _find(d, other, n_links, htab, bits, ei)] = 1


@njit(cache=True, inline="always")
def _open(f, link, lfl_start, lfl_win, lfl):
    """Widen ``link``'s window of ``lfl`` to hold flow f, which starts draining. The
    window holds every draining flow on the link (lfl is sorted by flow within a link),
    so a split reads the flows in flight, not every flow the run ever puts on the link:
    on a 1,024-rank ring all-reduce over a fat-tree that is 2,047 per host link, and
    scanning them all at each of the thousand splits per step took 28 s of a 32 s run."""
    lo, hi = lfl_start[link], lfl_start[link + 1]
    while lo < hi:                             # lfl's slot of f: binary search
        mid = (lo + hi) >> 1
        if lfl[mid] < f:
            lo = mid + 1
        else:
            hi = mid
    if lo < lfl_win[0, link]:
        lfl_win[0, link] = lo
    if lo + 1 > lfl_win[1, link]:
        lfl_win[1, link] = lo + 1


@njit(cache=True, _nrt=False)
def _merge(b, a, fm, ci, cf, thr, n_links, htab, bits, ei, lhead, efree, cfree, tops):
    """Class b (same rate and bottleneck, both with progress as of the same time) joins
    class a and is freed (its heap keys must be dropped by the caller)."""
    shift = cf[PA, a] - cf[PA, b]
    f = ci[CM, b]
    last = -1
    while f >= 0:
        fm[FC, f] = a
        thr[f] += shift
        last = f
        f = fm[FN, f]
    if last >= 0:                              # b's members go in front of a's
        h = ci[CM, a]
        fm[FN, last] = h
        if h >= 0:
            fm[FP, h] = last
        ci[CM, a] = ci[CM, b]
    ci[CS, a] += ci[CS, b]
    ci[CDIRTY, a] = 1
    e = ci[CE, b]
    while e >= 0:
        nxt = ei[ECN, e]
        link, k, w = ei[EL, e], ei[EN, e], ei[EK, e]
        _count(a, link, k, w, n_links, htab, bits, ei, ci, lhead, efree, tops)
        _count(b, link, -k, -w, n_links, htab, bits, ei, ci, lhead, efree, tops)
        e = nxt
    ci[CS, b], ci[CM, b] = 0, -1


@njit(cache=True, _nrt=False)
def _tops(link, lhead, ei, cf, ci):
    """The largest rate on ``link``, and the largest of the fixed classes bottlenecked
    there (-1 if none): a check there can only let those rise, so it is skipped when
    they are not the fastest. One pass over the link's list."""
    top, mine = 0.0, -1.0
    e = lhead[link]
    while e >= 0:
        c = ei[EC, e]
        r = cf[RR, c]
        if r > top:
            top = r
        if ci[CB, c] == link and ci[CST, c] == 0 and r > mine:
            mine = r
        e = ei[ELN, e]
    return top, mine


@njit(cache=True, _nrt=False)
def _exact_load(link, lhead, ei, cf):
    total = 0.0
    e = lhead[link]
    while e >= 0:
        total += cf[RR, ei[EC, e]] * ei[EK, e]
        e = ei[ELN, e]
    return total


@njit(cache=True, inline="always")
def _add_load(link, x, load):
    """Add x (B/s) to ``link``'s load, a compensated running sum (Neumaier): column 0
    holds the sum, column 1 the rounding it lost, so the load is their sum to about one
    rounding however many updates it took. A plain running sum drifts by a rounding per
    update and had to be recomputed from the link's list every 256 updates; on a 384-host
    leaf-spine all-to-all, where a link carries thousands of classes, the recomputations
    were a fifth of the run (``_LOAD_RESCAN``). :func:`_load_of` reads it."""
    s = load[link, 0]
    t = s + x
    if abs(s) >= abs(x):
        load[link, 1] += (s - t) + x
    else:
        load[link, 1] += (x - t) + s
    load[link, 0] = t


@njit(cache=True, inline="always")
def _load_of(link, load):
    """``link``'s load (B/s): the compensated sum and its lost rounding (_add_load)."""
    return load[link, 0] + load[link, 1]


@njit(cache=True, inline="always")
def _touch(link, check, ci, cf, ei, capacity, load, lhead, touched, t_list, n_t, spare, cnt,
           hp, hval, hpos, n_h):
    """A link's first touch in a refill: its spare capacity at the rates before, nothing
    rising on it yet, and, if ``check`` and it is saturated, a check at its largest rate
    (where the classes bottlenecked there may rise)."""
    if not touched[link]:
        touched[link] = True
        t_list[n_t] = link
        n_t += 1
        spare[link] = capacity[link] - _load_of(link, load)
        cnt[link] = 0.0
        if (check and lhead[link] >= 0
                and _load_of(link, load) >= capacity[link] * (1 - _NEAR)):
            top, mine = _tops(link, lhead, ei, cf, ci)
            if mine >= top * (1 - _TOP):
                n_h = _put(hp, hval, hpos, n_h, capacity.size + link, top)
    return n_t, n_h


@njit(cache=True, inline="always")
def _lift(link, k, r, spare, cnt, dirty, d_list, n_d):
    """k members at rate r on a touched link rise with the water from here: their rate
    becomes spare and they count among the rising (the link's level is flushed later)."""
    spare[link] += r * k
    cnt[link] += k
    if not dirty[link]:
        dirty[link] = True
        d_list[n_d] = link
        n_d += 1
    return n_d


@njit(cache=True, _nrt=False)
def _unfreeze(c, record, ci, cf, ei, capacity, load, lhead, touched, t_list, n_t, spare,
              cnt, hp, hval, hpos, n_h, dirty, d_list, n_d, s_list, n_s):
    """Class c rises with the water from here: on each of its links its fixed rate
    becomes spare and its members count among the rising (a pinned class, whose water
    passed its rate, only where it did not rise already)."""
    if record:
        cf[ORIG, c] = cf[RR, c]
    if ci[CINS, c] == 0:
        ci[CINS, c] = 1
        s_list[n_s] = c
        n_s += 1
    ci[CST, c] = 1
    r = cf[RR, c]
    e = ci[CE, c]
    while e >= 0:
        if ei[EM, e]:
            ei[EM, e] = 0
        else:
            link = ei[EL, e]
            n_t, n_h = _touch(link, True, ci, cf, ei, capacity, load, lhead, touched,
                              t_list, n_t, spare, cnt, hp, hval, hpos, n_h)
            n_d = _lift(link, ei[EK, e], r, spare, cnt, dirty, d_list, n_d)
        e = ei[ECN, e]
    return n_t, n_h, n_d, n_s


@njit(cache=True, _nrt=False)
def _pin(c, e, ci, cf, ei, spare, cnt, dirty, d_list, n_d, s_list, n_s, pheap, ppos, pkey,
         n_p, n_links, htab, bits):
    """Fixed class c, faster than the water on the saturating link of its entry e, is
    *pinned* (module docstring): it rises with the water on that link, and stays counted
    at its rate on its other links until the water passes that rate or one of them
    saturates below it. Its bottleneck, saturated at its rate when the refill began, caps
    it there (state 4): unless that link is touched by then, the class stops at its rate
    when the water reaches it, without the link being read (:func:`_cap_reached`). Lifting
    it on its bottleneck at once, as on the saturating link, read that link's list three
    times per pin: on the k=16 fat-tree with 50,000 random flows, 54 pins per event."""
    r = cf[RR, c]
    cf[ORIG, c] = r
    if ci[CINS, c] == 0:
        ci[CINS, c] = 1
        s_list[n_s] = c
        n_s += 1
    ei[EM, e] = 1
    n_d = _lift(ei[EL, e], ei[EK, e], r, spare, cnt, dirty, d_list, n_d)
    b = ci[CB, c]
    if b >= 0 and b != ei[EL, e] and _find(c, b, n_links, htab, bits, ei) >= 0:
        ci[CST, c] = 4
        n_p = _heap_set(pheap, ppos, pkey, n_p, c, r)
    else:
        ci[CST, c] = 3
        n_p = _heap_set(pheap, ppos, pkey, n_p, c, r * (1 + _TOP))
    return n_d, n_s, n_p


@njit(cache=True, _nrt=False)
def _cap_reached(c, ci, cf, ei, capacity, load, lhead, touched, t_list, n_t, spare, cnt,
                 hp, hval, hpos, n_h, dirty, d_list, n_d, pheap, ppos, pkey, n_p, n_links,
                 htab, bits):
    """The water reaches the rate r of class c, pinned and capped by its bottleneck b
    (:func:`_pin`). If nothing touched b in this refill, b is still saturated with c at
    r: c stops there at r, as it would have had it risen on b all along. Otherwise c
    rises on b from here (b's level, from its spare and what rises on it, does not
    depend on when c joined) and is a pinned class like any other."""
    b = ci[CB, c]
    r = cf[ORIG, c]
    if not touched[b]:
        n_t, n_h, n_p = _freeze_pinned(c, r, b, ci, cf, ei, capacity, load, lhead, touched,
                                       t_list, n_t, spare, cnt, hp, hval, hpos, n_h, pheap,
                                       ppos, pkey, n_p)
        return n_t, n_h, n_p, n_d
    ci[CST, c] = 3
    e = _find(c, b, n_links, htab, bits, ei)
    if ei[EM, e] == 0:                         # (b saturated below r lifted it already)
        ei[EM, e] = 1
        n_d = _lift(b, ei[EK, e], r, spare, cnt, dirty, d_list, n_d)
    n_p = _heap_set(pheap, ppos, pkey, n_p, c, r * (1 + _TOP))
    return n_t, n_h, n_p, n_d


@njit(cache=True, _nrt=False)
def _flush(dirty, d_list, n_d, spare, cnt, hp, hval, hpos, n_h):
    """Move each changed link to the level at which it now saturates."""
    for k in range(n_d):
        f = d_list[k]
        dirty[f] = False
        if cnt[f] >= 0.5:
            n_h = _put(hp, hval, hpos, n_h, f, spare[f] / cnt[f])
    return n_h


@njit(cache=True, inline="always")
def _stop(other, k, t, spare, cnt, hp, hval, hpos, n_h):
    """k rising members stop at level t on link ``other``: its level rises, or it leaves
    the heap when nothing rises on it any more; returns the heap's size."""
    spare[other] -= t * k
    cnt[other] -= k
    i = hpos[other]
    if i >= 0:
        if cnt[other] >= 0.5:                  # its level rises
            _rise(hp, hval, hpos, n_h, i, other, spare[other] / cnt[other])
        else:                                  # no rising class left on it
            n_h = _take(hp, hval, hpos, n_h, i)
    return n_h


@njit(cache=True, _nrt=False)
def _freeze(c, t, link, ci, cf, ei, spare, cnt, hp, hval, hpos, n_h):
    """Class c stops at level t with ``link`` as its bottleneck: its links' levels rise,
    each moving down the heap from where it sits, and a link left without rising classes
    leaves it. Both are cheap there (mostly near the leaves) and would cost a sift from
    the top later: on the 12x12 log-normal all-to-all, 7.1M pops became 2.7M and the run
    3.0 s instead of 3.2 s, the 16x16 one 16.6 s instead of 23.5 s. Returns the heap's
    size."""
    ci[CST, c] = 2
    ci[CB, c] = link
    cf[NEW, c] = t
    e = ci[CE, c]
    while e >= 0:
        n_h = _stop(ei[EL, e], ei[EK, e], t, spare, cnt, hp, hval, hpos, n_h)
        e = ei[ECN, e]
    return n_h


@njit(cache=True, _nrt=False)
def _freeze_pinned(c, t, link, ci, cf, ei, capacity, load, lhead, touched, t_list, n_t,
                   spare, cnt, hp, hval, hpos, n_h, pheap, ppos, pkey, n_p):
    """Pinned class c stops at level t with ``link`` as its bottleneck: where it rose,
    as :func:`_freeze`; where it stayed counted at its old rate, that rate gives way to t
    (nothing to do if t is that rate: the rate is kept)."""
    ci[CST, c] = 2
    ci[CB, c] = link
    cf[NEW, c] = t
    n_p = _heap_remove(pheap, ppos, pkey, n_p, c)
    r = cf[ORIG, c]
    same = abs(t - r) <= _KEEP * r
    e = ci[CE, c]
    while e >= 0:
        other, k = ei[EL, e], ei[EK, e]
        if ei[EM, e]:
            ei[EM, e] = 0
            n_h = _stop(other, k, t, spare, cnt, hp, hval, hpos, n_h)
        elif not same:
            n_t, n_h = _touch(other, True, ci, cf, ei, capacity, load, lhead, touched,
                              t_list, n_t, spare, cnt, hp, hval, hpos, n_h)
            spare[other] += (r - t) * k
            if hpos[other] >= 0 and cnt[other] >= 0.5:
                n_h = _put(hp, hval, hpos, n_h, other, spare[other] / cnt[other])
        e = ei[ECN, e]
    return n_t, n_h, n_p


@njit(cache=True, inline="always")
def _begin(seed, checks, check_level, n_checks, ci, cf, ei, capacity, load, lhead, touched,
           t_list, spare, cnt, hp, hval, hpos, dirty, d_list, s_list):
    """The refill's start: the checks at their old levels, and the class of new flows
    rising from zero; returns the counts (touched links, heap, classes moved)."""
    n_links = capacity.size
    n_t, n_h, n_d, n_s = 0, 0, 0, 0
    for k in range(n_checks):                  # (its check is at its old level)
        link = checks[k]
        n_t, n_h = _touch(link, False, ci, cf, ei, capacity, load, lhead, touched, t_list,
                          n_t, spare, cnt, hp, hval, hpos, n_h)
        n_h = _put(hp, hval, hpos, n_h, n_links + link, check_level[k])
    if seed >= 0:
        n_t, n_h, n_d, n_s = _unfreeze(seed, False, ci, cf, ei, capacity, load, lhead,
                                       touched, t_list, n_t, spare, cnt, hp, hval, hpos, n_h,
                                       dirty, d_list, n_d, s_list, n_s)
    n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hval, hpos, n_h)
    return n_t, n_h, n_s


@njit(cache=True, inline="always")
def _check(link, t, x, ci, cf, ei, capacity, load, lhead, touched, t_list, n_t, spare, cnt,
           hp, hval, hpos, n_h, dirty, d_list, s_list, n_s):
    """A check at ``link``'s old level x, reached by the water at t: if the link is no
    longer saturated, the fixed classes bottlenecked there at that level rise."""
    if spare[link] - t * cnt[link] <= t * _SLACK:
        return n_t, n_h, n_s                   # still saturated there (to the level:
                                               # _SLACK)
    n_d = 0
    e = lhead[link]
    while e >= 0:
        c = ei[EC, e]
        e = ei[ELN, e]
        if ci[CST, c] == 0 and ci[CB, c] == link and cf[RR, c] >= x * (1 - _TOP):
            n_t, n_h, n_d, n_s = _unfreeze(c, True, ci, cf, ei, capacity, load, lhead,
                                           touched, t_list, n_t, spare, cnt, hp, hval, hpos,
                                           n_h, dirty, d_list, n_d, s_list, n_s)
    n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hval, hpos, n_h)
    return n_t, n_h, n_s


@njit(cache=True, inline="always")
def _bring_down(link, t, ci, cf, ei, lhead, spare, cnt, dirty, d_list, s_list, n_s, pheap,
                ppos, pkey, n_p, htab, bits):
    """``link`` saturates at t: the fixed classes faster than t on it come down, pinned
    (module docstring), and the pinned classes counted at their rate on it rise there;
    returns how many links' levels changed (0: the link saturates at t indeed)."""
    n_links = lhead.size
    n_d = 0
    bar = t * (1 + _TOP)
    e = lhead[link]
    while e >= 0:
        c = ei[EC, e]
        here = e
        e = ei[ELN, e]
        if not cf[RR, c] > bar:
            continue
        if ci[CST, c] == 0:
            n_d, n_s, n_p = _pin(c, here, ci, cf, ei, spare, cnt, dirty, d_list, n_d, s_list,
                                 n_s, pheap, ppos, pkey, n_p, n_links, htab, bits)
        elif ci[CST, c] >= 3 and ei[EM, here] == 0:
            ei[EM, here] = 1
            n_d = _lift(link, ei[EK, here], cf[RR, c], spare, cnt, dirty, d_list, n_d)
    return n_d, n_s, n_p


@njit(cache=True, inline="always")
def _settle(link, t, s_list, n_s, capacity, load, touched, t_list, n_t, spare, cnt, hp, hval,
            hpos, n_h, flows, fm, ci, cf, thr, sub_bytes, pool, ei, lhead, pinned, n_p):
    """The rising classes on ``link``, saturated at t, stop there with it as their
    bottleneck; of a class with members off the link only those on it stop (it splits).
    ``flows``: the per-link flow lists and the paths; ``pool``: the entries' hash table
    and the free rows; ``pinned``: the heap of pinned classes by rate. (Grouped: a call
    of more than 30 arguments cannot be inlined.)"""
    lfl_win, lfl, path_start, path_len, path_links, weight, weighted = flows
    htab, bits, efree, cfree, tops = pool
    pheap, ppos, pkey = pinned
    n_links = capacity.size
    e = lhead[link]
    while e >= 0:
        c = ei[EC, e]
        k = ei[EN, e]
        st = ci[CST, c]
        if not (st == 1 or (st >= 3 and ei[EM, e] == 1)):
            e = ei[ELN, e]
            continue
        e = ei[ELN, e]
        if k != ci[CS, c]:                     # only its members on the link stop
            c = _split(c, link, lfl_win, lfl, path_start, path_len, path_links, weight,
                       weighted, fm, ci, cf, thr, sub_bytes, n_links, htab, bits, ei, lhead,
                       efree, cfree, tops)
            ci[CINS, c] = 1
            s_list[n_s] = c
            n_s += 1
        if st >= 3:
            n_t, n_h, n_p = _freeze_pinned(c, t, link, ci, cf, ei, capacity, load, lhead,
                                           touched, t_list, n_t, spare, cnt, hp, hval, hpos,
                                           n_h, pheap, ppos, pkey, n_p)
        else:
            n_h = _freeze(c, t, link, ci, cf, ei, spare, cnt, hp, hval, hpos, n_h)
    cnt[link] = 0.0
    return n_t, n_h, n_s, n_p


@njit(cache=True, inline="always")
def _undo(s_list, n_s, ci, ei):
    """A refill that failed leaves every class fixed at its old rate."""
    for k in range(n_s):
        c = s_list[k]
        ci[CINS, c] = 0
        if ci[CST, c] >= 3:
            e = ci[CE, c]
            while e >= 0:
                ei[EM, e] = 0
                e = ei[ECN, e]
        ci[CST, c] = 0


@njit(cache=True, inline="always")
def _apply(s_list, n_s, now, ci, cf, ei, load, updates, lhead):
    """The refill's new rates in place (a rate that moved by rounding only is kept), each
    class's progress brought to ``now`` and its links' loads moved; every class fixed."""
    for k in range(n_s):
        c = s_list[k]
        ci[CINS, c] = 0
        ci[CST, c] = 0
        old, new = cf[RR, c], cf[NEW, c]
        if cf[ORIG, c] >= 0.0 and abs(new - old) <= _KEEP * old:
            continue
        cf[PA, c] += old * (now - cf[TA, c])
        cf[TA, c] = now
        cf[RR, c] = new
        e = ci[CE, c]
        while e >= 0:
            link = ei[EL, e]
            _add_load(link, (new - old) * ei[EK, e], load)
            updates[link] += 1
            if updates[link] >= _LOAD_RESCAN:  # a guard on the compensated sum (the
                updates[link] = 0             # classes not done yet are at their old
                load[link, 0] = _exact_load(link, lhead, ei, cf)   # rates: still right)
                load[link, 1] = 0.0
            e = ei[ECN, e]


@njit(cache=True, inline="always")
def _merge_equal(s_list, n_s, now, load, fm, ci, cf, thr, htab, bits, ei, lhead, efree, cfree,
                 tops, ys):
    """Each moved class merges with the classes of its rate whose members all cross its
    bottleneck (module docstring); returns the length of ``s_list``, to which the classes
    merged are added (their keys must be refreshed too)."""
    n_links = lhead.size
    n_first = n_s
    for k in range(n_first):
        c = s_list[k]
        if ci[CALIVE, c] == 0 or ci[CS, c] == 0:
            continue
        link = ci[CB, c]
        n_y = 0
        e = lhead[link]
        while e >= 0:
            y = ei[EC, e]
            if (y != c and ei[EN, e] == ci[CS, y]
                    and abs(cf[RR, y] - cf[RR, c]) <= _SAME * cf[RR, c]):
                ys[n_y] = y                    # (merged after the scan: a merge edits
                n_y += 1                       # the list)
            e = ei[ELN, e]
        for i in range(n_y):
            y = ys[i]
            for q in (c, y):                   # both to the same instant
                cf[PA, q] += cf[RR, q] * (now - cf[TA, q])
                cf[TA, q] = now
            a, b = (c, y) if ci[CS, c] >= ci[CS, y] else (y, c)
            r_a = cf[RR, a]
            if cf[RR, b] != r_a:               # rounding apart: b takes a's rate
                e = ci[CE, b]
                while e >= 0:
                    _add_load(ei[EL, e], (r_a - cf[RR, b]) * ei[EK, e], load)
                    e = ei[ECN, e]
            _merge(b, a, fm, ci, cf, thr, n_links, htab, bits, ei, lhead, efree, cfree, tops)
            ci[CB, a] = link
            s_list[n_s] = y                    # both get their keys refreshed (b is
            n_s += 1                           # dropped there); twice costs nothing
            c = a
    return n_s


@njit(cache=True, _nrt=False)
def _refill(seed, checks, check_level, n_checks, now, s_list, capacity, load, updates,
            touched, spare, cnt, hp, hval, hpos, dirty, t_list, d_list, lfl_win, lfl,
            path_start, path_len, path_links, weight, weighted, fm, ci, cf, thr, sub_bytes,
            htab, bits, ei, lhead, efree, cfree, tops, ys, pheap, ppos, pkey):
    """Progressive filling of what an event changed (module docstring), then the new
    rates in place, loads moved, and classes frozen on one link at one rate merged.
    ``seed`` is the class of the flows that start (-1 if none); ``checks[:n_checks]``
    links left unsaturated by flows that ended, with their old levels. Returns (ok, the
    number of classes in ``s_list`` whose keys must be refreshed)."""
    n_links = capacity.size
    n_t, n_h, n_s = _begin(seed, checks, check_level, n_checks, ci, cf, ei, capacity, load,
                           lhead, touched, t_list, spare, cnt, hp, hval, hpos, dirty, d_list,
                           s_list)
    n_p = 0
    ok = True
    t = 0.0
    while n_h > 0 or n_p > 0:
        if n_p > 0 and (n_h == 0 or pkey[pheap[0]] < hval[0]):
            c = pheap[0]                       # the water passes a pinned class's rate
            n_d = 0
            if ci[CST, c] == 4:                # (or reaches a capped one's)
                n_t, n_h, n_p, n_d = _cap_reached(c, ci, cf, ei, capacity, load, lhead,
                                                  touched, t_list, n_t, spare, cnt, hp,
                                                  hval, hpos, n_h, dirty, d_list, n_d,
                                                  pheap, ppos, pkey, n_p, n_links, htab,
                                                  bits)
            else:
                n_p = _heap_remove(pheap, ppos, pkey, n_p, c)
                n_t, n_h, n_d, n_s = _unfreeze(c, False, ci, cf, ei, capacity, load, lhead,
                                               touched, t_list, n_t, spare, cnt, hp, hval,
                                               hpos, n_h, dirty, d_list, n_d, s_list, n_s)
            n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hval, hpos, n_h)
            continue
        node, x = hp[0], hval[0]               # the lowest level leaves
        n_h = _take(hp, hval, hpos, n_h, 0)
        if node >= n_links:                    # a check at an old level
            t = max(t, x)
            n_t, n_h, n_s = _check(node - n_links, t, x, ci, cf, ei, capacity, load, lhead,
                                   touched, t_list, n_t, spare, cnt, hp, hval, hpos, n_h,
                                   dirty, d_list, s_list, n_s)
            continue
        if cnt[node] < 0.5:
            continue
        t = max(t, x)
        n_d, n_s, n_p = _bring_down(node, t, ci, cf, ei, lhead, spare, cnt, dirty, d_list,
                                    s_list, n_s, pheap, ppos, pkey, n_p, htab, bits)
        if n_d:                                # its level rose; it comes back later
            n_h = _flush(dirty, d_list, n_d, spare, cnt, hp, hval, hpos, n_h)
            continue
        if not t > 0.0:
            ok = False
            break
        n_t, n_h, n_s, n_p = _settle(node, t, s_list, n_s, capacity, load, touched, t_list,
                                     n_t, spare, cnt, hp, hval, hpos, n_h,
                                     (lfl_win, lfl, path_start, path_len, path_links, weight,
                                      weighted), fm,
                                     ci, cf, thr, sub_bytes, (htab, bits, efree, cfree, tops),
                                     ei, lhead, (pheap, ppos, pkey), n_p)
    for i in range(n_h):                       # leave the heaps and marks empty
        hpos[hp[i]] = -1
    for i in range(n_p):
        ppos[pheap[i]] = -1
    for k in range(n_t):
        touched[t_list[k]] = False
    if not ok:
        _undo(s_list, n_s, ci, ei)
        return False, n_s
    _apply(s_list, n_s, now, ci, cf, ei, load, updates, lhead)
    n_s = _merge_equal(s_list, n_s, now, load, fm, ci, cf, thr, htab, bits, ei, lhead, efree,
                       cfree, tops, ys)
    return True, n_s


@njit(cache=True)
def new_state(n_sub, n_links, paths):
    """The loop's state beyond the executor's arrays (module docstring): per link every
    flow that crosses it, the classes and their entries, the finish heaps over classes,
    the refill's work space. Scalars in ``sc``: the event's class of new flows (-1: none
    yet), the links opened this event."""
    path_start, path_len, path_links = paths[0], paths[1], paths[2]
    # per link, every flow that crosses it (to find a class's members on a link)
    lfl_start = np.zeros(n_links + 1, dtype=np.int64)
    for f in range(n_sub):
        for j in range(path_start[f], path_start[f] + path_len[f]):
            lfl_start[path_links[j] + 1] += 1
    for link in range(n_links):
        lfl_start[link + 1] += lfl_start[link]
    n_inc = lfl_start[n_links]
    lfl = np.empty(n_inc, dtype=np.int64)
    fill = lfl_start[:-1].copy()
    for f in range(n_sub):
        for j in range(path_start[f], path_start[f] + path_len[f]):
            lfl[fill[path_links[j]]] = f
            fill[path_links[j]] += 1
    lfl_win = np.empty((2, n_links), dtype=np.int64)   # per link: draining in [lo, hi)
    lfl_win[0, :] = lfl_start[1:]
    lfl_win[1, :] = lfl_start[:-1]
    n_cls = n_sub + 2
    n_ent = n_inc + 2
    bits = 4
    while (1 << bits) < 2 * n_ent:
        bits += 1
    cls = (np.zeros((10, n_cls), dtype=np.int64), np.zeros((5, n_cls)),
           np.arange(n_cls - 1, -1, -1).astype(np.int64), np.zeros((9, n_ent), dtype=np.int64),
           np.arange(n_ent - 1, -1, -1).astype(np.int64),
           np.array([n_cls, n_ent], dtype=np.int64), np.full(1 << bits, -1, dtype=np.int64),
           bits, np.full(n_links, -1, dtype=np.int64),
           np.full((3, max(n_sub, 1)), -1, dtype=np.int64), np.zeros(max(n_sub, 1)))
    # per class its next finish and its next nearly-drained member (heaps), their sizes,
    # the approximate mode's heap walk
    keys = (np.empty(n_cls, dtype=np.int64), np.full(n_cls, -1, dtype=np.int64),
            np.empty(n_cls), np.empty(n_cls, dtype=np.int64),
            np.full(n_cls, -1, dtype=np.int64), np.empty(n_cls), np.zeros(2, dtype=np.int64),
            np.empty(n_cls, dtype=np.int64))
    # per link: compensated load (_add_load), updates since its rescan, the largest rate
    # that left it unsaturated this event (-1: none), opened links, checks and levels
    per_link = (np.zeros((n_links, 2)), np.zeros(n_links, dtype=np.int64),
                np.full(n_links, -1.0), np.empty(n_links, dtype=np.int64),
                np.empty(n_links), np.empty(n_links, dtype=np.int64))
    # the refill's marks, levels (indexed heap), lists, classes to merge, pinned classes
    # by rate
    refill = (np.zeros(n_links, dtype=np.bool_), np.empty(n_links), np.empty(n_links),
              np.empty(2 * n_links, dtype=np.int64), np.full(2 * n_links, -1, dtype=np.int64),
              np.empty(2 * n_links), np.zeros(n_links, dtype=np.bool_),
              np.empty(n_links, dtype=np.int64), np.empty(n_links, dtype=np.int64),
              np.empty(2 * n_cls, dtype=np.int64), np.empty(n_cls, dtype=np.int64),
              np.empty(n_cls, dtype=np.int64), np.full(n_cls, -1, dtype=np.int64),
              np.empty(n_cls))
    apos = np.full(max(n_sub, 1), -1, dtype=np.int64)
    return ((lfl_start, lfl, lfl_win), cls, keys, per_link, refill, apos,
            np.array([-1, 0], dtype=np.int64))


@njit(cache=True, _nrt=False)
def add(started, n_started, now, n_active, paths, draining, st):
    """The flows ``started[:n_started]`` start draining at ``now``: members of the
    event's class of new flows, which rises from rate 0 at the next refill; returns the
    draining count."""
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    active, remaining = draining[0], draining[7]
    lfl_start, lfl, lfl_win = st[0]
    ci, cf, cfree, ei, efree, tops, htab, bits, lhead, fm, thr = st[1]
    apos, sc = st[5], st[6]
    n_links = lhead.size
    for k in range(n_started):
        f = started[k]
        active[n_active] = f
        apos[f] = n_active
        n_active += 1
        if sc[0] < 0:                      # the event's new flows: one class
            seed = _new_class(ci, cf, cfree, tops)
            cf[RR, seed], cf[PA, seed], cf[TA, seed] = 0.0, 0.0, now
            cf[ORIG, seed] = -1.0
            sc[0] = seed
        thr[f] = remaining[f]
        _add_member(f, sc[0], fm, ci, thr, sub_bytes)
        for j in range(path_start[f], path_start[f] + path_len[f]):
            _count(sc[0], path_links[j], 1, flows_at(j, weight, weighted), n_links, htab,
                   bits, ei, ci, lhead, efree, tops)
            _open(f, path_links[j], lfl_start, lfl_win, lfl)
    return n_active


@njit(cache=True, _nrt=False)
def take_done(now, before, limit, n_active, paths, links, draining, st):
    """Take out the flows due by ``before + limit`` (a class's first) or nearly drained
    by ``now``, and open the saturated links they leave; returns the draining count and
    how many are done (in ``draining[5]``)."""
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    capacity, link_count, link_busy, busy_from = links[:4]
    active, rate, done_subs = draining[0], draining[1], draining[5]
    ci, cf, cfree, ei, efree, tops, htab, bits, lhead, fm, thr = st[1]
    fheap, fpos, fkey, nheap, npos, nkey, hsize, _ = st[2]
    load, _, opened, opened_list, _, _ = st[3]
    apos, sc = st[5], st[6]
    n_links = lhead.size
    n_done = 0
    if hsize[0] == 0:
        return n_active, 0
    for rule in range(2):              # due in the window; then nearly drained
        while True:
            if rule == 0:
                if hsize[0] == 0 or fkey[fheap[0]] - before > limit:
                    break
                c = fheap[0]
                f = ci[CMIN, c]
            else:
                if hsize[1] == 0 or nkey[nheap[0]] > now:
                    break
                c = nheap[0]
                f = ci[CNEAR, c]
            done_subs[n_done] = f
            n_done += 1
            r = cf[RR, c]
            links_off(f, now, path_start, path_len, path_links, weight, weighted, link_count,
                      link_busy, busy_from)
            for j in range(path_start[f], path_start[f] + path_len[f]):
                link = path_links[j]
                was = _load_of(link, load) >= capacity[link] * (1 - _NEAR)
                w = flows_at(j, weight, weighted)
                _count(c, link, -1, -w, n_links, htab, bits, ei, ci, lhead, efree, tops)
                _add_load(link, -r * w, load)
                if lhead[link] < 0:
                    load[link, 0], load[link, 1] = 0.0, 0.0
                if opened[link] >= 0.0:
                    opened[link] = max(opened[link], r)
                elif was:                # its bottlenecked flows may rise
                    opened[link] = r
                    opened_list[sc[1]] = link
                    sc[1] += 1
            _drop_member(f, c, fm, ci)
            _refresh(c, fm, ci, cf, thr, sub_bytes, fheap, fpos, fkey, nheap, npos, nkey,
                     hsize, cfree, tops)
            last = active[n_active - 1]      # out of the draining list
            active[apos[f]] = last
            apos[last] = apos[f]
            apos[f] = -1
            n_active -= 1
            rate[f] = 0.0
    return n_active, n_done


@njit(cache=True, _nrt=False)
def resolve(n_started, now, n_active, paths, capacity, draining, st, ints, floats, warm):
    """Refill what changed (the event's class of new flows, the links opened) and
    refresh the keys of the classes that moved; False if a flow meets a link with no
    capacity left."""
    path_start, path_len, path_links, weight, weighted, sub_bytes = paths
    lfl_start, lfl, lfl_win = st[0]
    ci, cf, cfree, ei, efree, tops, htab, bits, lhead, fm, thr = st[1]
    fheap, fpos, fkey, nheap, npos, nkey, hsize, _ = st[2]
    load, updates, opened, opened_list, check_level, checks = st[3]
    (touched, spare, cnt, hp, hpos, hval, dirty, t_list, d_list, s_list, ys, pheap, ppos,
     pkey) = st[4]
    seed, n_opened = st[6][0], st[6][1]
    if seed < 0 and n_opened == 0:
        return True
    n_checks = 0
    for k in range(n_opened):               # checks at the old levels, where
        link = opened_list[k]               # they can let a class rise
        top, mine = _tops(link, lhead, ei, cf, ci)
        level = max(opened[link], top)
        if mine >= level * (1 - _TOP):
            checks[n_checks] = link
            check_level[n_checks] = level
            n_checks += 1
    ok, n_s = _refill(seed, checks, check_level, n_checks, now, s_list, capacity, load,
                      updates, touched, spare, cnt, hp, hval, hpos, dirty, t_list, d_list,
                      lfl_win, lfl, path_start, path_len, path_links, weight, weighted, fm, ci,
                      cf, thr, sub_bytes, htab, bits, ei, lhead, efree, cfree, tops, ys, pheap,
                      ppos, pkey)
    for k in range(n_s):
        _refresh(s_list[k], fm, ci, cf, thr, sub_bytes, fheap, fpos, fkey, nheap, npos,
                 nkey, hsize, cfree, tops)
    return ok


@njit(cache=True, _nrt=False)
def start(n_active, now, paths, links, draining, st, ints, floats, warm):
    """Take over the draining flows (one class of new flows) and solve them cold; False
    if a flow meets a link with no capacity left."""
    active, started = draining[0], draining[6]
    for i in range(n_active):
        started[i] = active[i]
    add(started, n_active, now, 0, paths, draining, st)
    ok = n_active == 0 or resolve(n_active, now, n_active, paths, links[0], draining, st,
                                  ints, floats, warm)
    st[6][0] = -1
    return ok


@njit(cache=True, _nrt=False)
def first_finish(now, tolerance, t_heap, n_active, draining, st):
    """The first finish time (s) of a class's member, and the event's time when
    ``tolerance`` merges completions: the last class due within the window
    (netsim.engine.tolerance; a class's key is its first member's finish, so later
    members may wait an event), not after ``t_heap``."""
    fheap, fkey, hsize, hstack = st[2][0], st[2][2], st[2][6], st[2][7]
    t_fluid = fkey[fheap[0]] if hsize[0] > 0 else np.inf
    if tolerance > 0.0 and t_fluid <= t_heap:
        reach = min(t_fluid + (t_fluid - now) * _REL_TOL + tolerance * t_fluid, t_heap)
        late = _heap_max_upto(fheap, fkey, hsize[0], reach, hstack)
        return t_fluid, max(t_fluid, late), t_fluid - now
    return t_fluid, t_fluid, t_fluid - now


@njit(cache=True, _nrt=False)
def end_event(n_active, st, ints):
    """The links opened this event are closed again; the next event's new flows form a
    class of their own."""
    opened, opened_list, sc = st[3][2], st[3][3], st[6]
    for k in range(sc[1]):
        opened[opened_list[k]] = -1.0
    sc[0], sc[1] = -1, 0


@njit(cache=True, _nrt=False)
def hand_back(now, n_active, draining, st, ints):
    """Each draining flow's remaining bytes as of ``now`` and its class's rate into the
    executor's arrays."""
    active, rate, is_new, remaining = draining[0], draining[1], draining[2], draining[7]
    cf, fm, thr = st[1][1], st[1][9], st[1][10]
    for i in range(n_active):
        f = active[i]
        c = fm[FC, f]
        remaining[f] = thr[f] - (cf[PA, c] + cf[RR, c] * (now - cf[TA, c]))
        rate[f] = cf[RR, c]
        is_new[f] = False
    ints[I_SOLVED] = 1
