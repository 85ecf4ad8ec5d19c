"""The registry of scenario job kinds, and the built-in ``traffic`` job.

A scenario is a list of jobs; each job has a ``kind`` whose model (a :class:`Strict`
pydantic model) validates it and whose runner simulates it. Other modules add kinds with
:func:`register_job` (collectives, placement studies ...), so the scenario format grows
without this module knowing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Callable, Literal

from pydantic import Field, model_validator

from ...engine import Result
from ...errors import InputError
from ...schedule import MAX_SENDS
from ...topology import parse_topology
from ...schedule.traffic import PATTERNS, make_pattern
from ..._inputs.schema import Size, Strict, Time, one_of

__all__ = ["JobContext", "JobResult", "register_job", "JOB_KINDS", "FAULT_RUNNERS",
           "TrafficJob"]


#: Endings of files a job may name in ``topology:`` or ``algorithm:``.
_FILE_ENDINGS = (".yaml", ".yml", ".json", ".graphml", ".xml", ".npz", ".parquet")


def _looks_like_file(text: str) -> bool:
    return "/" in text or text.lower().endswith(_FILE_ENDINGS)


@dataclass
class JobContext:
    """What a runner gets besides its job: the scenario's defaults and where it lives.

    ``faults`` are the scenario's and the job's :class:`~netsim.run.faultspec.FaultSpec`
    (header ones first); a runner registered with ``faults=True`` resolves them on its
    topology with :meth:`resolve_faults` and passes them to the engine. ``engine`` is the
    engine's :class:`~netsim.engine.config.EngineConfig` that every job's simulations get
    (None: its defaults).
    """

    topology: str | None
    seed: int
    base_dir: Path
    progress: Callable[[int, float], None] | None = None
    faults: tuple = ()
    model: str = "fluid"        # 'fluid', 'packet' or 'both' (netsim.run.models)
    packet: Any = None          # PacketOptions of the packet model (None: defaults)
    engine: Any = None          # EngineConfig of every simulation (None: its defaults)

    def resolve_faults(self, topology) -> list:
        """The engine faults of ``faults`` on ``topology`` (one-line errors naming them)."""
        from ..faultspec import resolve_faults

        return resolve_faults(self.faults, topology)

    def topology_spec(self, spec: str | None, kind: str) -> str:
        """A job's ``topology``, else the scenario's; a one-line error naming ``kind``
        when neither is set."""
        spec = spec or self.topology
        if spec is None:
            raise InputError(f"{kind} job: no topology (set 'topology' in the job or the "
                             f"scenario)")
        return self.path_spec(spec)

    def path_spec(self, spec: str) -> str:
        """``spec`` with a relative file at its head (``machine.yaml,links=1``, a schedule
        ``ar.xml``) taken relative to the scenario file, as ``flows:`` and ``schedule:``
        are; preset names and generator specs are returned as they are."""
        head, sep, rest = str(spec).partition(",")
        path = Path(head)
        if path.is_absolute() or not _looks_like_file(head):
            return spec
        return str(self.base_dir / path) + sep + rest

    def seed_for(self, seed: int | None) -> int:
        """A job's ``seed``, else the scenario's."""
        return self.seed if seed is None else seed


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
#: Runners that apply ``ctx.faults``, by kind: jobs with faults run through these.
FAULT_RUNNERS: dict[str, JobRunner] = {}


def register_job(kind: str, model: type[Strict], runner: JobRunner, *,
                 faults: bool = False) -> None:
    """Make ``kind: <kind>`` valid in scenario files; ``faults=True`` if ``runner`` applies
    ``ctx.faults`` (then jobs of this kind may have faults)."""
    JOB_KINDS[kind] = (model, runner)
    if faults:
        FAULT_RUNNERS[kind] = runner


class TrafficJob(Strict):
    """A synthetic pattern (``alltoall``, ``shift``, ``permutation``), a flow file, or a
    schedule file (netsim schedule JSON; rank r on the r-th endpoint, relative sizes are
    fractions of ``size``)."""

    kind: Literal["traffic"] = "traffic"
    name: str | None = None
    topology: str | None = None
    pattern: Annotated[str, one_of("traffic pattern", PATTERNS)] = "alltoall"
    size: Size = 1048576.0          # bytes per message
    ranks: int | None = None        # default: every endpoint
    offset: int = 1                 # shift pattern
    seed: int | None = Field(default=None, ge=0)   # permutation (default: the scenario's)
    flows: str | None = None        # a flow file instead of a pattern
    schedule: str | None = None     # a schedule file instead of a pattern
    overhead: Time = 0.0            # per-message software overhead at the sender, s

    @model_validator(mode="after")
    def _one_source(self) -> "TrafficJob":
        given = [k for k in ("flows", "schedule") if getattr(self, k) is not None]
        if len(given) > 1 or (given and "pattern" in self.model_fields_set):
            raise ValueError("give one of 'pattern', 'flows' and 'schedule'")
        if self.size < 0:
            raise ValueError(f"size must be >= 0 bytes, got {self.size!r}")
        if self.ranks is not None and self.ranks < 1:
            raise ValueError(f"ranks must be >= 1, got {self.ranks!r}")
        if self.overhead < 0:
            raise ValueError(f"overhead must be a time >= 0, got {self.overhead!r}")
        return self


def _traffic_record(name: str, result: Result, ranks: int, total_bytes: float,
                    faults=()) -> dict:
    from ..models import model_fields

    record = {"job": name, "topology": result.topology, "ranks": ranks,
              "flows": result.num_flows, "bytes": total_bytes, "time_s": result.makespan,
              "max_link_util": result.max_link_utilization, "events": result.events,
              **model_fields(result)}
    if "engine" in result.meta:             # what the engine ran (json, csv)
        record["engine"] = result.meta["engine"]
    if faults:
        from ..faultspec import fault_summary, rerouted_flows

        record.update(faults=fault_summary(faults), rerouted=rerouted_flows(result))
    return record


def _pattern_sends(pattern: str, ranks: int) -> int:
    return ranks * (ranks - 1) if pattern == "alltoall" else ranks


def run_traffic(job: TrafficJob, ctx: JobContext) -> JobResult:
    if job.flows is not None:
        from ...schedule.flowfile import load_flow_file
        from ..flows import simulate_flows

        flowset = load_flow_file(ctx.base_dir / job.flows)
        faults = ctx.resolve_faults(flowset.topology)
        result = simulate_flows(flowset, overhead=job.overhead, progress=ctx.progress,
                                faults=faults, model=ctx.model, packet=ctx.packet,
                                engine=ctx.engine)
        name = job.name or Path(job.flows).stem
        record = _traffic_record(name, result, flowset.topology.num_endpoints,
                                 flowset.schedule.total_bytes, faults)
        return JobResult(name, "traffic", [record], {name: result},
                         {name: flowset.topology})
    topology = parse_topology(ctx.topology_spec(job.topology, "traffic"))
    faults = ctx.resolve_faults(topology)
    if job.schedule is not None:
        from ...schedule import load_schedule

        schedule = load_schedule(ctx.base_dir / job.schedule, message_size=job.size)
        ranks, name = schedule.num_ranks, job.name or Path(job.schedule).stem
    else:
        ranks = job.ranks or topology.num_endpoints
        topology.first_endpoints(ranks)         # the ranks fit: refuse before building
        sends = _pattern_sends(job.pattern, ranks)
        from ...budget import require_sends

        # memory is the gate; MAX_SENDS a cap on typos when --max-memory allows anything
        require_sends(sends, topology, f"traffic job: pattern {job.pattern!r} on {ranks} ranks",
                      advice="fewer ranks", budget=getattr(ctx.engine, "memory_budget", None))
        if sends > MAX_SENDS:
            raise InputError(f"traffic job: pattern {job.pattern!r} on {ranks} ranks has "
                             f"{sends:.3g} sends (more than the limit of {MAX_SENDS}): use "
                             f"fewer ranks")
        options = {"offset": job.offset % ranks} if job.pattern == "shift" else {}
        if job.pattern == "permutation":
            options = {"seed": ctx.seed_for(job.seed)}
        schedule = make_pattern(job.pattern, ranks, job.size, **options)
        name = job.name or f"{job.pattern}"
    from ..models import simulate_model

    result = simulate_model(topology, schedule, overhead=job.overhead, progress=ctx.progress,
                            faults=faults, model=ctx.model, packet=ctx.packet,
                            config=ctx.engine)
    return JobResult(name, "traffic", [_traffic_record(name, result, ranks,
                                                       schedule.total_bytes, faults)],
                     {name: result}, {name: topology})


register_job("traffic", TrafficJob, run_traffic, faults=True)
