"""The engine's one compiled event loop, with the max-min solver chosen by an integer.

:func:`run_events` owns the run's time and events; a solver owns only the rates of the
draining flows. At each event the loop

1. asks the solver for its first fluid completion (``first_finish``) and takes the earlier
   of that and the first timed event (:func:`~netsim.engine.events.next_time`);
2. lets the solver take out the flows that finish by then (``take_done``) and finishes
   their ops, releasing what those unblock (:func:`~netsim.engine.events.retire`);
3. pops the timed events due (:func:`~netsim.engine.events.timed`): latencies that ran out
   start flows, which the solver adds (``add``); computes finish; deferred releases come;
4. when the draining set changed, asks the solver for new rates (``resolve``).

The solvers (:data:`SOLVERS`) implement the same eight steps over their own state (a tuple
built by their ``new_state``): :mod:`.kernel` re-solves every draining flow at each change
(``cold`` or ``warm`` from the last solution), :mod:`.classes` refills only what an event
changed, on classes of flows of equal rate. The state of the solver not chosen is built
empty. Everything else, the heap of timed events,
releases and dependencies, per-link busy time and counts, lives in :mod:`.events`.

A run is :func:`new_states`, then :func:`run_events` as many times as the executor pauses it
(every 0.1 s, so that a signal is answered, and for progress reports): its first call has
the solver take over the draining flows, its last hands them back. The states are kept
between calls, so where a run pauses never changes a bit of its answer.

numba compiles the loop once, with every solver in it, at install
(netsim._precompile), into the cache next to the sources.
"""

from __future__ import annotations

import numpy as np

from . import classes, kernel
from .events import (_REL_TOL, AVAILABLE, DONE, F_NOW, F_STOP, F_TOLERANCE, I_ACTIVE,
                     I_BEGUN, I_EVENTS, I_HEAP, I_PAUSE, I_SEQ, NO_CAPACITY, PAUSED, STOPPED,
                     done_limit, make_room, next_time, njit, note_peaks, retire, timed)

__all__ = ["AVAILABLE", "SOLVERS", "new_states", "new_timeline", "run_events", "DONE",
           "PAUSED", "NO_CAPACITY", "STOPPED"]

#: The solvers by name (EnginePath.loop), as the integer :func:`run_events` takes.
SOLVERS = {"kernel": 0, "classes": 1}
_KERNEL, _CLASSES = 0, 1


@njit(cache=True)
def new_states(solver, n_sub, n_links, paths):
    """The solvers' states for a run with ``solver`` (:data:`SOLVERS`; the others' empty),
    to pass to every :func:`run_events` call of the run: a run paused and resumed goes on
    from exactly where it stopped, bit for bit. (Allocation only, so that this entry point
    is small to load: the solver takes over the draining flows in the first call.)"""
    return _new_states(solver, n_sub, n_links, paths)


@njit(cache=True, nogil=True)
def run_events(solver, max_events, ops, flows, paths, links, draining, ht, hq, ints, floats,
               warm, sts, tl):
    """Run up to ``max_events`` events with ``solver`` (:data:`SOLVERS`) and its state
    ``sts`` (from :func:`new_states`); returns (status, heap times, heap entries, timeline):
    DONE, PAUSED after ``max_events`` or once ``ints[I_PAUSE]`` is set (call again to go
    on), NO_CAPACITY, or STOPPED before an event whose merge window reaches
    ``floats[F_STOP]`` (a link fault: the executor applies it and starts the loop anew).
    It runs without the GIL, so that another thread can set ``I_PAUSE``.

    The run has begun: the numpy loop released the ops of time 0 and ran its first events
    (:meth:`~netsim.engine.executor._Execution._run_compiled` hands its state over). The
    tuples are the executor's arrays, updated in place: ``ops``, ``flows``, ``paths``
    and ``links`` as :func:`~netsim.engine.events.timed` names them, ``draining`` (active,
    rate, is_new, level, finish_dt, done_subs, started, remaining). ``ints``/``floats``
    hold the run's scalars (``I_*``/``F_*``). The heap arrays are returned because they
    may have grown. ``warm``: engine.kernel starts each solve from the last one (False:
    cold at every event, the reference for the warm start). Nothing of the run lives
    outside these arguments between two calls, so pausing changes no bit of the answer.
    The first call (``ints[I_BEGUN]`` 0) has the solver take over the draining flows; the
    one that ends the run (or stops it) hands their remaining bytes and rates back to
    ``draining``. ``tl``: the recorded timeline (:func:`new_timeline`; returned because its
    arrays may have grown), recorded when its count array's third entry is 1, with
    engine.kernel only (the one solver that keeps every flow's rate in ``draining``).
    """
    now, tolerance, stop = floats[F_NOW], floats[F_TOLERANCE], floats[F_STOP]
    size, seq, events, n_active = ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE]
    status = PAUSED
    if ints[I_BEGUN] == 0:
        ints[I_BEGUN] = 1
        if not _start(solver, sts, n_active, now, paths, links, draining, ints, floats, warm):
            return NO_CAPACITY, ht, hq, tl
    grown = np.empty(64, dtype=np.int64)            # links that gained a flow this event
    counts = np.zeros(4, dtype=np.int64)            # timed()'s, carried while it makes room
    for _ in range(max_events):
        # 1. the next event: the solver's first fluid completion or the first timed event
        t_fluid, t_window, dt_fluid = _first_finish(solver, sts, now, tolerance,
                                                    min(ht[0] if size > 0 else np.inf, stop),
                                                    n_active, draining)
        t_next, fluid, _ = next_time(now, t_fluid, ht, size)
        if fluid and t_next < np.inf:
            t_next = t_window
        dt = t_next - now
        horizon = t_next + _REL_TOL * max(dt, 0.0)     # timed events up to here join it
        # a fault due within this event's window (or after the run's end: the numpy loop
        # logs it so) is the executor's to apply: it runs this event, fault included
        if stop < np.inf and horizon >= stop:
            status = STOPPED
            break
        if t_next == np.inf:
            status = DONE
            break
        if tl[4][2] == 1 and n_active > 0 and dt > 0:
            tl = _record(now, t_next, n_active, paths, draining, tl)
        # 2. the flows that finish, their ops, and the ops those release
        n_active, n_done = _take_done(solver, sts, t_next, now,
                                      done_limit(dt, dt_fluid, fluid), n_active, paths,
                                      links, draining)
        now = t_next
        if n_done:
            n_left, size, seq = retire(draining[5], n_done, now, ops, flows, ht, hq, size,
                                       seq)
            if n_left:
                ht, hq, size, seq = make_room(n_left, now, ops, ht, hq, size, seq)
        # 3. the timed events due; the flows whose latency ran out start
        counts[:] = 0
        while size > 0 and ht[0] <= horizon:
            need, size, seq = timed(horizon, now, ops, flows, paths, links, ht, hq, size, seq,
                                    draining[6], grown, counts)
            if need == 2:
                grown = np.concatenate((grown, np.empty(grown.size, np.int64)))
            elif need == 1:
                ht, hq, size, seq = make_room(counts[3], now, ops, ht, hq, size, seq)
                counts[3] = 0
            else:
                break
        changed, n_started, n_grown = counts[0] == 1, counts[1], counts[2]
        n_active = _add(solver, sts, n_started, now, n_active, paths, draining)
        # 4. new rates if the draining set changed
        if (changed or n_done) and n_active > 0:
            if not _resolve(solver, sts, n_started, now, n_active, paths, links[0], draining,
                            ints, floats, warm):
                status = NO_CAPACITY
                break
            note_peaks(grown, n_grown, links[1], links[4])
        _end_event(solver, sts, n_active, ints)
        events += 1
        if ints[I_PAUSE] != 0:
            break
    if status == DONE or status == STOPPED:
        _hand_back(solver, sts, now, n_active, draining, ints)
    floats[F_NOW] = now
    ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE] = size, seq, events, n_active
    return status, ht, hq, tl


# -- the timeline ----------------------------------------------------------------------------
# What the numpy loop's timeline holds, in arrays: per interval between two events (start and
# end, s) the links that carry flows and their load (B/s), as CSR.

def new_timeline(n_links, record):
    """An empty timeline for :func:`run_events` (``record``: whether to fill it): interval
    times (n, 2), CSR pointers, links, loads, counts (intervals, entries, record), and a
    per-link work row (zeros)."""
    return (np.empty((64, 2)), np.zeros(65, dtype=np.int64), np.empty(256, dtype=np.int64),
            np.empty(256), np.array([0, 0, int(record)], dtype=np.int64),
            np.zeros(max(n_links, 1) if record else 1))


@njit(cache=True)
def _record(t0, t1, n_active, paths, draining, tl):
    """Append the interval (t0, t1) with the load of every link the draining flows cross:
    the sum over its flows of rate x weight, in the order of the draining flows, as the
    numpy loop's ``bincount`` sums them. Returns the timeline, grown if it had to."""
    times, ptr, tl_links, tl_loads, counts, load = tl
    path_start, path_len, path_links, weight, weighted = paths[:5]
    active, rate = draining[0], draining[1]
    n_seg, n_ent = counts[0], counts[1]
    touched = 0
    for i in range(n_active):
        f = active[i]
        touched += path_len[f]
    if n_seg + 1 >= times.shape[0]:
        grown = np.empty((2 * times.shape[0], 2))
        grown[:n_seg] = times[:n_seg]
        times = grown
        more = np.zeros(times.shape[0] + 1, dtype=np.int64)
        more[:n_seg + 1] = ptr[:n_seg + 1]
        ptr = more
    if n_ent + touched > tl_links.size:
        room = max(2 * tl_links.size, n_ent + touched)
        more_links, more_loads = np.empty(room, dtype=np.int64), np.empty(room)
        more_links[:n_ent], more_loads[:n_ent] = tl_links[:n_ent], tl_loads[:n_ent]
        tl_links, tl_loads = more_links, more_loads
    start = n_ent
    for i in range(n_active):
        f = active[i]
        r = rate[f]
        for j in range(path_start[f], path_start[f] + path_len[f]):
            link = path_links[j]
            if load[link] == 0.0:
                tl_links[n_ent] = link
                n_ent += 1
            load[link] += r * weight[j] if weighted else r
    used = np.sort(tl_links[start:n_ent])
    for k in range(used.size):
        tl_links[start + k] = used[k]
        tl_loads[start + k] = load[used[k]]
        load[used[k]] = 0.0
    times[n_seg, 0], times[n_seg, 1] = t0, t1
    ptr[n_seg + 1] = n_ent
    counts[0], counts[1] = n_seg + 1, n_ent
    return times, ptr, tl_links, tl_loads, counts, load


# -- the dispatch: each step of the chosen solver --------------------------------------------
# The steps and their dispatch compile with ``_nrt=False`` (engine.heaps' docstring says
# what that asks of them): they take the solvers' states as tuples of dozens of arrays, and
# with reference counting each call would incref and decref every one of them (inlined
# into the loop, each array taken out of a state is counted instead: slower still).

@njit(cache=True)
def _new_states(solver, n_sub, n_links, paths):
    """Each solver's state, the chosen one's for this run, the other's empty."""
    return (kernel.new_state(n_links if solver == _KERNEL else 0),
            classes.new_state(n_sub if solver == _CLASSES else 0,
                              n_links if solver == _CLASSES else 0, paths))


@njit(cache=True, _nrt=False)
def _start(solver, sts, n_active, now, paths, links, draining, ints, floats, warm):
    if solver == _KERNEL:
        return kernel.start(n_active, now, paths, links, draining, sts[0], ints, floats, warm)
    return classes.start(n_active, now, paths, links, draining, sts[1], ints, floats, warm)


@njit(cache=True, _nrt=False)
def _first_finish(solver, sts, now, tolerance, t_heap, n_active, draining):
    if solver == _KERNEL:
        return kernel.first_finish(now, tolerance, t_heap, n_active, draining, sts[0])
    return classes.first_finish(now, tolerance, t_heap, n_active, draining, sts[1])


@njit(cache=True, _nrt=False)
def _take_done(solver, sts, now, before, limit, n_active, paths, links, draining):
    if solver == _KERNEL:
        return kernel.take_done(now, before, limit, n_active, paths, links, draining, sts[0])
    return classes.take_done(now, before, limit, n_active, paths, links, draining, sts[1])


@njit(cache=True, _nrt=False)
def _add(solver, sts, n_started, now, n_active, paths, draining):
    started = draining[6]
    if solver == _KERNEL:
        return kernel.add(started, n_started, now, n_active, paths, draining, sts[0])
    return classes.add(started, n_started, now, n_active, paths, draining, sts[1])


@njit(cache=True, inline="always")
def _resolve(solver, sts, n_started, now, n_active, paths, capacity, draining, ints, floats,
             warm):
    if solver == _KERNEL:          # its solve allocates: not in a step with _nrt=False
        return kernel.resolve(n_started, now, n_active, paths, capacity, draining, sts[0],
                              ints, floats, warm)
    return _refill(sts, n_started, now, n_active, paths, capacity, draining, ints, floats,
                   warm)


@njit(cache=True, _nrt=False)
def _refill(sts, n_started, now, n_active, paths, capacity, draining, ints, floats, warm):
    # engine.classes' state is taken out of the states here, in a step without reference
    # counting, not in the inlined _resolve, where the loop would count each of its arrays
    return classes.resolve(n_started, now, n_active, paths, capacity, draining, sts[1], ints,
                           floats, warm)


@njit(cache=True, _nrt=False)
def _end_event(solver, sts, n_active, ints):
    if solver == _KERNEL:
        kernel.end_event(n_active, sts[0], ints)
    else:
        classes.end_event(n_active, sts[1], ints)


@njit(cache=True, _nrt=False)
def _hand_back(solver, sts, now, n_active, draining, ints):
    if solver == _KERNEL:
        kernel.hand_back(now, n_active, draining, sts[0], ints)
    else:
        classes.hand_back(now, n_active, draining, sts[1], ints)
