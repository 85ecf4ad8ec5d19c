"""Scoring a placement: simulate one step of a workload and measure it.

:class:`StepModel` binds a machine, a layout and a workload; :meth:`StepModel.evaluate`
builds the step for a placement (:func:`~.workload.build_step`), simulates it in ONE run
of the engine and returns a :class:`StepScore`:

* ``step_s``: the step time. With one stream, the sum over phases of ``repeat x`` the
  phase's simulated span; with overlapped streams, the simulated makespan;
* ``phase_s``: each phase's time per step (span x multiplier);
* per-link bytes per step, from which ``max_util`` and ``mean_util`` (bytes / (bandwidth x
  step time), the mean over every link of the machine), ``hop_bytes`` (sum over links of
  the bytes they carry = sum over messages of bytes x links crossed) and ``link_bound_s``
  (a lower bound on the step from link loads alone, latency ignored: with one stream the
  sum over phases of ``repeat x`` the busiest link's load / bandwidth; with streams the
  larger of the busiest link over the whole step and the slowest stream's sum).

:meth:`StepModel.cheap` computes the link loads and the bound without simulating: the
search's first filter. Algorithms named ``'auto'`` are resolved per placement by
simulating each applicable algorithm on that phase alone (:meth:`StepModel.resolve`).

This module is a client of the engine (one layer above it), as is the search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...engine import Result, route_schedule, simulate
from ..models import timelines_recorded
from ..placed import fabric_topology
from ...errors import InputError
from ...schedule import SEND
from ...placement.layout import ParallelLayout
from ...placement.workload import (DEFAULT_MAX_COPIES, StepSchedule, Workload, build_step,
                                  phase_schedule)

__all__ = ["StepModel", "StepScore", "LinkLoads", "link_bytes_by_tag"]


@dataclass(eq=False)
class StepScore:
    """One placement's step: times in s, bytes, utilisation as a fraction (0..1)."""

    step_s: float
    phase_s: dict[str, float]
    link_bytes: np.ndarray
    max_util: float
    mean_util: float
    hop_bytes: float
    link_bound_s: float
    placement: np.ndarray
    algorithms: dict[str, str]
    result: Result | None = field(default=None, repr=False)
    strategy: str | None = None
    link_util: np.ndarray | None = field(default=None, repr=False)
    engine: dict | None = None      # what the engine ran (Result.meta["engine"])

    def record(self, reference: float | None = None) -> dict[str, Any]:
        """A flat row: strategy, step time, every phase's time, utilisation, hop-bytes and,
        given the reference step time (row-major), the change in percent."""
        row: dict[str, Any] = {"strategy": self.strategy, "step_s": self.step_s}
        row.update({f"{name}_s": t for name, t in self.phase_s.items()})
        row.update(max_link_util=self.max_util, mean_link_util=self.mean_util,
                   hop_bytes=self.hop_bytes, link_bound_s=self.link_bound_s)
        if reference:
            row["vs_row_major_pct"] = 100.0 * (self.step_s / reference - 1.0)
        algos = sorted(set(self.algorithms.values()))
        row["algorithms"] = ",".join(f"{p}={a}" for p, a in self.algorithms.items()) \
            if len(algos) > 1 else (algos[0] if algos else "")
        if self.engine is not None:
            row["engine"] = self.engine
        return row


@dataclass(eq=False)
class LinkLoads:
    """Bytes per link per phase (one occurrence) and the step's totals."""

    per_phase: dict[str, np.ndarray]
    step_bytes: np.ndarray
    bound_s: float

    @property
    def hop_bytes(self) -> float:
        return float(self.step_bytes.sum())


def link_bytes_by_tag(topology, schedule, placement: np.ndarray, router=None
                      ) -> dict[str, np.ndarray]:
    """Tag -> bytes carried by every link (array of num_links) when the tagged sends run,
    from the routes alone (no simulation). Untagged sends are under ``''``."""
    routes = route_schedule(topology, schedule, np.asarray(placement, np.int64), router)
    send_ops = np.flatnonzero(schedule.kind == SEND)
    sub_bytes = schedule.nbytes[send_ops][routes.sub_req] * routes.sub_frac
    lengths = np.diff(routes.path_ptr)
    entry_bytes = np.repeat(sub_bytes, lengths)
    entry_tag = np.repeat(schedule.tag[send_ops][routes.sub_req], lengths)
    out = {}
    for t in np.unique(entry_tag).tolist():
        name = schedule.tags[t] if t >= 0 else ""
        mask = entry_tag == t
        out[name] = np.bincount(routes.path_links[mask], weights=entry_bytes[mask],
                                minlength=topology.num_links)
    return out


class StepModel:
    """A workload on a machine with a layout; scores placements by simulating the step.

    ``router`` (default: the topology's) is reused across evaluations so that its path
    caches stay warm; ``overhead`` is the per-message cost at the sender (s) and ``gamma``
    the reduction rate of a chip (bytes/s), both by default the topology's calibration
    (``alpha``, ``gamma``; 0 and free without one; ``gamma=0`` makes reductions free);
    ``max_copies`` bounds the copies of a repeated phase when streams overlap; ``engine``
    is the engine's :class:`~netsim.engine.config.EngineConfig` for every simulation of
    the step (None: its defaults).
    """

    def __init__(self, topology, layout: ParallelLayout, workload: Workload, *, router=None,
                 overhead: float | None = None, gamma: float | None = None,
                 max_copies: int = DEFAULT_MAX_COPIES, engine=None) -> None:
        from ...algorithms.options import AlgoOptions
        from ...routing import default_router
        from ..request import machine_costs

        layout.check_fits(topology.num_endpoints, repr(topology.name))
        self.topology = topology
        self.layout = layout
        self.workload = workload.active(layout)
        if not self.workload.phases:
            raise InputError(f"no phase of the workload moves data on layout "
                             f"{layout.describe()} (every degree is 1 or every size 0)")
        self.router = router if router is not None else default_router(topology)
        self.overhead, costs = machine_costs(topology, overhead, AlgoOptions(gamma=gamma))
        self.gamma = float(costs.gamma) if costs.gamma else None
        self.max_copies = int(max_copies)
        self.engine = engine

    # -- building -----------------------------------------------------------------------
    def resolve(self, placement: Sequence[int]) -> dict[str, str]:
        """Phase -> algorithm, ``'auto'`` replaced by the fastest applicable algorithm for
        that phase alone under ``placement`` (ties: registry order)."""
        placement = np.asarray(placement, dtype=np.int64)
        return {p.name: (self._fastest(p, placement) if p.algorithm == "auto" else p.algorithm)
                for p in self.workload.phases}

    def _fastest(self, phase, placement: np.ndarray) -> str:
        """The fastest algorithm of ``phase`` alone (ties: registry order). Candidates are
        simulated smallest lower bound first (:mod:`netsim.algorithms.lower_bound`), and
        one whose bound already exceeds the best time is not simulated: it cannot win."""
        from ...algorithms import AlgoOptions, algorithms_for
        from ...algorithms.lower_bound import engine_floor, schedule_bound

        k = self.layout.degree(phase.dim)
        options = AlgoOptions(chunks=phase.chunks, gamma=self.gamma, topology=self.topology,
                              placement=placement[:k])
        built = []
        for index, algo in enumerate(algorithms_for(phase.op)):
            if not algo.applies(k, options):
                continue
            try:
                sched, extra = phase_schedule(phase, self.topology, self.layout, placement,
                                              algo.name, gamma=self.gamma)
            except InputError:
                continue
            full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
            machine = fabric_topology(self.topology, sched)
            low = engine_floor(schedule_bound(machine, sched, full, router=self.router,
                                              overhead=self.overhead), sched)
            built.append((low, index, algo.name, sched, full, machine))
        best: tuple[float, int, str] | None = None
        for low, index, name, sched, full, machine in sorted(built, key=lambda b: b[:2]):
            if best is not None and (low > best[0] or (low >= best[0] and index > best[1])):
                continue
            t = simulate(machine, sched, full, router=self.router,
                         overhead=self.overhead, config=self.engine).makespan
            if best is None or (t, index) < best[:2]:
                best = (t, index, name)
        if best is None:
            raise InputError(f"phase {phase.name!r}: no {phase.op} algorithm applies to "
                             f"groups of {k} ranks on {self.topology.name!r}")
        return best[2]

    def step(self, placement: Sequence[int], algorithms: dict[str, str] | None = None
             ) -> StepSchedule:
        """The step's schedule under ``placement``, built for it: an algorithm may read
        the placement (rings its rank order, nccl whether a group crosses nodes), and two
        placements that happen to build the same schedule say nothing of a third. The
        groups' schedules are cached per group and nodes (``placement.workload``), so a
        search that moves a few groups rebuilds only those."""
        placement = np.asarray(placement, dtype=np.int64)
        algorithms = algorithms if algorithms is not None else self.resolve(placement)
        return self._build(placement, algorithms)

    def _build(self, placement: np.ndarray, algorithms: dict[str, str]) -> StepSchedule:
        return build_step(self.topology, self.layout, self.workload, placement, algorithms,
                          self.max_copies, self.gamma)

    # -- scoring ------------------------------------------------------------------------
    def loads(self, step: StepSchedule) -> LinkLoads:
        """Bytes per link per phase and per step, and the link-load bound of the step."""
        per_phase = link_bytes_by_tag(self.topology, step.schedule, step.placement, self.router)
        per_phase = {p.name: per_phase.get(p.name, np.zeros(self.topology.num_links))
                     for p in step.phases}
        repeat = {p.name: p.repeat for p in step.phases}
        bw = self.topology.bandwidth
        # Bytes per step: phases simulated once count `repeat` times; expanded copies
        # already carry repeat x the bytes between them.
        scale = {n: (repeat[n] if step.sequential else 1.0) for n in per_phase}
        step_bytes = sum((per_phase[n] * scale[n] for n in per_phase),
                         np.zeros(self.topology.num_links))
        phase_bound = {n: float((b / bw).max()) * scale[n] for n, b in per_phase.items()}
        stream_sums = [sum(phase_bound[n] for n in names) for names in step.streams.values()]
        bound = max(stream_sums) if stream_sums else 0.0
        if not step.sequential:
            bound = max(bound, float((step_bytes / bw).max()))
        return LinkLoads(per_phase, step_bytes, bound)

    def cheap(self, placement: Sequence[int], algorithms: dict[str, str] | None = None
              ) -> tuple[float, float]:
        """(link-load bound of the step in s, hop-bytes): no simulation."""
        loads = self.loads(self.step(placement, algorithms))
        return loads.bound_s, loads.hop_bytes

    def _simulate(self, placement: np.ndarray, algorithms: dict[str, str] | None,
                  record: bool = False):
        algorithms = algorithms if algorithms is not None else self.resolve(placement)
        step = self.step(placement, algorithms)
        # the fabric the step's collectives run on (tt_ring: the ring fabric of an auto one)
        result = simulate(fabric_topology(self.topology, step.schedule), step.schedule,
                          step.placement, router=self.router, overhead=self.overhead,
                          record_timeline=record, config=self.engine)
        phase_s = {}
        for p in step.phases:
            release, finish = result.tag_span(p.name)
            phase_s[p.name] = (finish - release) * step.multiplier[p.name]
        step_s = sum(phase_s.values()) if step.sequential else float(result.makespan)
        return step, result, phase_s, float(step_s)

    def step_time(self, placement: Sequence[int], algorithms: dict[str, str] | None = None
                  ) -> float:
        """The simulated step time (s) alone: the search's objective."""
        return self._simulate(np.asarray(placement, dtype=np.int64), algorithms)[3]

    def evaluate(self, placement: Sequence[int], algorithms: dict[str, str] | None = None,
                 strategy: str | None = None, keep_result: bool = True) -> StepScore:
        """Simulate the step under ``placement`` (see the module docstring)."""
        placement = np.asarray(placement, dtype=np.int64)
        # a kept result records its timeline for figures over time (recording_timelines)
        step, result, phase_s, step_s = self._simulate(
            placement, algorithms, record=keep_result and timelines_recorded())
        loads = self.loads(step)
        util = loads.step_bytes / (self.topology.bandwidth * step_s) if step_s > 0 \
            else np.zeros(self.topology.num_links)
        return StepScore(step_s=float(step_s), phase_s=phase_s, link_bytes=loads.step_bytes,
                         max_util=float(util.max()) if util.size else 0.0,
                         mean_util=float(util.mean()) if util.size else 0.0,
                         hop_bytes=loads.hop_bytes, link_bound_s=loads.bound_s,
                         placement=placement, algorithms=dict(step.algorithms),
                         result=result if keep_result else None, strategy=strategy,
                         link_util=util, engine=result.meta.get("engine"))


    def phase_utilisation(self, score: StepScore) -> dict[str, np.ndarray]:
        """Per phase of ``score``'s step, each link's utilisation while that phase runs
        (0..1): the bytes of one occurrence over bandwidth x the occurrence's span. A step
        average hides a short phase behind a long one (the tensor-parallel all-reduce behind
        the data-parallel one); this does not."""
        step = self.step(score.placement, score.algorithms)
        per_phase = self.loads(step).per_phase
        bw = self.topology.bandwidth
        return {name: (per_phase[name] * step.multiplier[name] / (bw * score.phase_s[name])
                       if score.phase_s.get(name, 0.0) > 0 else np.zeros_like(bw))
                for name in per_phase}


