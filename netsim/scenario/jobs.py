"""The registry of scenario job kinds, and the built-in ``traffic`` job.

A scenario is a list of jobs; each job has a ``kind`` whose model (a :class:`Strict`
pydantic model) validates it and whose runner simulates it. Other modules add kinds with
:func:`register_job` (collectives, placement studies ...), so the scenario format grows
without this module knowing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from ..engine import Result, simulate
from ..topology import parse_topology
from ..traffic import make_pattern
from .schema import Size, Strict, Time

__all__ = ["JobContext", "JobResult", "register_job", "JOB_KINDS", "TrafficJob"]


@dataclass
class JobContext:
    """What a runner gets besides its job: the scenario's defaults and where it lives."""

    topology: str | None
    seed: int
    base_dir: Path
    progress: Callable[[int, float], None] | None = None


@dataclass
class JobResult:
    """Rows for the report table and the engine results behind them (for plots)."""

    name: str
    kind: str
    records: list[dict[str, Any]]
    results: dict[str, Result] = field(default_factory=dict)
    topologies: dict[str, Any] = field(default_factory=dict)


JobRunner = Callable[[Any, JobContext], JobResult]
JOB_KINDS: dict[str, tuple[type[Strict], JobRunner]] = {}


def register_job(kind: str, model: type[Strict], runner: JobRunner) -> None:
    """Make ``kind: <kind>`` valid in scenario files."""
    JOB_KINDS[kind] = (model, runner)


class TrafficJob(Strict):
    """A synthetic pattern (``alltoall``, ``shift``, ``permutation``) or a flow file."""

    kind: Literal["traffic"] = "traffic"
    name: str | None = None
    topology: str | None = None
    pattern: str = "alltoall"
    size: Size = 1048576.0          # bytes per message
    ranks: int | None = None        # default: every endpoint
    offset: int = 1                 # shift pattern
    seed: int | None = None         # permutation pattern (default: the scenario's seed)
    flows: str | None = None        # a flow file instead of a pattern
    overhead: Time = 0.0            # per-message software overhead at the sender, s


def _traffic_record(name: str, result: Result, ranks: int, total_bytes: float) -> dict:
    return {"job": name, "topology": result.topology, "ranks": ranks, "flows": result.num_flows,
            "bytes": total_bytes, "time_s": result.makespan,
            "max_link_util": result.max_link_utilization, "events": result.events}


def run_traffic(job: TrafficJob, ctx: JobContext) -> JobResult:
    if job.flows is not None:
        from ..flowfile import load_flow_file, simulate_flows

        flowset = load_flow_file(ctx.base_dir / job.flows)
        result = simulate_flows(flowset, overhead=job.overhead, progress=ctx.progress)
        name = job.name or Path(job.flows).stem
        record = _traffic_record(name, result, flowset.topology.num_endpoints,
                                 flowset.schedule.total_bytes)
        return JobResult(name, "traffic", [record], {name: result},
                         {name: flowset.topology})
    spec = job.topology or ctx.topology
    if spec is None:
        from ..errors import InputError
        raise InputError("traffic job: no topology (set 'topology' in the job or the scenario)")
    topology = parse_topology(spec)
    ranks = job.ranks or topology.num_endpoints
    options = {"offset": job.offset} if job.pattern == "shift" else {}
    if job.pattern == "permutation":
        options = {"seed": ctx.seed if job.seed is None else job.seed}
    schedule = make_pattern(job.pattern, ranks, job.size, **options)
    result = simulate(topology, schedule, overhead=job.overhead, progress=ctx.progress)
    name = job.name or f"{job.pattern}"
    return JobResult(name, "traffic", [_traffic_record(name, result, ranks,
                                                       schedule.total_bytes)],
                     {name: result}, {name: topology})


register_job("traffic", TrafficJob, run_traffic)
