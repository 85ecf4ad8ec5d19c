"""Run a placed schedule on a topology: the event loop of the fluid network.

A send's life (DESIGN.md): released when its dependencies finish (and not before its
``not_before`` time) -> per-message ``overhead`` at the sender -> the path latency (sum of
its links' latencies) -> it drains its bytes at its max-min fair rate -> complete. A lone
flow of B bytes on a path of capacity C and latency L thus takes L + B/C.

State lives in numpy arrays indexed by op or by sub-flow (a send split over parallel paths
is several sub-flows). Time advances on a SimPy clock from one event to the next: the
earliest of a timed event (a sub-flow's latency expiring, a compute or a release time) and
the earliest fluid completion. All completions at one instant are one event, and rates are
re-solved only when the set of draining flows changed.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Callable

import numpy as np
import scipy.sparse as sp
import simpy

from ..errors import SimulationError
from ..schedule import BARRIER, COMPUTE, SEND, Schedule
from .maxmin import max_min_rates_csr
from .result import Result

__all__ = ["execute", "ProgressCallback"]

#: ``progress(events_done, simulated_time_s)``, called every few events.
ProgressCallback = Callable[[int, float], None]

_ACTIVATE, _COMPLETE, _RELEASE = 0, 1, 2
_REL_TOL = 1e-9  # completions within this relative time of an event join it


def _gather_ranges(ptr: np.ndarray, idx: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenation of ``idx[ptr[r]:ptr[r+1]]`` for every r in ``rows``, without a loop."""
    starts, ends = ptr[rows], ptr[rows + 1]
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=idx.dtype)
    offsets = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return idx[np.arange(total) + offsets]


class _Execution:
    """One run. Build it, then call :meth:`run`."""

    def __init__(self, topology, schedule: Schedule, routes, *, overhead: float,
                 not_before: np.ndarray | None, progress: ProgressCallback | None,
                 record_timeline: bool, progress_every: int = 64) -> None:
        self.topo, self.schedule = topology, schedule
        n_ops = schedule.num_ops
        self.capacity = topology.bandwidth.astype(np.float64, copy=True)
        self.overhead = float(overhead)
        self.not_before = (np.zeros(n_ops) if not_before is None
                           else np.asarray(not_before, dtype=np.float64))
        self.progress, self.progress_every = progress, progress_every
        self.timeline = [] if record_timeline else None

        # Sub-flows of the sends (routes are in the order of the schedule's send ops).
        send_ops = np.flatnonzero(schedule.kind == SEND)
        self.sub_op = send_ops[routes.sub_req]
        self.sub_bytes = schedule.nbytes[self.sub_op] * routes.sub_frac
        self.sub_latency = routes.sub_latency
        n_sub = len(self.sub_op)
        self.path_ptr = np.asarray(routes.path_ptr, dtype=np.intp)
        self.path_links = np.asarray(routes.path_links, dtype=np.intp)
        self.path_len = np.diff(self.path_ptr)
        self.sub_empty = self.path_len == 0
        self.flow_links = sp.csr_matrix(
            (np.ones(len(routes.path_links)), routes.path_links, routes.path_ptr),
            shape=(n_sub, topology.num_links))
        self.op_subs_ptr = np.zeros(n_ops + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.sub_op, minlength=n_ops), out=self.op_subs_ptr[1:])
        self.op_subs_idx = np.argsort(self.sub_op, kind="stable")
        self.subs_left = np.diff(self.op_subs_ptr).copy()

        # Dependency bookkeeping: successors as CSR, the transpose of the deps.
        dep_owner = np.repeat(np.arange(n_ops), np.diff(schedule.dep_ptr))
        order = np.argsort(schedule.dep_idx, kind="stable")
        self.succ_idx = dep_owner[order]
        self.succ_ptr = np.zeros(n_ops + 1, dtype=np.int64)
        np.cumsum(np.bincount(schedule.dep_idx, minlength=n_ops), out=self.succ_ptr[1:])
        self.waiting = np.diff(schedule.dep_ptr).copy()

        self.op_release = np.full(n_ops, np.nan)
        self.op_start = np.full(n_ops, np.nan)
        self.op_finish = np.full(n_ops, np.nan)
        self.remaining = self.sub_bytes.copy()
        self.rate = np.zeros(n_sub)
        self.active = np.zeros(0, dtype=np.int64)
        self.link_busy = np.zeros(topology.num_links)
        self.link_peak = np.zeros(topology.num_links, dtype=np.int64)
        self.link_count = np.zeros(topology.num_links, dtype=np.int64)
        self.heap: list = []
        self._seq = itertools.count()
        self.events = 0
        self.now = 0.0

    # -- timed events -----------------------------------------------------------------
    def _push(self, times: np.ndarray, kind: int, ids: np.ndarray) -> None:
        """Queue ``ids`` at ``times``, one heap entry per distinct time."""
        if ids.size == 0:
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
        late = self.not_before[ops] > t
        if late.any():
            self._push(self.not_before[ops[late]], _RELEASE, ops[late])
            ops = ops[~late]
        self.op_release[ops] = t
        kind = self.schedule.kind[ops]
        sends = ops[kind == SEND]
        computes = ops[kind == COMPUTE]
        self.op_start[ops[kind != SEND]] = t
        if sends.size:
            self.op_start[sends] = t + self.overhead
            subs = _gather_ranges(self.op_subs_ptr, self.op_subs_idx, sends)
            self._push(t + self.overhead + self.sub_latency[subs], _ACTIVATE, subs)
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
            self.waiting -= np.bincount(succ, minlength=len(self.waiting))
            ready = np.unique(succ[self.waiting[succ] == 0])
            ops = self._release(ready, t)

    def _complete_subflows(self, subs: np.ndarray, t: float) -> None:
        self.remaining[subs] = 0.0
        ops = self.sub_op[subs]
        self.subs_left -= np.bincount(ops, minlength=len(self.subs_left))
        done = np.unique(ops)
        self._finish(done[self.subs_left[done] == 0], t)

    def _activate(self, subs: np.ndarray, t: float) -> None:
        instant = self.sub_empty[subs] | (self.sub_bytes[subs] == 0)
        self.active = np.concatenate([self.active, subs[~instant]])
        if instant.any():
            self._complete_subflows(subs[instant], t)

    # -- the fluid network -----------------------------------------------------------
    def _solve(self) -> None:
        """Max-min rates of the draining sub-flows and per-link flow counts."""
        if self.active.size == 0:
            self.link_count[:] = 0
            return
        links = _gather_ranges(self.path_ptr, self.path_links, self.active)
        self.rate[self.active] = max_min_rates_csr(self.path_len[self.active], links,
                                                   self.capacity)
        self.link_count = np.bincount(links, minlength=self.topo.num_links)
        np.maximum(self.link_peak, self.link_count, out=self.link_peak)
        if (self.rate[self.active] <= 0).any():
            raise SimulationError("a flow has no capacity left on its path")

    def _advance(self, dt: float) -> None:
        if self.active.size == 0 or dt <= 0:
            return
        self.remaining[self.active] -= self.rate[self.active] * dt
        self.link_busy[self.link_count > 0] += dt
        if self.timeline is not None:
            load = self.flow_links[self.active].T @ self.rate[self.active]
            used = np.flatnonzero(load)
            self.timeline.append((self.now, self.now + dt, used, load[used]))

    def _step(self) -> float:
        """Process the next event; return its time (inf when nothing is left)."""
        t_heap = self.heap[0][0] if self.heap else np.inf
        if self.active.size:
            finish_dt = self.remaining[self.active] / self.rate[self.active]
            t_fluid = self.now + finish_dt.min()
        else:
            finish_dt, t_fluid = None, np.inf
        t_next = min(t_heap, t_fluid)
        if t_next == np.inf:
            return t_next
        dt = t_next - self.now
        self._advance(dt)
        self.now = t_next
        changed = False
        if finish_dt is not None:
            done = (finish_dt <= dt * (1 + _REL_TOL)) | \
                   (self.remaining[self.active] <= _REL_TOL * self.sub_bytes[self.active])
            if done.any():
                finished, self.active = self.active[done], self.active[~done]
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
            else:
                self._finish(self._release(ids, t_next), t_next)
        if changed:
            self._solve()
        self.events += 1
        if self.progress and self.events % self.progress_every == 0:
            self.progress(self.events, self.now)
        return t_next

    def _process(self, env: simpy.Environment):
        ready = np.flatnonzero(self.waiting == 0)
        self._finish(self._release(ready, 0.0), 0.0)
        self._solve()
        while True:
            before = self.now
            if self._step() == np.inf:
                return
            yield env.timeout(self.now - before)

    def run(self) -> Result:
        env = simpy.Environment()
        env.process(self._process(env))
        env.run()
        if np.isnan(self.op_finish).any():
            stuck = int(np.flatnonzero(np.isnan(self.op_finish))[0])
            raise SimulationError(f"op {stuck} never finished: its dependencies never completed")
        if self.progress:
            self.progress(self.events, self.now)
        return self._result()

    def _result(self) -> Result:
        link_bytes = self.flow_links.T @ self.sub_bytes
        finish = self.op_finish
        return Result(
            topology=self.topo.name, makespan=float(finish.max()) if finish.size else 0.0,
            op_release=self.op_release, op_start=self.op_start, op_finish=finish,
            link_names=self.topo.link_names, link_bandwidth=self.topo.bandwidth,
            link_ends=tuple(zip((self.topo.node_names[i] for i in self.topo.link_src),
                                (self.topo.node_names[i] for i in self.topo.link_dst))),
            link_bytes=np.asarray(link_bytes, dtype=np.float64), link_busy=self.link_busy,
            link_peak_flows=self.link_peak, events=self.events, num_flows=len(self.sub_op),
            op_tags=self.schedule.tag, tags=self.schedule.tags, timeline=self.timeline)


def execute(topology, schedule: Schedule, routes, *, overhead: float = 0.0,
            not_before: np.ndarray | None = None, progress: ProgressCallback | None = None,
            record_timeline: bool = False) -> Result:
    """Simulate ``schedule`` whose sends are already routed (``routes``, in send-op order)."""
    return _Execution(topology, schedule, routes, overhead=overhead, not_before=not_before,
                      progress=progress, record_timeline=record_timeline).run()
