"""One collective on a whole machine (or on given nodes): the run pipeline's core.

:func:`run_on_machine` takes a resolved request (a parsed topology, an algorithm name or
objects, no library default, no groups) and runs it in order: ranks' nodes -> options
and calibrated defaults -> candidates -> build, place and simulate each
(:func:`~netsim.run.placed.simulate_algorithm`; the fastest kept, with exact pruning by
lower bounds) -> bounds -> the record (:func:`~netsim.run.record.make_run`).
:func:`netsim.run.collective.run_collective` is the entry point that resolves requests.

>>> from netsim.topology import parse_topology
>>> run = run_on_machine("allgather", parse_topology("ring:4,bw=1GB/s"), "ring", 4e6,
...                      alpha=0.0)
>>> round(run.time_s * 1e3, 6)          # (p-1)/p S / B
3.0
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ..algorithms.bounds import Bound
from ..engine import Result
from ..errors import InputError
from ..units import parse_size
from .checks import check_order, machine_costs, rank_nodes, ring_sends
from .faultspec import fault_summary, resolve_faults, rerouted_flows
from .models import model_fields
from .placed import KEEP_BUILT_OPS, Built, built_bound, run_bounds, simulate_algorithm
from .record import CollectiveRun, make_run
from .search import default_options, fastest, resolve_algorithms

__all__ = ["run_on_machine"]


def run_on_machine(op: str, topo, algorithm, size, *, ranks: int | None = None,
                   placement: Sequence[int | str] | None = None, options=None,
                   alpha: float | None = None, router=None, progress=None,
                   faults: Sequence = (), model: str = "fluid", packet=None,
                   tolerance: float = 0.0, prune: bool = True,
                   builds=None) -> CollectiveRun:
    """Simulate collective ``op`` of ``size`` bytes with ``algorithm`` (a registered name,
    ``'auto'``, an algorithm object or a list of them) on ``topo`` (a Topology), rank r on
    ``placement[r]`` (default: the first ``ranks`` endpoints). Arguments and record as
    :func:`netsim.run.collective.run_collective`, which resolves ``'default'``, ``'synth'``
    and groups before calling this."""
    size = parse_size(size, "collective size")
    if size < 0:
        raise InputError(f"collective size must be >= 0 bytes, got {size!r}")
    nodes = rank_nodes(topo, ranks, placement)
    options = replace(options if options is not None else default_options(),
                      topology=topo, placement=nodes)
    alpha, options = machine_costs(topo, alpha, options)
    options.check(nodes.size)
    check_order(options.order)
    candidates, pick = resolve_algorithms(op, algorithm)
    faults = resolve_faults(faults, topo)

    used: dict[str, Any] = {}       # algorithm -> the machine it ran on (its fabric)
    if router is None:              # one router for every candidate: its caches stay warm
        from ..routing import default_router

        router = default_router(topo)
    built: dict[str, Any] = {}      # algorithm -> its schedule, built once for its bound
    kinds: dict[str, Any] = {}      # algorithm -> what its own bound needs (simulate_algorithm)

    def run(algo) -> Result:
        if algo.name in built:
            algo = Built(algo, built.pop(algo.name))
        return simulate_algorithm(algo, topo, size, nodes, options, alpha, router, progress, faults,
                                  used, model, packet, tolerance, builds, kinds=kinds)

    def bound_of(algo) -> float:
        if getattr(algo, "blocks", None) is not None and \
                ring_sends(op, nodes.size, int(options.chunks or 1)) > KEEP_BUILT_OPS:
            return 0.0      # runs on its blocks, never built in full: simulated, not bounded
        schedule, low = built_bound(algo, topo, size, nodes, options, alpha, router,
                                    builds)
        if schedule.num_ops <= KEEP_BUILT_OPS:
            built[algo.name] = schedule
        return low

    # Exact pruning needs exact times from the fluid engine on the healthy machine.
    exact = prune and model == "fluid" and not faults and not tolerance
    pruned: dict[str, float] = {}
    best, result, outcomes = fastest(candidates, pick, nodes.size, options, run,
                                     f"{op} algorithm", f"{nodes.size} ranks on {topo.name!r}",
                                     bound=bound_of if exact else None, pruned=pruned)
    def bounds_at(cost: float) -> tuple[Bound, Bound]:
        return run_bounds(op, used.get(best.name, topo), size, nodes, result,
                          kinds.get(best.name), alpha=cost, gamma=options.gamma,
                          root=options.root, router=router)

    bound, machine_bound = bounds_at(float(alpha))
    paid = float(result.meta.get("overhead_s", alpha))
    if paid < alpha and result.makespan < bound.seconds:
        # The algorithm set a smaller per-message cost of its own (nccl's step latency
        # replaces alpha; its base latency usually keeps it above alpha's bound): alpha's
        # bound is no bound on a run that did not pay it (alpha = 1 ms: 130 us against
        # 1 ms), that of the cost it paid is.
        bound, machine_bound = bounds_at(paid)
    made = make_run(op, best.name, topo, nodes.size, size, result, bound,
                    {a.name: r.makespan for a, r in outcomes} if pick else None,
                    machine_bound=machine_bound)
    made.machine = used.get(best.name, topo)
    made.pruned = pruned or None
    if faults:
        made.faults, made.rerouted = fault_summary(faults), rerouted_flows(result)
    made.model = model_fields(result) or None
    if tolerance:                   # an approximate time says so in its record
        made.model = {**(made.model or {}), "tolerance": float(tolerance)}
    return made
