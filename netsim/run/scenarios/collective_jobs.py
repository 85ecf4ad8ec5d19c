"""Scenario job kind ``collective``: run a collective (one size or a sweep) on the machine.

.. code-block:: yaml

    jobs:
      - kind: collective
        name: ring-allreduce
        op: allreduce
        algorithm: ring          # default: auto (the fastest that applies)
        sizes: 1MiB:64MiB        # or size: 64MiB, or sizes: [1MiB, 8MiB]
        ranks: 16                # default: every endpoint
        chunks: 4
        alpha: 2us               # per-message overhead at the sender
        gamma: 100GB/s           # reduction rate at a rank
        order: snake             # default: auto (the machine's physical ring/line/tree)
        # axis: 1                # every line along grid axis 1 at once (per-line times)
        # nodes: [0_0, 0_1, 1_1, 1_0]   # or on these endpoints, in this order

Each size gives one record, the nccl-tests-like row of :meth:`CollectiveRun.record` with
the job's name in front; the engine results are kept for plots, keyed ``'<name> <size>'``.
The scenario loader imports this module for its side effect of registering the kind.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from .jobs import JobContext, JobResult, register_job
from ..._inputs.schema import Rate, Size, Strict, Time, one_of
from ...schedule.ops import OPS

__all__ = ["CollectiveJob", "run_collective_job"]


class CollectiveJob(Strict):
    """A collective run: ``op`` with ``algorithm`` over ``size`` or ``sizes`` (bytes)."""

    kind: Literal["collective"] = "collective"
    name: str | None = None
    topology: str | None = None         # default: the scenario's topology
    op: Annotated[str, one_of("collective", OPS)]
    algorithm: str = "default"         # the machine's library (netsim.run.library)
    size: Size | None = None            # bytes, nccl-tests meaning
    sizes: str | list[Size] | None = None   # 'START:STOP[:FACTOR]' (doubling) or a list
    ranks: int | None = Field(default=None, ge=1)
    chunks: int | None = Field(default=None, ge=1)   # default: the algorithm's own
    alpha: Time | None = None           # s per message (default: the machine's calibration)
    gamma: Rate | None = None           # bytes/s of reduction at a rank
    order: str = "auto"
    root: int = Field(default=0, ge=0)
    axis: int | None = Field(default=None, ge=0)   # every line along this grid axis at once
    nodes: str | list[str] | None = None            # 'A,B,...', '@FILE' or a list of names

    @field_validator("algorithm")
    @classmethod
    def _known_algorithm(cls, name: str, info: ValidationInfo) -> str:
        from ...interop.schedule_files import is_schedule_file
        from ..collective import resolve_algorithms

        # a schedule file is read when the job runs, relative to the scenario file
        if name not in ("auto", "default") and "op" in info.data \
                and not is_schedule_file(name):
            resolve_algorithms(info.data["op"], name)   # raises a did-you-mean InputError
        return name

    @field_validator("sizes")
    @classmethod
    def _readable_sweep(cls, sizes):
        from ..collective import sweep_sizes

        if isinstance(sizes, str):
            sweep_sizes(sizes)
        return sizes

    @model_validator(mode="after")
    def _one_size(self) -> "CollectiveJob":
        if (self.size is None) == (self.sizes is None):
            raise ValueError("give exactly one of 'size' and 'sizes'")
        if sum(x is not None for x in (self.ranks, self.axis, self.nodes)) > 1:
            raise ValueError("give at most one of 'ranks', 'axis' and 'nodes'")
        return self


def run_collective_job(job: CollectiveJob, ctx: JobContext) -> JobResult:
    """Simulate every size of ``job``; one record per size."""
    from ..collective import run_sweep
    from ...topology import parse_topology
    from ...units import format_size
    from ...algorithms.options import AlgoOptions

    topology = parse_topology(ctx.topology_spec(job.topology, "collective"))
    options = AlgoOptions(chunks=job.chunks, gamma=job.gamma, order=job.order, root=job.root)
    algorithm = ctx.path_spec(job.algorithm)    # a schedule file: next to the scenario
    runs = run_sweep(job.op, topology, algorithm,
                     job.sizes if job.sizes is not None else [job.size], ranks=job.ranks,
                     options=options, alpha=job.alpha, progress=ctx.progress,
                     faults=ctx.resolve_faults(topology), axis=job.axis, nodes=job.nodes,
                     model=ctx.model, packet=ctx.packet, engine=ctx.engine)
    name = job.name or f"{job.op}-{job.algorithm}"
    records = [{"job": name, **run.record()} for run in runs]
    keys = [f"{name} {format_size(run.size_bytes).replace(' ', '')}" for run in runs]
    return JobResult(name, "collective", records,
                     {key: run.result for key, run in zip(keys, runs)},
                     {key: topology for key in keys})


register_job("collective", CollectiveJob, run_collective_job, faults=True)
