"""Scenario files: a machine, a list of jobs, a seed; validated, then run.

.. code-block:: yaml

    name: alltoall-on-a-mesh
    topology: mesh:4x4,bw=50GB/s,lat=711ns
    seed: 0
    faults: [{link: "1_1<->1_2", at: 20us}]     # optional: every job (see .faults)
    model: fluid            # or packet, or both (traffic and collective jobs; run.models)
    jobs:
      - kind: traffic
        pattern: alltoall
        size: 1MiB
        faults: [{node: "3_3"}]                 # optional: this job only

Unknown keys are errors; every error names the file, the field and its line.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ...errors import InputError, NetsimError, unknown_name
from .faults import fault_specs
from .jobs import FAULT_RUNNERS, JOB_KINDS, JobContext, JobResult, register_job
from ..._inputs.schema import Strict, load_yaml, validate, yaml_line
from ..._inputs.yamlio import read_text

__all__ = ["Scenario", "ScenarioResult", "load_scenario", "run_scenario", "register_job",
           "default_scenario_path", "JobContext", "JobResult"]


class _ScenarioModel(Strict):
    name: str
    description: str = ""
    topology: str | None = None
    seed: int = Field(default=0, ge=0)
    faults: Any = None          # validated by .faults.fault_specs
    model: Literal["fluid", "packet", "both"] = "fluid"   # network model (run.models)
    packet: dict[str, Any] | None = None  # packet model options (packet_options_from)
    jobs: list[Any]
    version: int | None = None  # the file format's version (see check_version)
    sweep: Any = None           # a grid of variants: netsim.run.sweep (``netsim sweep``)


@dataclass
class Scenario:
    """A validated scenario: its header and its jobs (each a pydantic model of its kind)."""

    name: str
    description: str
    topology: str | None
    seed: int
    jobs: list[Any]
    path: Path
    raw: dict[str, Any] = field(default_factory=dict)
    faults: tuple = ()                 # FaultSpecs of the header (every job)
    job_faults: list[tuple] = field(default_factory=list)   # FaultSpecs of each job
    job_lines: list[int | None] = field(default_factory=list)   # line of each job, for errors
    model: str = "fluid"               # network model of traffic and collective jobs
    packet: Any = None                 # its PacketOptions (None: the machine's defaults)


@dataclass
class ScenarioResult:
    scenario: Scenario
    jobs: list[JobResult]

    @property
    def records(self) -> list[dict[str, Any]]:
        return [row for job in self.jobs for row in job.records]


def _import_job_kinds() -> None:
    """Modules that register job kinds, imported for their side effect (if present)."""
    import importlib

    for module in ("netsim.run.scenarios.collective_jobs",
                   "netsim.run.scenarios.placement_jobs", "netsim.run.traces"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name is None or not module.startswith(err.name):
                raise


#: Job kinds that run on the model the scenario's ``model:`` names (the others are fluid).
_MODEL_KINDS = ("traffic", "collective")


def scenario_from_dict(doc: Any, path: Path, root=None) -> Scenario:
    """Validate a parsed scenario; ``root`` (the composed YAML) adds line numbers."""
    _import_job_kinds()

    def line(*loc) -> str:
        found = yaml_line(root, loc) if root is not None else None
        return f" (line {found})" if found else ""

    if doc is None:
        raise InputError(f"{path}: the file is empty: expected a mapping with 'name' and "
                         f"'jobs'")
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping with 'name' and 'jobs', got a "
                         f"{type(doc).__name__}{line()}")
    header = validate(_ScenarioModel, doc, path, root=root)
    check_version(header.version, path, "scenario", line("version"))
    if header.sweep is not None:
        raise InputError(f"{path}: the scenario declares a 'sweep:' grid: run it with "
                         f"'netsim sweep {path} --out DIR'{line('sweep')}")
    faults = fault_specs(header.faults, str(path), "faults", root) \
        if header.faults is not None else ()
    if not header.jobs:
        raise InputError(f"{path}: jobs: the scenario has no jobs{line('jobs')}")
    jobs, job_faults = [], []
    for n, job in enumerate(header.jobs):
        if not isinstance(job, dict):
            raise InputError(f"{path}: jobs[{n}]: expected a mapping, got {job!r}"
                             f"{line('jobs', n)}")
        kind = job.get("kind", "traffic")
        if not isinstance(kind, str) or kind not in JOB_KINDS:
            raise InputError(f"{path}: jobs[{n}].kind: "
                             f"{unknown_name('job kind', kind, JOB_KINDS)}"
                             f"{line('jobs', n, 'kind')}")
        model, _ = JOB_KINDS[kind]
        own = {k: v for k, v in job.items() if k != "faults"}
        jobs.append(validate(model, own, path, prefix=f"jobs.{n}", root=root))
        job_faults.append(fault_specs(job["faults"], str(path), f"jobs.{n}.faults", root)
                          if "faults" in job else ())
        if (faults or job_faults[-1]) and kind not in FAULT_RUNNERS:
            raise InputError(f"{path}: jobs[{n}]: job kind {kind!r} does not support faults"
                             f"{line('jobs', n)}")
    lines = [yaml_line(root, ("jobs", n)) if root is not None else None
             for n in range(len(jobs))]
    for n, job in enumerate(jobs):
        if header.model != "fluid" and job.kind not in _MODEL_KINDS:
            raise InputError(f"{path}: jobs[{n}]: job kind {job.kind!r} runs on the fluid "
                             f"model only, not model {header.model!r}{line('jobs', n)}")
    packet = None
    if header.packet is not None:
        from ...packet.options import packet_options_from

        if header.model == "fluid":
            raise InputError(f"{path}: packet: options of the packet model, but model is "
                             f"'fluid': add model: packet or model: both{line('packet')}")
        packet = packet_options_from(header.packet, f"{path}: packet")
    return Scenario(header.name, header.description, header.topology, header.seed, jobs,
                    path, dict(doc), faults, job_faults, lines, model=header.model,
                    packet=packet)


#: The version of the scenario file format this netsim writes and reads; files without a
#: ``version:`` key are read as this one.
SCENARIO_VERSION = 1


def check_version(version: int | None, path, what: str, where: str = "") -> None:
    """Refuse a file written for a newer format than this netsim reads (one line)."""
    if version is not None and version > SCENARIO_VERSION:
        raise InputError(f"{path}: version: {what} file format {version} is newer than this "
                         f"netsim reads (up to {SCENARIO_VERSION}): upgrade netsim{where}")
    if version is not None and version < 1:
        raise InputError(f"{path}: version: must be >= 1, got {version}{where}")


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    path = Path(path)
    text = read_text(path, "scenario")
    doc, root = load_yaml(text, str(path))
    return scenario_from_dict(doc, path, root)


def run_scenario(scenario: Scenario, progress=None, faults=(), *,
                 engine=None) -> ScenarioResult:
    """Run every job of ``scenario`` in order; ``faults`` (FaultSpecs, e.g. from the command
    line) apply to every job, like the scenario's own ``faults:``; ``engine`` (the engine's
    :class:`~netsim.engine.config.EngineConfig`, None: its defaults) configures every
    job's simulations."""
    faults = tuple(faults) + tuple(scenario.faults)
    job_faults = scenario.job_faults or [()] * len(scenario.jobs)
    for n, (job, own) in enumerate(zip(scenario.jobs, job_faults)):
        if (faults or own) and job.kind not in FAULT_RUNNERS:
            raise InputError(f"{scenario.path}: jobs[{n}]: job kind {job.kind!r} does not "
                             f"support faults")
    ctx = JobContext(scenario.topology, scenario.seed, scenario.path.parent, progress,
                     model=scenario.model, packet=scenario.packet, engine=engine)
    results = []
    for n, (job, own) in enumerate(zip(scenario.jobs, job_faults)):
        _, runner = JOB_KINDS[job.kind]
        if faults or own:
            runner = FAULT_RUNNERS[job.kind]
        try:
            results.append(runner(job, replace(ctx, faults=faults + tuple(own))))
        except NetsimError as err:
            line = scenario.job_lines[n] if n < len(scenario.job_lines) else None
            at = f" at line {line}" if line else ""
            if f"jobs[{n}]" in str(err):
                raise
            if str(err).startswith((str(scenario.path), "--")):
                raise type(err)(f"{err} (running jobs[{n}]{at})") from None
            raise type(err)(f"{scenario.path}: jobs[{n}]: {err} (job{at})") from None
    return ScenarioResult(scenario, results)


def default_scenario_path() -> Path:
    """``scenarios/default.yaml`` of the source tree, or the copy shipped in the package."""
    from ...topology.catalogue_paths import data_dir

    return data_dir("scenarios") / "default.yaml"
