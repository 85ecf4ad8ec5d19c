"""Scenario files: a machine, a list of jobs, a seed; validated, then run.

.. code-block:: yaml

    name: alltoall-on-a-mesh
    topology: mesh:4x4,bw=50GB/s,lat=711ns
    seed: 0
    jobs:
      - kind: traffic
        pattern: alltoall
        size: 1MiB

Unknown keys are errors; every error names the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError, unknown_name
from .jobs import JOB_KINDS, JobContext, JobResult, register_job
from .schema import Strict, validate

__all__ = ["Scenario", "ScenarioResult", "load_scenario", "run_scenario", "register_job",
           "default_scenario_path", "JobContext", "JobResult"]


class _ScenarioModel(Strict):
    name: str
    description: str = ""
    topology: str | None = None
    seed: int = 0
    jobs: list[dict[str, Any]]


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

    for module in ("netsim.algorithms.jobs", "netsim.placement.jobs", "netsim.faults.jobs"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as err:
            if err.name is None or not module.startswith(err.name):
                raise


def scenario_from_dict(doc: Any, path: Path) -> Scenario:
    _import_job_kinds()
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected a mapping with 'name' and 'jobs'")
    header = validate(_ScenarioModel, doc, path)
    jobs = []
    for n, job in enumerate(header.jobs):
        if not isinstance(job, dict):
            raise InputError(f"{path}: jobs[{n}]: expected a mapping, got {job!r}")
        kind = job.get("kind", "traffic")
        if kind not in JOB_KINDS:
            raise InputError(f"{path}: jobs[{n}].kind: "
                             f"{unknown_name('job kind', kind, JOB_KINDS)}")
        model, _ = JOB_KINDS[kind]
        jobs.append(validate(model, job, path, prefix=f"jobs.{n}"))
    return Scenario(header.name, header.description, header.topology, header.seed, jobs,
                    path, dict(doc))


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario YAML file."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror}") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or "invalid YAML"
        raise InputError(f"{path}: {where}{problem}") from None
    return scenario_from_dict(doc, path)


def run_scenario(scenario: Scenario, progress=None) -> ScenarioResult:
    """Run every job of ``scenario`` in order."""
    ctx = JobContext(scenario.topology, scenario.seed, scenario.path.parent, progress)
    results = []
    for job in scenario.jobs:
        _, runner = JOB_KINDS[job.kind]
        results.append(runner(job, ctx))
    return ScenarioResult(scenario, results)


def default_scenario_path() -> Path:
    """``scenarios/default.yaml`` of the source tree, or the copy shipped in the package."""
    from ..catalogue_paths import data_dir

    return data_dir("scenarios") / "default.yaml"
