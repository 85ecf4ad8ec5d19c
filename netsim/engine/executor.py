"""Run a placed schedule on a topology: the event loop of the fluid network.

A send's life: released when its dependencies finish (and not before its
``not_before`` time) -> per-message ``overhead`` at the sender -> the path latency (sum of
its links' latencies) -> it drains its bytes at its max-min fair rate -> complete. A lone
flow of B bytes on a path of capacity C and latency L thus takes L + B/C.

State lives in numpy arrays indexed by op or by sub-flow (a send split over parallel paths
is several sub-flows). Time advances from one event to the next: the earliest of a timed
event (a sub-flow's latency expiring, a compute or a release time; a heap ordered by time,
then push order) and the earliest fluid completion. All completions at one instant are
one event, and rates are re-solved only when the set of draining flows changed.

A run reads: reduce (symmetry classes, :func:`execute`) -> choose the path
(:func:`.config.choose_path`, from the input's sizes and an :class:`~.config.EngineConfig`)
-> run this loop, which hands over to the compiled loop (:func:`.loop.run_events`, with the
chosen solver) -> expand to the result; the path is recorded in ``Result.meta["engine"]``.

This numpy loop is the same loop as the compiled one, kept for what that one does not do:
applying faults (rerouting calls the router, in Python: the compiled loop stops before each
fault and hands its state back, :meth:`_Execution._take_back`, then goes on), installs
without numba (``--no-deps``), the reference solver the conformance
tests compare every path with, and the first events of every run: a run with few events
ends here without loading compiled code (``EngineConfig.numpy_work``).
"""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import Callable

import numpy as np

from ..errors import InputError, SimulationError
from ..interrupts import checkpoint
from ..schedule import BARRIER, COMPUTE, SEND, Schedule
from .config import EngineConfig, EnginePath, choose_path, require_work_space
from .maxmin import incidence_levels, max_min_rates_csr, max_min_rates_warm
from .result import Result
from .symmetry import find_classes, quotient, transpose
from .tolerance import _REL_TOL, check_tolerance, window_end

__all__ = ["execute", "ProgressCallback"]

#: ``progress(events_done, simulated_time_s)``, called every few events.
ProgressCallback = Callable[[int, float], None]

# Timed-event kinds; the compiled loop takes this heap over as is (engine.events' kinds).
_ACTIVATE, _COMPLETE, _RELEASE, _FAULT = 0, 1, 2, 3


def _per_op(overhead, n_ops: int) -> np.ndarray:
    """The per-message overhead of every op (s): one value for all, or one per op."""
    values = _times("overhead", overhead)
    if values.ndim == 0:
        return np.full(n_ops, float(values))
    if values.shape != (n_ops,):
        raise SimulationError(f"overhead: one value or one per op ({n_ops}), got "
                              f"{values.size}")
    return values.copy()


def _times(name: str, value) -> np.ndarray:
    """``value`` (s; one or an array) as floats, or a one-line InputError naming ``name``
    and the first value that is not a finite time >= 0: nan never completes an op (the
    run would not return), inf leaves its dependants waiting forever."""
    if isinstance(value, (bool, np.bool_, str)):
        raise InputError(f"{name} must be a finite time >= 0 s, got {value!r}")
    try:
        values = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a finite time >= 0 s, got {value!r}") from None
    bad = ~np.isfinite(values) | (values < 0)
    if bad.any():
        where = "" if values.ndim == 0 else f"[{int(np.flatnonzero(bad.ravel())[0])}]"
        first = value if values.ndim == 0 else float(values.ravel()[bad.ravel()][0])
        raise InputError(f"{name}{where} must be a finite time >= 0 s, got {first!r}")
    return values


def _counted(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(values, return_counts=True)``, without its sort for a single value."""
    if values.size == 1:
        return values, np.ones(1, dtype=np.intp)
    return np.unique(values, return_counts=True)


def _op_subs(sub_op: np.ndarray, n_ops: int) -> tuple[np.ndarray, np.ndarray]:
    """Each op's sub-flows as CSR (ptr, ids), the transpose of ``sub_op``."""
    return transpose(np.arange(sub_op.size + 1), sub_op, n_ops)


def _gather_ranges(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenation of ``idx[ptr[r]:ptr[r+1]]`` for every r in ``rows``, without a loop."""
    return _gather_spans(ptr[rows], ptr[rows + 1] - ptr[rows], idx)


def _gather_spans(starts: np.ndarray, lengths: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Concatenation of ``idx[s:s+n]`` for every (s, n) in zip(starts, lengths)."""
    if lengths.size == 1:                     # the common case of small runs: one slice
        return idx[int(starts[0]):int(starts[0]) + int(lengths[0])]
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=idx.dtype)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return idx[np.arange(total) + offsets]


#: Seconds between two pauses of the compiled loop: a signal's handler runs only when the
#: process is back in Python (netsim.interrupts), so this is how soon Ctrl-C or SIGTERM
#: stops a run, the event under way aside. A pause costs tens of microseconds and changes
#: nothing of the answer.
PAUSE_S = 0.1


class _Pauser:
    """A thread that asks the compiled loop to pause (``ints[I_PAUSE] = 1``) every
    :data:`PAUSE_S` seconds while the loop runs (it runs without the GIL), for as long as
    the ``with`` block lasts. Pausing by the clock, not by a count of events: an event
    can take microseconds or, with millions of flows draining, seconds."""

    def __init__(self, ints: np.ndarray, slot: int) -> None:
        self.ints, self.slot = ints, slot
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="netsim-pause", daemon=True)

    def _watch(self) -> None:
        while not self.stop.wait(PAUSE_S):
            self.ints[self.slot] = 1

    def __enter__(self) -> "_Pauser":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


class _Execution:
    """One run. Build it, then call :meth:`run`."""

    def __init__(self, topology, schedule: Schedule, routes, *, overhead,
                 not_before: np.ndarray | None, progress: ProgressCallback | None,
                 record_timeline: bool, faults=(), progress_every: int = 64,
                 capacity: np.ndarray | None = None,
                 weight: np.ndarray | None = None, tolerance: float = 0.0,
                 config: EngineConfig | None = None, path: EnginePath | None = None) -> None:
        self.topo, self.schedule, self.routes = topology, schedule, routes
        self.config = EngineConfig() if config is None else config
        # ``capacity`` and ``weight`` describe a symmetry quotient (engine.symmetry): links
        # are link classes, and a path incidence counts for ``weight`` flows of its class.
        self.capacity = (topology.bandwidth if capacity is None else capacity
                         ).astype(np.float64, copy=True)
        self.n_links = len(self.capacity)
        self.path_weight = None if weight is None else np.asarray(weight, dtype=np.float64)
        self.overhead = _per_op(overhead, schedule.num_ops)      # s per message, by op
        # Approximate mode: the flows due within tolerance x t of a completion at t
        # complete with the last of them (engine.tolerance). 0 (exact): only the engine's
        # own 1e-9 merge window.
        self.tolerance = check_tolerance(tolerance)
        self.not_before = (np.zeros(schedule.num_ops) if not_before is None
                           else _times("not_before", not_before))
        self.progress, self.progress_every = progress, progress_every
        self.timeline = [] if record_timeline else None
        self.faults = sorted(faults, key=lambda f: f.time)
        self._init_flows(schedule, routes)
        self._init_ops(schedule)
        self._init_network()
        self.path = path if path is not None else choose_path(
            self.config, ops=schedule.num_ops, subflows=self.n_flows,
            incidences=int(self.path_len.sum()), dependencies=int(self.succ_idx.size),
            timeline=self.timeline is not None)
        require_work_space(self.config, self.path, subflows=self.n_flows,
                           incidences=int(self.path_len.sum()))

    def _init_flows(self, schedule: Schedule, routes) -> None:
        """The sub-flows of the sends (routes are in the order of the schedule's send
        ops), their paths and what each op waits for of them."""
        n_ops = schedule.num_ops
        send_ops = np.flatnonzero(schedule.kind == SEND)
        self.sub_op = send_ops[routes.sub_req]
        self.sub_bytes = schedule.nbytes[self.sub_op] * routes.sub_frac
        self.sub_latency = np.array(routes.sub_latency, dtype=np.float64)
        self.sub_req = np.asarray(routes.sub_req, dtype=np.intp)
        n_sub = self.n_flows = len(self.sub_op)
        # Paths as (start, length) spans into a growable link array, so a rerouted
        # sub-flow just points at a new span.
        self.path_start = np.asarray(routes.path_ptr[:-1], dtype=np.intp).copy()
        self.path_len = np.diff(np.asarray(routes.path_ptr, dtype=np.intp))
        self.path_links = np.asarray(routes.path_links, dtype=np.intp)
        self.sub_empty = self.path_len == 0
        self.sub_done = np.zeros(n_sub, dtype=bool)
        self.earliest = np.zeros(n_sub)          # no activation before (after a reroute), s
        self.credited = np.zeros(n_sub)                   # bytes of a sub-flow credited so far
        self.remaining = self.sub_bytes.copy()
        self.rate = np.zeros(n_sub)
        self.is_new = np.zeros(n_sub, dtype=bool)
        self.op_subs_ptr, self.op_subs_idx = _op_subs(self.sub_op, n_ops)
        self.subs_left = np.diff(self.op_subs_ptr).copy()

    def _init_ops(self, schedule: Schedule) -> None:
        """Dependency bookkeeping (successors as CSR, the transpose of the deps), the op
        times and the timed-event heap."""
        n_ops = schedule.num_ops
        self.succ_ptr, self.succ_idx = transpose(schedule.dep_ptr, schedule.dep_idx, n_ops)
        self.waiting = np.diff(schedule.dep_ptr).copy()
        self.op_release = np.full(n_ops, np.nan)
        self.op_start = np.full(n_ops, np.nan)
        self.op_finish = np.full(n_ops, np.nan)
        self.heap: list = []
        self._seq = itertools.count()
        self.events = 0
        self.now = 0.0
        self.work = 0                 # draining incidences summed over events (numpy_work)
        self.compiled_events = None   # events the compiled loop ran (None: it never ran)

    def _init_network(self) -> None:
        """The draining set, per-link counts and loads, and the warm start's state."""
        n_links = self.n_links
        self.active = np.zeros(0, dtype=np.int64)      # draining sub-flows, in order
        self.active_links = np.zeros(0, dtype=np.intp)  # their paths, concatenated
        self.active_weight = np.zeros(0)
        # What changed since the last solve, for the warm start (maxmin.max_min_rates_warm).
        # level[l] is the link's saturation level in the last solution (its largest flow
        # rate if saturated, else inf), filled in only when l first loses a flow (``lost``):
        # the warm start reads it nowhere else. None: no solution to start from.
        self.level: np.ndarray | None = None
        self.lost = np.zeros(n_links, dtype=bool)
        self.failed = np.zeros(n_links, dtype=bool)
        self.link_bytes = np.zeros(n_links)   # credited at reroutes and at the end
        self.fault_log: list[dict] = []
        self.link_busy = np.zeros(n_links)
        self.link_peak = np.zeros(n_links, dtype=np.int64)
        self.link_count = np.zeros(n_links, dtype=np.int64)

    # -- timed events -----------------------------------------------------------------
    def _push(self, times: np.ndarray, kind: int, ids: np.ndarray) -> None:
        """Queue ``ids`` at ``times``, one heap entry per distinct time."""
        if ids.size == 0:
            return
        if ids.size == 1:
            heapq.heappush(self.heap, (float(times[0]), next(self._seq), kind, ids))
            return
        uniq, inverse = np.unique(times, return_inverse=True)
        if uniq.size == 1:
            heapq.heappush(self.heap, (float(uniq[0]), next(self._seq), kind, ids))
            return
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(uniq.size + 1))
        for k, t in enumerate(uniq.tolist()):
            heapq.heappush(self.heap, (t, next(self._seq), kind,
                                       ids[order[bounds[k]:bounds[k + 1]]]))

    # -- op life ------------------------------------------------------------------------
    def _release(self, ops: np.ndarray, t: float) -> np.ndarray:
        """Release ready ops at ``t``; return those that finish at once (barriers, no-ops)."""
        # The same window as the event loop's merging (horizon <= t (1 + tol)): an op the
        # loop has merged into this event must not be pushed back into it, or it spins.
        late = self.not_before[ops] > t * (1 + _REL_TOL)
        if late.any():
            self._push(self.not_before[ops[late]], _RELEASE, ops[late])
            ops = ops[~late]
        self.op_release[ops] = t
        kind = self.schedule.kind[ops]
        sends = ops[kind == SEND]
        computes = ops[kind == COMPUTE]
        self.op_start[ops[kind != SEND]] = t
        if sends.size:
            self.op_start[sends] = t + self.overhead[sends]
            subs = _gather_ranges(self.op_subs_ptr, self.op_subs_idx, sends)
            self._push(t + self.overhead[self.sub_op[subs]] + self.sub_latency[subs],
                       _ACTIVATE, subs)
        seconds = self.schedule.seconds[computes]
        timed = seconds > 0
        self._push(t + seconds[timed], _COMPLETE, computes[timed])
        return np.concatenate([ops[kind == BARRIER], computes[~timed]])

    def _finish(self, ops: np.ndarray, t: float) -> None:
        """Mark ops finished at ``t`` and release, transitively, what they unblock."""
        while ops.size:
            self.op_finish[ops] = t
            succ = _gather_ranges(self.succ_ptr, self.succ_idx, ops)
            if succ.size == 0:
                return
            unblocked, count = _counted(succ)
            self.waiting[unblocked] -= count
            ready = unblocked[self.waiting[unblocked] == 0]
            ops = self._release(ready, t)

    def _complete_subflows(self, subs: np.ndarray, t: float) -> None:
        self.remaining[subs] = 0.0
        self.sub_done[subs] = True
        ops = self.sub_op[subs]
        done, count = _counted(ops)             # touch only the ops concerned
        self.subs_left[done] -= count
        self._finish(done[self.subs_left[done] == 0], t)

    def _activate(self, subs: np.ndarray, t: float) -> None:
        subs = subs[~self.sub_done[subs]]       # a finished sub-flow has nothing to activate
        delayed = self.earliest[subs] > t * (1 + _REL_TOL)
        if delayed.any():                        # rerouted while its latency was running
            self._push(self.earliest[subs[delayed]], _ACTIVATE, subs[delayed])
            subs = subs[~delayed]
        instant = self.sub_empty[subs] | (self.sub_bytes[subs] == 0)
        self._add_active(subs[~instant])
        if instant.any():
            self._complete_subflows(subs[instant], t)

    # -- the fluid network -----------------------------------------------------------
    def _add_active(self, subs: np.ndarray) -> None:
        """Start draining ``subs``: append them and their paths."""
        links = _gather_spans(self.path_start[subs], self.path_len[subs], self.path_links)
        self.is_new[subs] = True
        self.active = np.concatenate([self.active, subs])
        self.active_links = np.concatenate([self.active_links, links])
        if self.path_weight is None:
            self.link_count += np.bincount(links, minlength=self.n_links)
        else:
            w = _gather_spans(self.path_start[subs], self.path_len[subs], self.path_weight)
            self.active_weight = np.concatenate([self.active_weight, w])
            self.link_count += np.rint(np.bincount(links, weights=w, minlength=self.n_links)
                                       ).astype(np.int64)

    def _keep_active(self, keep: np.ndarray) -> None:
        """Keep only the draining sub-flows where ``keep`` is true (and their paths)."""
        lengths = self.path_len[self.active]
        kept_on = np.repeat(keep, lengths)
        gone = self.active_links[~kept_on]
        if self.level is not None:
            self._note_levels(gone[~self.lost[gone]], lengths)
        self.lost[gone] = True
        if self.path_weight is None:
            self.link_count -= np.bincount(gone, minlength=self.n_links)
        else:
            self.link_count -= np.rint(np.bincount(
                gone, weights=self.active_weight[~kept_on], minlength=self.n_links)
            ).astype(np.int64)
            self.active_weight = self.active_weight[kept_on]
        self.active_links = self.active_links[kept_on]
        self.active = self.active[keep]

    def _note_levels(self, links: np.ndarray, lengths: np.ndarray) -> None:
        """Record the last solution's saturation level of ``links``, about to lose flows.

        The same values as :func:`~netsim.engine.maxmin.saturation_levels`, summed in the
        same order, but only over the incidences of these links, and only for links that
        lose flows (the warm start reads no other level). Flows removed earlier in the
        event do not cross these links (they would be lost already), so the loads are
        those of the last solution; flows added since have no rate yet and count as 0.
        """
        if links.size == 0:
            return
        mark = np.zeros(self.n_links, dtype=bool)
        mark[links] = True
        at = np.flatnonzero(mark[self.active_links])     # the incidences of these links
        owner = np.searchsorted(np.cumsum(lengths), at, side="right")
        subs = self.active[owner]
        r = np.where(self.is_new[subs], 0.0, self.rate[subs])
        weights = None if self.path_weight is None else self.active_weight[at]
        levels = incidence_levels(self.active_links[at], r, self.capacity, weights)
        self.level[mark] = levels[mark]

    def _solve(self) -> None:
        """Max-min rates of the draining sub-flows and per-link flow counts."""
        if self.active.size == 0:
            self.link_count[:] = 0
            self.level = None
            self.lost[:] = False
            return
        links, lengths = self.active_links, self.path_len[self.active]
        new = self.is_new[self.active]
        weights = None if self.path_weight is None else self.active_weight
        small = links.size < self.config.warm_min_incidences
        cold = self.path.solver == "cold"
        if cold or small or self.level is None or new.sum() * 2 > new.size:
            rate = max_min_rates_csr(lengths, links, self.capacity, weights)  # cold: mostly new
        else:
            rate = max_min_rates_warm(lengths, links, self.capacity, self.rate[self.active],
                                      new, self.level, self.lost, weights)
        self.rate[self.active] = rate
        if small or cold:               # no warm start next time: no levels to keep
            self.level = None
        elif self.level is None:
            self.level = np.full(self.n_links, np.inf)
        self.lost[:] = False
        self.is_new[self.active] = False
        np.maximum(self.link_peak, self.link_count, out=self.link_peak)
        if (self.rate[self.active] <= 0).any():
            raise SimulationError("a flow has no capacity left on its path")

    def _advance(self, dt: float) -> None:
        if self.active.size == 0 or dt <= 0:
            return
        self.remaining[self.active] -= self.rate[self.active] * dt
        self.link_busy[self.link_count > 0] += dt
        if self.timeline is not None:
            load = self._link_load()
            used = np.flatnonzero(load)
            self.timeline.append((self.now, self.now + dt, used, load[used]))

    def _link_load(self) -> np.ndarray:
        """Bytes/s currently carried by each link."""
        lengths = self.path_len[self.active]
        on = np.repeat(self.rate[self.active], lengths)
        if self.path_weight is not None:
            on = on * self.active_weight
        return np.bincount(self.active_links, weights=on, minlength=self.n_links)

    def _step(self) -> float:
        """Process the next event; return its time (inf when nothing is left).

        Termination does not depend on floating point: an event that is a fluid completion
        always completes the flow(s) that finish first, even when ``now + dt == now`` in
        float (a 1-byte flow at t = 1e6 s, a long chain of tiny flows) and the clock cannot
        move. So every event retires at least one flow or one queued timed event, and a run
        takes at most (timed events + sub-flows) events.
        """
        t_heap = self.heap[0][0] if self.heap else np.inf
        if self.active.size:
            finish_dt = self.remaining[self.active] / self.rate[self.active]
            dt_fluid = float(finish_dt.min())
        else:
            finish_dt, dt_fluid = None, np.inf
        fluid = self.now + dt_fluid <= t_heap    # a fluid completion comes first
        t_next = self.now + dt_fluid if fluid else t_heap
        if t_next == np.inf:
            return t_next
        if fluid and self.tolerance:          # approximate mode: engine.tolerance
            t_next = window_end(self.now, finish_dt, dt_fluid, t_heap, self.tolerance)
        dt = t_next - self.now
        self._advance(dt)
        self.now = t_next
        changed = False
        if finish_dt is not None:
            done = (finish_dt <= max(dt, dt_fluid if fluid else 0.0) * (1 + _REL_TOL)) | \
                   (self.remaining[self.active] <= _REL_TOL * self.sub_bytes[self.active])
            if done.any():
                finished = self.active[done]
                self._keep_active(~done)
                self._complete_subflows(finished, t_next)
                changed = True
        horizon = t_next + _REL_TOL * max(dt, 0.0)
        while self.heap and self.heap[0][0] <= horizon:
            _, _, kind, ids = heapq.heappop(self.heap)
            if kind == _ACTIVATE:
                self._activate(ids, t_next)
                changed = True
            elif kind == _COMPLETE:
                self._finish(ids, t_next)
            elif kind == _FAULT:
                self._apply_fault(ids, t_next)
                changed = True
            else:
                self._finish(self._release(ids, t_next), t_next)
        if changed:
            self._solve()
        self.events += 1
        if self.progress and self.events % self.progress_every == 0:
            self.progress(self.events, self.now)
        return t_next

    def run(self) -> "_Execution":
        for fault in self.faults:
            if fault.time <= 0:
                self._apply_fault(fault, 0.0)
            else:
                heapq.heappush(self.heap, (fault.time, next(self._seq), _FAULT, fault))
        ready = np.flatnonzero(self.waiting == 0)
        self._finish(self._release(ready, 0.0), 0.0)
        self._solve()
        hand_over = self.path.numpy_work
        while self._step() != np.inf:
            self.work += self.active_links.size + self.config.event_work
            # the compiled loop goes on from here, to the end or to the next fault, which
            # this loop applies (rerouting calls the router) before handing over again
            if hand_over is not None and self.work > hand_over and self._run_compiled():
                break
        if np.isnan(self.op_finish).any():
            stuck = int(np.flatnonzero(np.isnan(self.op_finish))[0])
            raise SimulationError(f"op {stuck} never finished: its dependencies never completed")
        if self.progress:
            self.progress(self.events, self.now)
        return self

    def engine_meta(self) -> dict:
        """What ran (``Result.meta["engine"]``): the loop, its solver, the events the
        numpy loop ran (before a compiled loop took over, and the faults it applied), the
        tolerance."""
        ran = self.path.loop if self.compiled_events is not None else "numpy"
        numpy_events = self.events - (self.compiled_events or 0)
        solver = self.path.solver if ran == self.path.loop else \
            ("warm" if self.config.warm else "cold")
        return {"loop": ran, "solver": solver, "numpy_events": int(numpy_events),
                "tolerance": self.tolerance}

    def _run_compiled(self) -> bool:
        """Go on with the event loop as compiled code (engine.loop, with the solver
        ``path.loop`` names), from the state the numpy loop left: the draining flows, their
        rates and the queued timed events. It runs to the end (returns True) or stops
        before the next fault and hands the state back to this loop (False)."""
        from . import loop as compiled

        i64, f64 = np.int64, np.float64

        def arr(values, dtype):
            return np.ascontiguousarray(values, dtype=dtype)

        def read_only(values, dtype):
            # the router's paths are read-only, a quotient's are not: one kind for both, so
            # numba compiles (and pip install precompiles) each loop once, not once per kind
            view = arr(values, dtype).view()
            view.flags.writeable = False
            return view

        n_sub = len(self.sub_op)
        weighted = self.path_weight is not None
        ints = np.zeros(7, dtype=i64)
        ints[compiled.I_EVENTS] = self.events
        ints[compiled.I_ACTIVE] = self.active.size
        faults = [entry for entry in self.heap if entry[2] == _FAULT]
        stop = min((entry[0] for entry in faults), default=np.inf)
        floats = np.array([self.now, self.tolerance, self.config.link_scan_factor, stop])
        ht, hq, n_queued = _heap_arrays([entry for entry in self.heap
                                         if entry[2] != _FAULT])
        ints[compiled.I_HEAP] = ints[compiled.I_SEQ] = n_queued
        self.heap = []
        self.waiting = arr(self.waiting, i64)
        self.subs_left = arr(self.subs_left, i64)
        # the stack of ops finishing at an instant is work space the loop reuses
        ops = (arr(self.schedule.kind, i64), arr(self.schedule.seconds, f64),
               arr(self.overhead, f64), arr(self.not_before, f64), arr(self.succ_ptr, i64),
               arr(self.succ_idx, i64), self.waiting, arr(self.op_subs_ptr, i64),
               arr(self.op_subs_idx, i64), arr(self.sub_latency, f64), self.op_release,
               self.op_start, self.op_finish, np.empty(self.schedule.num_ops + 1, dtype=i64))
        flows = (arr(self.sub_op, i64), self.subs_left, self.remaining, self.sub_done,
                 arr(self.earliest, f64))
        paths = (arr(self.path_start, i64), arr(self.path_len, i64),
                 read_only(self.path_links, i64),
                 arr(self.path_weight, f64) if weighted else np.zeros(1), weighted,
                 arr(self.sub_bytes, f64))
        busy_from = np.full(self.n_links, self.now)    # links busy now: busy from here on
        links = (self.capacity, self.link_count, self.link_busy, busy_from, self.link_peak)
        active = np.empty(max(n_sub, 1), dtype=i64)
        active[:self.active.size] = self.active
        level = np.full(self.n_links, np.inf)     # I_SOLVED = 0: the first solve is cold
        # work space: per draining flow its time to finish, the flows finishing at an
        # event, the flows starting at one
        draining = (active, self.rate, self.is_new, level, np.empty(max(n_sub, 1)),
                    np.empty(max(n_sub, 1), dtype=i64), np.empty(max(n_sub, 1), dtype=i64),
                    self.remaining)
        warm = self.path.solver != "cold"
        solver = compiled.SOLVERS[self.path.loop]
        states = compiled.new_states(solver, n_sub, self.n_links, paths)
        # a timeline is recorded with engine.kernel only (choose_path): it keeps every
        # draining flow's rate, which the links' loads are summed from
        tl = compiled.new_timeline(self.n_links, self.timeline is not None)
        # The loop pauses between events, every PAUSE_S seconds (see _Pauser) and, under a
        # progress report, every progress_every events; the solver's state goes on from
        # where it paused, so the answer is the same bit for bit however often it pauses.
        chunk = self.progress_every if self.progress else np.iinfo(i64).max
        events = self.events
        with _Pauser(ints, compiled.I_PAUSE):
            while True:
                ints[compiled.I_PAUSE] = 0
                status, ht, hq, tl = compiled.run_events(solver, chunk, ops, flows, paths,
                                                         links, draining, ht, hq, ints, floats,
                                                         warm, states, tl)
                if status == compiled.NO_CAPACITY:
                    raise SimulationError("a flow has no capacity left on its path")
                self.events = int(ints[compiled.I_EVENTS])
                self.now = float(floats[compiled.F_NOW])
                if status in (compiled.DONE, compiled.STOPPED):
                    break
                checkpoint()          # a signal that came during the call stops the run here
                if self.progress:
                    self.progress(self.events, self.now)
        self.compiled_events = (self.compiled_events or 0) + self.events - events
        self.active = active[:int(ints[compiled.I_ACTIVE])]
        if self.timeline is not None:
            times, ptr, tl_links, tl_loads, counts, _ = tl
            self.timeline.extend((t0, t1, tl_links[ptr[k]:ptr[k + 1]],
                                  tl_loads[ptr[k]:ptr[k + 1]])
                                 for k, (t0, t1) in enumerate(times[:counts[0]].tolist()))
        if status == compiled.DONE:
            return True
        self._take_back(ht[:ints[compiled.I_HEAP]], hq[:ints[compiled.I_HEAP]], faults,
                        busy_from)
        return False

    def _take_back(self, ht: np.ndarray, hq: np.ndarray, faults: list,
                   busy_from: np.ndarray) -> None:
        """The numpy loop's state from the compiled loop's, stopped before a fault: the
        draining flows' paths (their remaining bytes and rates are handed back already),
        the busy time of the links busy now, and the queued events with the faults. (A
        run with faults runs on flows, never on a symmetry quotient: no path weights.)"""
        self.active_links = _gather_spans(self.path_start[self.active],
                                          self.path_len[self.active], self.path_links)
        self.level = None                       # the next solve is cold
        self.lost[:] = False
        busy = self.link_count > 0
        self.link_busy[busy] += self.now - busy_from[busy]
        # The faults go first among the events of their time, as run() queued them before
        # anything else: push numbers below the compiled loop's (which start at 0), in the
        # order they were queued.
        faults = sorted(faults, key=lambda entry: entry[:2])
        self.heap = [(t, k - len(faults), kind, fault)
                     for k, (t, _, kind, fault) in enumerate(faults)]
        self.heap.extend((float(t), int(seq), int(kind), np.array([ident]))
                         for t, (seq, kind, ident) in zip(ht.tolist(), hq.tolist()))
        heapq.heapify(self.heap)
        self._seq = itertools.count(int(hq[:, 0].max()) + 1 if hq.size else 0)

    def _credit(self, subs: np.ndarray, nbytes: np.ndarray) -> None:
        """Add ``nbytes`` of each sub-flow to every link of its current path."""
        lengths = self.path_len[subs]
        links = _gather_spans(self.path_start[subs], lengths, self.path_links)
        self.link_bytes += np.bincount(links, weights=np.repeat(nbytes, lengths),
                                       minlength=self.n_links)

    # -- faults -------------------------------------------------------------------------
    def _apply_fault(self, fault, t: float) -> None:
        """Fail or degrade links at ``t``; move the unfinished flows off failed links."""
        links = np.asarray(fault.links, dtype=np.intp)
        self.level = None                       # capacities change: solve from scratch
        if fault.is_failure:
            self.failed[links] = True
            self.capacity[links] = 0.0
        else:
            self.capacity[links] = self.topo.bandwidth[links] * fault.factor
        rerouted = self._reroute(t) if fault.is_failure else np.zeros(0, dtype=np.intp)
        self.fault_log.append({"time": t, "links": [self.topo.link_names[l] for l in links],
                               "factor": fault.factor, "rerouted_flows": int(rerouted.size)})

    def _reroute(self, t: float) -> np.ndarray:
        """New paths for unfinished sub-flows crossing a failed link; returns their ids.

        A request the router spreads over several paths (spray, weighted ECMP) keeps that
        spread: a hit sub-flow's remaining bytes are split over its request's new paths by
        their shares (the first new path keeps the sub-flow's id, the others become new
        sub-flows of the same op), so the traffic a failed switch carried spreads over the
        switches left instead of piling onto one path.
        """
        from ..routing.reroute import reroute

        unfinished = np.flatnonzero(~self.sub_done & (self.path_len > 0))
        lengths = self.path_len[unfinished]
        crossing = self.failed[_gather_spans(self.path_start[unfinished], lengths,
                                             self.path_links)]
        starts = np.concatenate(([0], np.cumsum(lengths[:-1]))).astype(np.intp)
        hit = unfinished[np.logical_or.reduceat(crossing, starts)] if unfinished.size \
            else unfinished
        if hit.size == 0:
            return hit
        req = self.sub_req[hit]
        routes = reroute(self.topo, self.failed, np.asarray(self.routes.src)[req],
                         np.asarray(self.routes.dst)[req], self.sub_op[hit])
        draining = np.isin(self.active, hit)
        moved = self.active[draining]
        self._keep_active(~draining)            # before their paths change
        done = self.sub_bytes[hit] - self.remaining[hit]
        self._credit(hit, done - self.credited[hit])
        self.credited[hit] = done
        left = self.remaining[hit]
        # New sub-flow j of hit sub-flow routes.sub_req[j] (routes has one request per hit).
        owner = hit[routes.sub_req]
        share = left[routes.sub_req] * routes.sub_frac
        first = routes.sub_ptr[:-1]
        extra = np.setdiff1d(np.arange(len(routes.sub_req)), first, assume_unique=True)
        ids = np.empty(len(routes.sub_req), dtype=np.intp)
        ids[first] = hit
        ids[extra] = self._grow(owner[extra])
        self.sub_bytes[ids] = self.credited[ids] + share     # new ones: credited 0
        self.remaining[ids] = share
        self.path_start[ids] = len(self.path_links) + routes.path_ptr[:-1]
        self.path_len[ids] = np.diff(routes.path_ptr)
        self.sub_empty[ids] = self.path_len[ids] == 0
        self.path_links = np.concatenate([self.path_links, routes.path_links])
        self.sub_latency[ids] = routes.sub_latency
        self.earliest[ids] = t + self.sub_latency[ids]
        self._push(self.earliest[moved], _ACTIVATE, moved)
        # The new sub-flows of a released op start now; those of an op not yet released
        # start with it (its release activates every sub-flow of the op).
        born = ids[extra]
        born = born[~np.isnan(self.op_release[self.sub_op[born]])]
        self._push(self.earliest[born], _ACTIVATE, born)
        return hit

    def _grow(self, parents: np.ndarray) -> np.ndarray:
        """Append one sub-flow per ``parents`` entry, of the same op and request; ids."""
        n, k = len(self.sub_op), len(parents)
        ids = np.arange(n, n + k, dtype=np.intp)
        self.sub_op = np.concatenate([self.sub_op, self.sub_op[parents]])
        self.sub_req = np.concatenate([self.sub_req, self.sub_req[parents]])
        for name in ("sub_bytes", "sub_latency", "earliest", "credited", "remaining", "rate"):
            setattr(self, name, np.concatenate([getattr(self, name), np.zeros(k)]))
        for name in ("sub_done", "sub_empty", "is_new"):
            setattr(self, name, np.concatenate([getattr(self, name), np.zeros(k, bool)]))
        for name in ("path_start", "path_len"):
            setattr(self, name, np.concatenate([getattr(self, name),
                                                np.zeros(k, dtype=np.intp)]))
        self.op_subs_ptr, self.op_subs_idx = _op_subs(self.sub_op, self.schedule.num_ops)
        np.add.at(self.subs_left, self.sub_op[ids], 1)
        return ids

    def _result(self) -> Result:
        every = np.arange(len(self.sub_op))
        self._credit(every, self.sub_bytes - self.credited)
        meta = {"engine": {**self.engine_meta(), "symmetry": symmetry_meta(self.n_flows)}}
        if self.fault_log:
            meta["faults"] = self.fault_log
        return _make_result(self.topo, self.schedule, self.op_release, self.op_start,
                            self.op_finish, self.link_bytes, self.link_busy, self.link_peak,
                            self.events, self.n_flows, self.timeline, meta)


def _heap_arrays(heap: list) -> tuple[np.ndarray, np.ndarray, int]:
    """The numpy loop's queued events as the compiled loop's heap (engine.events): times,
    and per entry (push order, kind, id), one entry per id; with the number of entries.
    Sorted by (time, push order), the array is a heap."""
    queued = sorted(heap, key=lambda entry: entry[:2])
    ids = [np.atleast_1d(entry[3]) for entry in queued]
    sizes = np.array([i.size for i in ids], dtype=np.int64)
    n_queued = int(sizes.sum())
    room = max(64, 2 * n_queued)
    ht, hq = np.empty(room), np.empty((room, 3), dtype=np.int64)
    if n_queued:
        ht[:n_queued] = np.repeat([entry[0] for entry in queued], sizes)
        hq[:n_queued, 0] = np.arange(n_queued)
        hq[:n_queued, 1] = np.repeat([entry[2] for entry in queued], sizes)
        hq[:n_queued, 2] = np.concatenate(ids)
    return ht, hq, n_queued


def _make_result(topo, schedule, release, start, finish, link_bytes, link_busy, link_peak,
                 events, num_flows, timeline, meta) -> Result:
    return Result(
        topology=topo.name, makespan=float(finish.max()) if finish.size else 0.0,
        op_release=release, op_start=start, op_finish=finish,
        link_names=topo.link_names, link_bandwidth=topo.bandwidth,
        link_ends=tuple(zip((topo.node_names[i] for i in topo.link_src),
                            (topo.node_names[i] for i in topo.link_dst))),
        link_bytes=link_bytes, link_busy=link_busy, link_peak_flows=link_peak,
        events=events, num_flows=num_flows, op_tags=schedule.tag, tags=schedule.tags,
        timeline=timeline, meta=meta)


def _expanded(topology, schedule: Schedule, routes, classes, run: "_Execution") -> Result:
    """The full result of a run on the symmetry quotient: every member as its class."""
    lengths = np.diff(np.asarray(routes.path_ptr))
    send_ops = np.flatnonzero(schedule.kind == SEND)
    sub_bytes = schedule.nbytes[send_ops[routes.sub_req]] * routes.sub_frac
    link_bytes = np.bincount(np.asarray(routes.path_links, dtype=np.intp),
                             weights=np.repeat(sub_bytes, lengths),
                             minlength=topology.num_links)
    timeline = None
    if run.timeline is not None:
        timeline = []
        for t0, t1, used, load in run.timeline:
            per_class = np.zeros(run.n_links)
            per_class[used] = load
            full = per_class[classes.link]
            used_full = np.flatnonzero(full)
            timeline.append((t0, t1, used_full, full[used_full]))
    return _make_result(topology, schedule, run.op_release[classes.op],
                        run.op_start[classes.op], run.op_finish[classes.op], link_bytes,
                        run.link_busy[classes.link], run.link_peak[classes.link], run.events,
                        len(routes.sub_req), timeline,
                        {"symmetry_classes": {"ops": int(run.schedule.num_ops),
                                              "flows": int(len(run.sub_op)),
                                              "links": int(run.n_links)},
                         "engine": {**run.engine_meta(),
                                    "symmetry": symmetry_meta(len(routes.sub_req),
                                                              len(run.sub_op))}})


def symmetry_meta(flows: int, simulated: int | None = None) -> dict:
    """``Result.meta["engine"]["symmetry"]``: whether classes were found, the flows, the
    representatives simulated and the reduction factor (flows per representative)."""
    if simulated is None:
        return {"classes": False, "flows": int(flows)}
    return {"classes": True, "flows": int(flows), "simulated": int(simulated),
            "reduction": float(flows / max(simulated, 1))}


def execute(topology, schedule: Schedule, routes, *, overhead=0.0,
            not_before: np.ndarray | None = None, progress: ProgressCallback | None = None,
            record_timeline: bool = False, faults=(), tolerance: float = 0.0,
            config: EngineConfig | None = None) -> Result:
    """Simulate ``schedule`` whose sends are already routed (``routes``, in send-op order).

    ``config`` (:class:`~netsim.engine.config.EngineConfig`, default its defaults) holds
    the engine's tunables; the path taken is in ``Result.meta["engine"]``.

    ``faults`` is a sequence of :class:`~netsim.engine.faults.Fault`: links that fail or
    degrade at a given time; flows are moved off failed links from that moment.
    ``overhead`` (s) is one per-message cost for every send, or an array with one per op
    (a workload whose collectives model different libraries).

    Without faults, flows that cannot be told apart are simulated once per class
    (:mod:`netsim.engine.symmetry`, unless ``config`` says not to); the result is the
    same, member by member.

    ``tolerance`` (relative, default 0 = exact) is the approximate mode: flows due within
    ``tolerance`` x t of a completion at time t complete together, at the last of them, so
    near-simultaneous completions become one event. Each such flow finishes late by at
    most that much, never early: rates stay within link capacities and the makespan
    stays above every lower bound.
    """
    overhead = _per_op(overhead, schedule.num_ops) if np.ndim(overhead) else \
        float(_times("overhead", overhead))
    tolerance = check_tolerance(tolerance)
    if not_before is not None:
        not_before = _times("not_before", not_before)
    config = EngineConfig() if config is None else config
    options = dict(overhead=overhead, progress=progress, record_timeline=record_timeline,
                   tolerance=tolerance, config=config)
    classes = None
    if config.searches_symmetry and not faults:
        classes = find_classes(schedule, routes, topology.bandwidth, not_before=not_before,
                               overhead=overhead, config=config)
    if classes is None:
        from ..budget import require_engine

        require_engine(len(routes.sub_req), len(routes.path_links))
        return _Execution(topology, schedule, routes, not_before=not_before, faults=faults,
                          **options).run()._result()
    q_schedule, q_routes, q_capacity, q_not_before, options["overhead"] = quotient(
        schedule, routes, topology.bandwidth, classes, not_before, overhead)
    run = _Execution(topology, q_schedule, q_routes, not_before=q_not_before,
                     capacity=q_capacity, weight=q_routes.path_weight, **options).run()
    return _expanded(topology, schedule, routes, classes, run)
