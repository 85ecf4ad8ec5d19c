"""One resolved collective request at one size: the run pipeline after resolution.

:func:`run_request` takes a :class:`~netsim.run.request.CollectiveRequest` (from
:func:`~netsim.run.request.resolve_request`: the machine, every rank's node or the
groups, the candidates, the calibrated costs, all settled) and runs it in order: build,
place and simulate each candidate (:func:`~netsim.run.placed.simulate_algorithm`; the
fastest kept, with exact pruning by lower bounds) -> bounds
(:func:`~netsim.run.placed.run_bounds`) -> the record (:func:`~netsim.run.record.make_run`).
A group run (``--axis``) is the same pipeline on a placement of several groups at once.
:func:`run_on_machine` resolves and runs in one call.

>>> from netsim.topology import parse_topology
>>> run = run_on_machine("allgather", parse_topology("ring:4,bw=1GB/s"), "ring", 4e6,
...                      alpha=0.0)
>>> round(run.time_s * 1e3, 6)          # (p-1)/p S / B
3.0
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..engine import Result
from .checks import ring_sends
from .faultspec import fault_summary, rerouted_flows
from .models import model_fields
from .placed import (KEEP_BUILT_OPS, Built, _chunks, built_bound, group_label, run_bounds,
                     simulate_algorithm)
from .record import CollectiveRun, make_run
from .request import CollectiveRequest, resolve_request
from .search import fastest

__all__ = ["run_on_machine", "run_request"]


def run_on_machine(op: str, topo, algorithm, size, *, ranks: int | None = None,
                   placement: Sequence[int | str] | None = None, options=None,
                   alpha: float | None = None, router=None, progress=None,
                   faults: Sequence = (), model: str = "fluid", packet=None,
                   tolerance: float = 0.0, prune: bool = True,
                   builds=None, engine=None) -> CollectiveRun:
    """Simulate collective ``op`` of ``size`` bytes with ``algorithm`` (a registered name,
    ``'auto'``, an algorithm object or a list of them) on ``topo``, rank r on
    ``placement[r]`` (default: the first ``ranks`` endpoints): :func:`resolve_request`
    then :func:`run_request`. Arguments and record as
    :func:`netsim.run.collective.run_collective`."""
    request = resolve_request(op, topo, algorithm, size, ranks=ranks, placement=placement,
                              options=options, alpha=alpha, router=router, faults=faults,
                              model=model, packet=packet, tolerance=tolerance, prune=prune,
                              engine=engine)
    return run_request(request, request.sizes[0], progress=progress, builds=builds)


def run_request(request: CollectiveRequest, size: float, *, progress=None,
                builds=None) -> CollectiveRun:
    """The record of ``request`` run at ``size`` bytes (one of ``request.sizes``):
    every candidate built, placed and simulated (those a lower bound rules out skipped when
    ``request.exact``), the fastest bounded and recorded. ``progress`` receives the
    engine's progress; ``builds`` (:class:`~netsim.run.scaled_builds.ScaledBuilds`)
    reuses schedules built for a sweep's other sizes."""
    op, n, options = request.op, request.ranks, request.options
    used: dict[str, Any] = {}       # algorithm -> the machine it ran on (its fabric)
    built: dict[str, Any] = {}      # algorithm -> its schedule, built once for its bound
    kinds: dict[str, Any] = {}      # algorithm -> what its own bound needs (simulate_algorithm)
    spans: dict[str, Any] = {}      # algorithm -> the end of each group's ops (group runs)

    def run(algo) -> Result:
        if algo.name in built:
            algo = Built(algo, built.pop(algo.name))
        return simulate_algorithm(request, algo, size, progress=progress, builds=builds,
                                  used=used, kinds=kinds, spans=spans)

    def bound_of(algo) -> float:
        if getattr(algo, "blocks", None) is not None and \
                ring_sends(op, n, _chunks(algo, size, options)) > KEEP_BUILT_OPS:
            return 0.0      # runs on its blocks, never built in full: simulated, not bounded
        schedule, low = built_bound(request, algo, size, builds=builds)
        if schedule.num_ops <= KEEP_BUILT_OPS:
            built[algo.name] = schedule
        return low

    pruned: dict[str, float] = {}
    best, result, outcomes = fastest(request.candidates, request.pick, n, options, run,
                                     f"{op} algorithm", request.where,
                                     bound=bound_of if request.exact else None, pruned=pruned)
    machine = used.get(best.name, request.topology)
    alpha = request.alpha
    bound, machine_bound = run_bounds(request, machine, size, result, kinds.get(best.name),
                                      alpha=alpha)
    paid = float(result.meta.get("overhead_s", alpha))
    if paid < alpha and result.makespan < bound.seconds:
        # The algorithm set a smaller per-message cost of its own (nccl's step latency
        # replaces alpha; its base latency usually keeps it above alpha's bound): alpha's
        # bound is no bound on a run that did not pay it (alpha = 1 ms: 130 us against
        # 1 ms), that of the cost it paid is.
        bound, machine_bound = run_bounds(request, machine, size, result,
                                          kinds.get(best.name), alpha=paid)
    if request.library is not None:     # the record says whose default ran
        result.meta["record"] = {**result.meta.get("record", {}), "library": request.library}
    made = make_run(op, best.name, request.topology, n, size, result, bound,
                    {a.name: r.makespan for a, r in outcomes} if request.pick else None,
                    machine_bound=machine_bound)
    made.machine = machine
    made.pruned = pruned or None
    if request.groups is not None:
        made.groups = [group_label(request.topology, g) for g in request.groups]
        made.group_times = _group_times(result, spans[best.name])
    if request.faults:
        made.faults, made.rerouted = fault_summary(request.faults), rerouted_flows(result)
    made.model = model_fields(result) or None
    if request.tolerance:           # an approximate time says so in its record
        made.model = {**(made.model or {}), "tolerance": float(request.tolerance)}
    return made


def _group_times(result: Result, ends: list[int]) -> list[float]:
    """Every group's time (s): from 0 to the last of its ops, which end at ``ends``."""
    starts = [0] + list(ends[:-1])
    return [float(np.max(result.op_finish[start:end])) if end > start else 0.0
            for start, end in zip(starts, ends)]
