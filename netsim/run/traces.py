"""Run a workload given as Chakra execution traces (one per rank) on a machine.

:func:`run_workload` reads ``trace.%d.et`` (:mod:`netsim.interop.chakra`), expands each
collective node with netsim's algorithms over the ranks of its process group (``algorithm``
a name, a schedule file, ``'default'`` (what the machine's library runs, the default)
or ``'auto'``: the algorithm that is fastest for that collective
alone on those ranks), simulates everything together and reports per rank: compute time
(the time at least one of its computes runs), exposed communication (the rest of the
rank's time: waiting for data) and total time (when its last node finishes).

Scenario job kind ``workload``:

.. code-block:: yaml

    jobs:
      - kind: workload
        trace: traces/step.%d.et      # relative to the scenario file
        algorithm: auto
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, Sequence

import numpy as np
from pydantic import Field

from ..engine import Result, simulate
from ..errors import InputError
from .scenarios.jobs import JobContext, JobResult, register_job
from .._inputs.schema import Strict, Time

__all__ = ["WorkloadRun", "run_workload", "WorkloadJob", "run_workload_job", "per_op_algorithms",
           "collective_schedule", "workload_scenario"]


@dataclass(eq=False)
class WorkloadRun:
    """A simulated workload: per-rank rows, the makespan (s) and the engine result."""

    workload: str
    topology: str
    ranks: int
    time_s: float
    collectives: int
    algorithms: dict[str, str]          # '<op> <size> on <n> ranks' -> algorithm used
    rows: list[dict[str, Any]]
    result: Result = field(repr=False)

    def records(self) -> list[dict[str, Any]]:
        return list(self.rows)


def per_op_algorithms(algorithm) -> dict[str, Any]:
    """``{op: algorithm}`` from ``'ring'`` (every op; key ``'*'``), ``'allreduce=ring,
    alltoall=direct'`` (others: auto) or a mapping.

    >>> per_op_algorithms("allreduce=ring, alltoall=direct")
    {'allreduce': 'ring', 'alltoall': 'direct'}
    """
    from ..algorithms.registry import OPS
    from ..errors import unknown_name

    if isinstance(algorithm, dict):
        mapping = dict(algorithm)
    elif isinstance(algorithm, str) and "=" in algorithm:
        mapping = {}
        for part in algorithm.split(","):
            op, sep, name = (x.strip() for x in part.partition("="))
            if not sep or not op or not name:
                raise InputError(f"algorithm {algorithm!r}: expected OP=NAME[,OP=NAME...] "
                                 f"(e.g. allreduce=ring,alltoall=direct)")
            mapping[op] = name
    else:
        return {"*": algorithm}
    for op in mapping:
        if op not in OPS:
            raise unknown_name("collective", op, OPS)
    return mapping


def _pick(op: str, topo, algorithm, nodes: np.ndarray, size: float, alpha, options, cache,
          *, engine=None):
    """The algorithm object for one collective (``auto``: simulate each with the engine's
    configuration ``engine``, keep the fastest; ``default``: what the machine's own library
    runs, :mod:`netsim.run.library`)."""
    from .collective import run_collective
    from .search import resolve_algorithms
    from .library import resolve_default

    algorithm = resolve_default(op, topo, algorithm).algorithm
    key = (op, tuple(nodes.tolist()), size)
    if key not in cache:
        candidates, pick = resolve_algorithms(op, algorithm)
        if pick or len(candidates) > 1:
            run = run_collective(op, topo, candidates, size, placement=nodes, alpha=alpha,
                                 options=options, engine=engine)
            chosen = next(a for a in candidates if a.name == run.algorithm)
        else:
            chosen = candidates[0]
        cache[key] = chosen
    return cache[key]


def run_workload(pattern: str, topology, *, algorithm="default", ranks: int | None = None,
                 placement: Sequence[int | str] | None = None, alpha: float | None = None,
                 options=None, router=None, progress=None, faults: Sequence = (),
                 comm_groups=None, engine=None) -> WorkloadRun:
    """Simulate the Chakra traces ``pattern`` (``'trace.%d.et'``) on ``topology``.

    ``comm_groups`` is ASTRA-sim's communicator-group JSON file (or its mapping) giving the
    ranks of each ``pg_name``. ``algorithm`` is one algorithm for every collective (a name, a schedule file or
    ``'auto'``) or one per op (``'allreduce=ring,alltoall=direct'``; unlisted ops: auto).

    Rank r runs on ``placement[r]`` (default: the first endpoints). ``alpha`` (s) is the
    per-message overhead, ``options`` an ``AlgoOptions`` for the collectives; without them
    the machine's calibration applies, as in :func:`~netsim.run.run_collective`.
    ``engine`` is the engine's :class:`~netsim.engine.config.EngineConfig` (None: its
    defaults). Every row carries what the engine ran (``engine``).
    """
    from ..algorithms.options import AlgoOptions
    from ..interop.chakra import read_workload, workload_schedule
    from ..topology import parse_topology
    from .checks import rank_nodes
    from .request import machine_costs
    from .faultspec import resolve_faults

    topo = parse_topology(topology) if isinstance(topology, str) else topology
    traces = read_workload(pattern, ranks)
    n = len(traces)
    nodes = rank_nodes(topo, n, placement)
    alpha, options = machine_costs(topo, alpha, options if options is not None
                                   else AlgoOptions())
    cache: dict = {}
    used: dict[str, str] = {}
    per_op = per_op_algorithms(algorithm)
    fabrics: set = set()            # the fabric each collective runs on (fabric: auto presets)

    def collective(op: str, members, size: float, name: str):
        where = nodes[np.asarray(members)]
        opts = replace(options, topology=topo, placement=where)
        algo = _pick(op, topo, per_op.get(op, per_op.get("*", "default")), where, size, alpha,
                     options, cache, engine=engine)
        if not algo.applies(len(members), opts):
            raise InputError(f"{pattern}: collective {name or op}: {op} algorithm "
                             f"{algo.name!r} does not apply to {len(members)} ranks")
        used[f"{op} {size:g}B on {len(members)} ranks"] = algo.name
        built = algo.build(len(members), size, opts)
        fabrics.add(built.meta.get("fabric"))
        # As run_collective: an algorithm may put more bytes on the wire per payload byte
        # (nccl: its protocol's lines) and set its own per-message cost (kept per op below).
        return built.scaled(built.meta.get("wire_factor", 1.0))

    names = [pattern.replace("%d", str(r)) for r in range(n)]
    if comm_groups is not None and not isinstance(comm_groups, dict):
        from ..interop.chakra import read_comm_groups

        comm_groups = read_comm_groups(comm_groups, n)
    schedule = workload_schedule(traces, collective, names=names, comm_groups=comm_groups)
    extra = list(schedule.extra_nodes)
    placed = np.concatenate([nodes, np.asarray(extra, np.int64)]) if extra else nodes
    machine = _one_fabric(topo, fabrics, pattern)
    overhead = alpha
    if "op_overhead" in schedule.meta:          # per op: those collectives' own costs
        overhead = np.full(schedule.num_ops, float(alpha))
        own = schedule.meta["op_overhead"]
        overhead[np.fromiter(own.keys(), np.int64)] = np.fromiter(own.values(), float)
    result = simulate(machine, schedule, placed, router=router, overhead=overhead,
                      progress=progress, faults=resolve_faults(faults, topo), config=engine)
    rows = []
    for r in range(n):
        compute = _busy(result, schedule.meta["compute_ops"][r])
        ends = schedule.meta["rank_ends"][r]
        total = float(result.op_finish[ends].max()) if len(ends) else 0.0
        rows.append({"rank": r, "node": topo.node_names[nodes[r]], "compute_s": compute,
                     "exposed_comm_s": max(total - compute, 0.0), "total_s": total,
                     **({"engine": result.meta["engine"]} if "engine" in result.meta else {})})
    return WorkloadRun(workload=pattern, topology=topo.name, ranks=n,
                       time_s=float(result.makespan), collectives=schedule.meta["collectives"],
                       algorithms=used, rows=rows, result=result)


def _one_fabric(topo, fabrics: set, pattern: str):
    """The machine every collective of the workload runs on: the fabric they ask for (a
    preset with ``fabric: auto`` runs tt_ring on its ring fabric), refused when they differ:
    one simulation has one set of link rates."""
    from ..topology.calibration import on_fabric

    asked = {f for f in fabrics if f is not None}
    if len(asked) > 1:
        raise InputError(f"{pattern}: the collectives ask for different fabrics "
                         f"({', '.join(sorted(asked))}) of {topo.name!r}; one workload runs "
                         f"on one: give one algorithm family, or fabric=... in the spec")
    return on_fabric(topo, asked.pop()) if asked else topo


def _busy(result: Result, ops: Sequence[int]) -> float:
    """Seconds during which at least one of ``ops`` runs (union of their intervals)."""
    spans = sorted((float(result.op_start[i]), float(result.op_finish[i])) for i in ops)
    total, end = 0.0, -np.inf
    for start, finish in spans:
        if finish > end:
            total += finish - max(start, end)
            end = finish
    return total


def collective_schedule(op: str, topology, algorithm, size, *, ranks: int | None = None,
                        options=None, alpha: float | None = None, engine=None):
    """The schedule ``run_collective`` would simulate (``auto``: of the fastest algorithm,
    simulated with the engine's configuration ``engine``), for files other tools read
    (``netsim export``)."""
    from ..algorithms.options import AlgoOptions
    from ..topology import parse_topology
    from ..units import parse_size
    from .checks import rank_nodes

    topo = parse_topology(topology) if isinstance(topology, str) else topology
    size = parse_size(size, "collective size")
    nodes = rank_nodes(topo, ranks, None)
    options = options if options is not None else AlgoOptions()
    algo = _pick(op, topo, algorithm, nodes, size, alpha, options, {}, engine=engine)
    opts = replace(options, topology=topo, placement=nodes)
    if not algo.applies(nodes.size, opts):
        raise InputError(f"{op} algorithm {algo.name!r} does not apply to {nodes.size} ranks "
                         f"on {topo.name!r}")
    schedule = algo.build(nodes.size, size, algo.resolve(size, opts))
    meta = dict(schedule.meta)
    meta.update(op=op, algorithm=algo.name, size=float(size), ranks=int(nodes.size))
    return replace(schedule, meta=meta)


class WorkloadJob(Strict):
    """A workload of Chakra traces (``trace``, with %d for the rank) on the machine."""

    kind: Literal["workload"] = "workload"
    name: str | None = None
    topology: str | None = None         # default: the scenario's topology
    trace: str                          # 'traces/step.%d.et', relative to the scenario
    algorithm: str = "default"
    ranks: int | None = Field(default=None, ge=1)
    alpha: Time | None = None           # s per message (default: the machine's calibration)
    comm_groups: str | None = None      # ASTRA-sim communicator-group JSON, relative


def run_workload_job(job: WorkloadJob, ctx: JobContext) -> JobResult:
    """Simulate the job's traces; one record per rank."""
    from ..topology import parse_topology

    spec = job.topology or ctx.topology
    if spec is None:
        raise InputError("workload job: no topology (set 'topology' in the job or the "
                         "scenario)")
    topology = parse_topology(spec)
    pattern = job.trace if Path(job.trace).is_absolute() else str(ctx.base_dir / job.trace)
    algorithm = job.algorithm
    if (ctx.base_dir / algorithm).is_file():      # a schedule file next to the scenario
        algorithm = str(ctx.base_dir / algorithm)
    groups = job.comm_groups
    if groups is not None and not Path(groups).is_absolute():
        groups = str(ctx.base_dir / groups)
    run = run_workload(pattern, topology, algorithm=algorithm, ranks=job.ranks,
                       alpha=job.alpha, progress=ctx.progress, faults=ctx.faults,
                       comm_groups=groups, engine=ctx.engine)
    name = job.name or Path(job.trace).name
    return JobResult(name, "workload", [{"job": name, **row} for row in run.rows],
                     {name: run.result}, {name: topology})


register_job("workload", WorkloadJob, run_workload_job, faults=True)


def workload_scenario(pattern: str, topology: str, *, algorithm: str = "default",
                      comm_groups: str | None = None):
    """A one-job scenario running the traces ``pattern`` on ``topology`` (``netsim run
    --workload``), so that tables, heatmaps and reports work as for any scenario."""
    from .scenarios.scenario import scenario_from_dict

    doc = {"name": "workload", "description": f"Chakra traces {pattern}",
           "topology": topology,
           "jobs": [{"kind": "workload", "name": Path(pattern).name, "trace": pattern,
                     "algorithm": algorithm,
                     **({"comm_groups": comm_groups} if comm_groups else {})}]}
    return scenario_from_dict(doc, Path("--workload"))
