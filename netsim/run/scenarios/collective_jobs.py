"""Scenario job kind ``collective``: run a collective (one size or a sweep) on the machine.

.. code-block:: yaml

    jobs:
      - kind: collective
        name: ring-allreduce
        op: allreduce
        algorithm: ring          # default: the machine's own library (auto where none)
        sizes: 1MiB:64MiB        # or size: 64MiB, or sizes: [1MiB, 8MiB]
        ranks: 16                # default: every endpoint
        chunks: 4
        alpha: 2us               # per-message overhead at the sender
        gamma: 100GB/s           # reduction rate at a rank
        order: snake             # default: auto (the machine's physical ring/line/tree)
        # axis: 1                # every line along grid axis 1 at once (per-line times)
        # nodes: [0_0, 0_1, 1_1, 1_0]   # or on these endpoints, in this order
        # gpus_per_thread: 8     # NCCL's model: nccl-tests -g 8 (as coll --gpus-per-thread)
        # nccl: {ALGO: NVLS, PROTO: Simple, VERSION: 2.26.2}   # as coll --nccl

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
    gpus_per_thread: int | None = Field(default=None, ge=0)   # NCCL's model: nccl-tests -g N
    nccl: dict[str, str | float] | None = None      # NCCL's model: ALGO, PROTO, VERSION

    @field_validator("nccl")
    @classmethod
    def _known_nccl(cls, settings):
        from ...algorithms import nccl_options

        if settings is not None:
            nccl_options(settings, where="")   # a one-line InputError; the loader names the field
        return settings

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
    extra = _nccl_extra(job, topology)
    options = AlgoOptions(chunks=job.chunks, gamma=job.gamma, order=job.order, root=job.root,
                          extra=extra)
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


def _nccl_extra(job: CollectiveJob, topology) -> dict:
    """The job's ``gpus_per_thread`` and ``nccl`` settings as NCCL's model options, as
    ``coll --gpus-per-thread --nccl`` gives them; refused when the job does not run NCCL's
    model."""
    from ...algorithms import nccl_options
    from ...errors import InputError
    from ..library import resolve_default

    extra = nccl_options(job.nccl or {}, where="")
    if job.gpus_per_thread is not None:
        extra["gpus_per_thread"] = job.gpus_per_thread
    if extra:
        runs_as = resolve_default(job.op, topology, job.algorithm).algorithm
        if runs_as != "nccl":
            raise InputError(f"gpus_per_thread and nccl apply to NCCL's model (algorithm "
                             f"nccl, or default on an NVIDIA machine), not to {runs_as}")
    return extra


register_job("collective", CollectiveJob, run_collective_job, faults=True)
