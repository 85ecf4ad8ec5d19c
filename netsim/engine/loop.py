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
(``cold`` or ``warm`` from the last solution), :mod:`.incremental` refills only what an event
changed, flow by flow, and :mod:`.classes` does so on classes of flows of equal rate. The
state of the solvers not chosen is built empty. Everything else, the heap of timed events,
releases and dependencies, per-link busy time and counts, lives in :mod:`.events`.

numba compiles the loop once, with every solver in it, at install
(netsim._precompile), into the cache next to the sources.
"""

from __future__ import annotations

import numpy as np

from . import classes, incremental, kernel
from .events import (_REL_TOL, AVAILABLE, DONE, F_NOW, F_TOLERANCE, I_ACTIVE, I_EVENTS,
                     I_HEAP, I_SEQ, NO_CAPACITY, PAUSED, done_limit, next_time, njit,
                     note_peaks, retire, timed)

__all__ = ["AVAILABLE", "SOLVERS", "run_events", "DONE", "PAUSED", "NO_CAPACITY"]

#: The solvers by name (EnginePath.loop), as the integer :func:`run_events` takes.
SOLVERS = {"kernel": 0, "incremental": 1, "classes": 2}
_KERNEL, _INCREMENTAL, _CLASSES = 0, 1, 2


@njit(cache=True)
def run_events(solver, max_events, ops, flows, paths, links, draining, ht, hq, ints, floats,
               warm):
    """Run up to ``max_events`` events with ``solver`` (:data:`SOLVERS`); returns (status,
    heap times, heap entries).

    The run has begun: the numpy loop released the ops of time 0 and ran its first events
    (:meth:`~netsim.engine.executor._Execution._run_compiled` hands its state over). The
    tuples are the executor's arrays, updated in place: ``ops``, ``flows``, ``paths``
    and ``links`` as :func:`~netsim.engine.events.timed` names them, ``draining`` (active,
    rate, is_new, level, finish_dt, done_subs, started, remaining). ``ints``/``floats``
    hold the run's scalars (``I_*``/``F_*``). The heap arrays are returned because they
    may have grown. ``warm``: engine.kernel starts each solve from the last one (False:
    cold at every event, the reference for the warm start).
    """
    capacity = links[0]
    n_sub, n_links = flows[0].size, capacity.size
    done_subs, started = draining[5], draining[6]
    now, tolerance = floats[F_NOW], floats[F_TOLERANCE]
    size, seq, events, n_active = ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE]
    # the chosen solver's state; the others' are empty
    st_k = kernel.new_state(n_links if solver == _KERNEL else 0)
    st_i = incremental.new_state(n_sub if solver == _INCREMENTAL else 0,
                                 n_links if solver == _INCREMENTAL else 0, paths)
    st_c = classes.new_state(n_sub if solver == _CLASSES else 0,
                             n_links if solver == _CLASSES else 0, paths)
    if solver == _KERNEL:
        ok = kernel.start(n_active, now, paths, links, draining, st_k, ints, floats, warm)
    elif solver == _INCREMENTAL:
        ok = incremental.start(n_active, now, paths, links, draining, st_i, ints, floats,
                               warm)
    else:
        ok = classes.start(n_active, now, paths, links, draining, st_c, ints, floats, warm)
    status = PAUSED if ok else NO_CAPACITY
    grown = np.empty(64, dtype=np.int64)            # links that gained a flow this event
    for _ in range(max_events if ok else 0):
        # 1. the next event's time
        t_heap = ht[0] if size > 0 else np.inf
        if solver == _KERNEL:
            t_fluid, t_window = kernel.first_finish(now, tolerance, t_heap, n_active,
                                                    draining, st_k)
        elif solver == _INCREMENTAL:
            t_fluid, t_window = incremental.first_finish(now, tolerance, t_heap, n_active,
                                                         draining, st_i)
        else:
            t_fluid, t_window = classes.first_finish(now, tolerance, t_heap, n_active,
                                                     draining, st_c)
        t_next, fluid, _ = next_time(now, t_fluid, ht, size)
        if t_next == np.inf:
            status = DONE
            break
        if fluid:
            t_next = t_window
        dt = t_next - now
        limit = done_limit(dt, t_fluid - now, fluid)
        # 2. the flows that finish
        if solver == _KERNEL:
            n_active, n_done = kernel.take_done(t_next, now, limit, n_active, paths, links,
                                                draining, st_k)
        elif solver == _INCREMENTAL:
            n_active, n_done = incremental.take_done(t_next, now, limit, n_active, paths,
                                                     links, draining, st_i)
        else:
            n_active, n_done = classes.take_done(t_next, now, limit, n_active, paths, links,
                                                 draining, st_c)
        now = t_next
        if n_done:
            ht, hq, size, seq = retire(done_subs, n_done, now, ops, flows, ht, hq, size, seq)
        # 3. the timed events due
        changed, n_started, ht, hq, size, seq, grown, n_grown = timed(
            now + _REL_TOL * max(dt, 0.0), now, ops, flows, paths, links, ht, hq, size, seq,
            started, grown)
        if solver == _KERNEL:
            n_active = kernel.add(started, n_started, now, n_active, paths, draining, st_k)
        elif solver == _INCREMENTAL:
            n_active = incremental.add(started, n_started, now, n_active, paths, draining,
                                       st_i)
        else:
            n_active = classes.add(started, n_started, now, n_active, paths, draining, st_c)
        # 4. new rates
        if (changed or n_done) and n_active > 0:
            if solver == _KERNEL:
                ok = kernel.resolve(n_started, now, n_active, paths, capacity, draining, st_k,
                                    ints, floats, warm)
            elif solver == _INCREMENTAL:
                ok = incremental.resolve(n_started, now, n_active, paths, capacity, draining,
                                         st_i, ints, floats, warm)
            else:
                ok = classes.resolve(n_started, now, n_active, paths, capacity, draining,
                                     st_c, ints, floats, warm)
            if not ok:
                status = NO_CAPACITY
                break
            note_peaks(grown, n_grown, links[1], links[4])
        if solver == _KERNEL:
            kernel.end_event(n_active, st_k, ints)
        elif solver == _INCREMENTAL:
            incremental.end_event(n_active, st_i, ints)
        else:
            classes.end_event(n_active, st_c, ints)
        events += 1
    if solver == _KERNEL:
        kernel.hand_back(now, n_active, draining, st_k, ints)
    elif solver == _INCREMENTAL:
        incremental.hand_back(now, n_active, draining, st_i, ints)
    else:
        classes.hand_back(now, n_active, draining, st_c, ints)
    floats[F_NOW] = now
    ints[I_HEAP], ints[I_SEQ], ints[I_EVENTS], ints[I_ACTIVE] = size, seq, events, n_active
    return status, ht, hq
