"""Scenario job kinds ``placement`` (chips of a machine) and ``noc-placement`` (cores of
a chip).

.. code-block:: yaml

    jobs:
      - kind: placement
        name: llama70b-decode
        topology: galaxy-wh             # default: the scenario's
        layout: {tp: 8, dp: 4}          # or "tp=8,dp=4"
        model:                          # a transformer (docs/placement.md) ...
          hidden: 8192
          seq_len: 1
          micro_batch: 32
          layers: 80
          mode: decode
        # bytes: {tp: 32MiB, dp: 1GiB}  # ... or sizes per dimension, or explicit phases:
        # phases: [{name: tp-ar, dim: tp, op: allreduce, size: 32MiB, repeat: 4}]
        algorithm: ring                 # or auto (the fastest per strategy)
        overlap: false                  # dp in its own stream (model) / all phases (bytes)
        strategies: [row_major, column_major, snake, tiles, search]   # or all
        shape: 2x4                      # tiles
        map: my-map.json                # explicit (path relative to the scenario)
        budget: 60                      # simulations of the search (the default)
        seed: 0                         # default: the scenario's
        max_copies: 8                   # with overlap: copies of a repeated phase

      - kind: noc-placement
        name: chain-on-wormhole
        grid: {rows: 10, cols: 8}       # Wormhole defaults: 32 GB/s, 9 ns per hop
        operators:                      # a chain unless successors are given
          - {name: qkv, rows: 2, cols: 4, out_bytes: 2MiB}
          - {name: attn, rows: 2, cols: 4, out_bytes: 2MiB}
        policy: shortest                # noc0, noc1, split, shortest
        strategies: [adjacent, snake, scattered, search]

Each strategy gives one record; the engine results are kept for plots under
``'<job> <strategy>'``. The scenario loader imports this module to register the kinds.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from ..errors import InputError, unknown_name
from .jobs import JobContext, JobResult, register_job
from .._inputs.schema import Rate, Size, Strict, Time
from ..placement.layout import DIMENSIONS, parse_layout
from ..placement.noc import CHIP_STRATEGIES, NOC_POLICIES, WORMHOLE, Operator
from .placement_search import ALL_STRATEGIES, SEARCH_BUDGET
from ..placement.workload import (PHASE_OPS, Phase, Transformer, Workload, algorithm_for,
                                  bytes_workload)

__all__ = ["PlacementJob", "NocPlacementJob", "run_placement_job", "run_noc_job"]


class ModelSpec(Strict):
    """A transformer (see :class:`~.workload.Transformer`)."""

    hidden: int = Field(ge=1)
    seq_len: int = Field(ge=1)
    layers: int = Field(ge=1)
    micro_batch: int = Field(default=1, ge=1)
    bytes_per_element: float = Field(default=2.0, gt=0)
    params: float | None = Field(default=None, gt=0)
    grad_bytes_per_element: float | None = Field(default=None, gt=0)
    kv_hidden: int | None = Field(default=None, ge=1)
    experts: int = Field(default=0, ge=0)
    top_k: int = Field(default=1, ge=1)
    micro_batches: int = Field(default=1, ge=1)
    mode: Literal["train", "prefill", "decode"] = "train"
    tp_comm: Literal["allreduce", "rs_ag"] = "allreduce"


class PhaseSpec(Strict):
    name: str
    dim: Literal["tp", "cp", "ep", "dp", "pp"]
    op: str
    size: Size
    algorithm: str | None = None      # default: the job's algorithm
    repeat: int = Field(default=1, ge=1)
    stream: str | None = None
    both_ways: bool = False

    @field_validator("op")
    @classmethod
    def _known_op(cls, op: str) -> str:
        if op not in PHASE_OPS:
            raise ValueError(str(unknown_name("phase op", op, PHASE_OPS)))
        return op


class PlacementJob(Strict):
    """Compare rank -> chip placements of a parallel job (module docstring)."""

    kind: Literal["placement"] = "placement"
    name: str | None = None
    topology: str | None = None
    layout: str | dict[str, int]
    order: str = "-".join(DIMENSIONS)
    model: ModelSpec | None = None
    bytes: dict[str, Size] | None = None
    phases: list[PhaseSpec] | None = None
    algorithm: str = "ring"
    chunks: int | None = Field(default=None, ge=1)   # None: the algorithm picks its depth
    overlap: bool = False
    strategies: str | list[str] = "all"
    shape: str | None = None
    map: str | None = None
    budget: int = Field(default=SEARCH_BUDGET, ge=0)
    seconds: float | None = Field(default=None, gt=0)
    seed: int | None = Field(default=None, ge=0)
    max_copies: int = Field(default=8, ge=1)   # copies of a repeated phase with overlap
    alpha: Time | None = None           # s per message; default: the machine's calibration
    gamma: Rate | None = None           # bytes/s of reduction; default: the calibration

    @field_validator("layout")
    @classmethod
    def _readable_layout(cls, layout):
        parse_layout(layout)   # one-line errors for unknown dimensions and bad degrees
        return layout

    @field_validator("bytes")
    @classmethod
    def _known_dims(cls, sizes):
        for key in sizes or {}:
            if key not in DIMENSIONS:
                raise ValueError(str(unknown_name("parallel dimension", key, DIMENSIONS)))
        return sizes

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names):
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",")] if names != "all" else []
        for name in names:
            if name not in (*ALL_STRATEGIES, "explicit"):
                raise ValueError(str(unknown_name("placement strategy", name,
                                                  (*ALL_STRATEGIES, "explicit"))))
        return names or "all"

    @model_validator(mode="after")
    def _one_workload(self) -> "PlacementJob":
        given = [k for k in ("model", "bytes", "phases") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of model, bytes or phases"
                             + (f" (got {', '.join(given)})" if given else ""))
        return self


def _workload(job: PlacementJob, layout) -> Workload:
    if job.model is not None:
        model = Transformer(**job.model.model_dump())
        return model.workload(layout, job.algorithm, job.overlap)
    if job.bytes is not None:
        return bytes_workload(**{f"{d}_bytes": v for d, v in job.bytes.items()},
                              algorithm=job.algorithm, overlap=job.overlap)
    phases = tuple(Phase(p.name, p.dim, p.op, p.size,
                         p.algorithm or algorithm_for(p.op, job.algorithm), p.repeat,
                         p.stream, job.chunks, p.both_ways) for p in job.phases)
    return Workload(phases, overlap=job.overlap, name=job.name or "step")


def _strategies(job: PlacementJob) -> list[str]:
    if job.strategies == "all":
        names = list(ALL_STRATEGIES)
        if job.map:
            names.insert(len(names) - 1, "explicit")
        return names
    return list(job.strategies)


def run_placement_job(job: PlacementJob, ctx: JobContext) -> JobResult:
    from dataclasses import replace

    from ..topology import parse_topology
    from .placement_eval import StepModel
    from .placement_search import compare_strategies

    spec = job.topology or ctx.topology
    if spec is None:
        raise InputError("placement job: no topology (set 'topology' in the job or the "
                         "scenario)")
    topology = parse_topology(spec)
    layout = parse_layout(job.layout, order=job.order)
    layout.check_fits(topology.num_endpoints, repr(topology.name))
    workload = _workload(job, layout)
    if job.chunks is not None:
        workload = replace(workload, phases=tuple(replace(p, chunks=job.chunks)
                                                  for p in workload.phases))
    model = StepModel(topology, layout, workload, overhead=job.alpha, gamma=job.gamma,
                      max_copies=job.max_copies)
    seed = ctx.seed if job.seed is None else job.seed
    path = str(ctx.base_dir / job.map) if job.map else None
    scores, found = compare_strategies(model, _strategies(job), seed=seed, budget=job.budget,
                                       seconds=job.seconds,
                                       params={"shape": job.shape, "path": path})
    name = job.name or f"placement {layout.describe()}"
    reference = next((s.step_s for s in scores if s.strategy == "row_major"), None)
    records = []
    for score in scores:
        row: dict[str, Any] = {"job": name, "topology": topology.name,
                               "layout": layout.describe()}
        row.update(score.record(reference))
        if score.strategy == "search" and found is not None:
            row.update(search_start=found.start, search_evaluations=found.evaluations)
        records.append(row)
    results = {f"{name} {s.strategy}": s.result for s in scores if s.result is not None}
    return JobResult(name, "placement", records, results, {k: topology for k in results})


# -- chip level ----------------------------------------------------------------------------

class GridSpec(Strict):
    rows: int = Field(default=WORMHOLE["rows"], ge=2)
    cols: int = Field(default=WORMHOLE["cols"], ge=2)
    bandwidth: Rate = WORMHOLE["bandwidth"]
    latency: Time = WORMHOLE["latency"]


class OperatorSpec(Strict):
    name: str
    rows: int = Field(ge=1)
    cols: int = Field(ge=1)
    out_bytes: Size = 0.0
    successors: list[str] | None = None


class NocPlacementJob(Strict):
    """Compare placements of operators on a chip's core grid (module docstring)."""

    kind: Literal["noc-placement"] = "noc-placement"
    name: str | None = None
    grid: GridSpec = GridSpec()
    operators: list[OperatorSpec] = Field(min_length=1)
    policy: str = "shortest"
    pipelined: bool = True
    strategies: list[str] = Field(default_factory=lambda: [*CHIP_STRATEGIES, "search"])
    budget: int = Field(default=SEARCH_BUDGET, ge=0)
    seconds: float | None = Field(default=None, gt=0)
    seed: int | None = Field(default=None, ge=0)

    @field_validator("policy")
    @classmethod
    def _known_policy(cls, policy: str) -> str:
        if policy not in NOC_POLICIES:
            raise ValueError(str(unknown_name("NoC policy", policy, NOC_POLICIES)))
        return policy

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names):
        for name in names:
            if name not in (*CHIP_STRATEGIES, "search"):
                raise ValueError(str(unknown_name("chip placement strategy", name,
                                                  (*CHIP_STRATEGIES, "search"))))
        return names


def _operators(specs: list[OperatorSpec]) -> list[Operator]:
    chained = all(s.successors is None for s in specs)
    ops = []
    for i, s in enumerate(specs):
        succ = ((specs[i + 1].name,) if i + 1 < len(specs) else ()) if chained \
            else tuple(s.successors or ())
        ops.append(Operator(s.name, s.rows, s.cols, s.out_bytes, succ))
    return ops


def run_noc_job(job: NocPlacementJob, ctx: JobContext) -> JobResult:
    from .noc_eval import compare_chip_placements
    from ..placement.noc import tensix_grid

    grid = tensix_grid(job.grid.rows, job.grid.cols, bandwidth=job.grid.bandwidth,
                       latency=job.grid.latency)
    seed = ctx.seed if job.seed is None else job.seed
    scores = compare_chip_placements(grid, _operators(job.operators), job.strategies,
                                     policy=job.policy, pipelined=job.pipelined, seed=seed,
                                     budget=job.budget, seconds=job.seconds)
    name = job.name or "noc-placement"
    reference = next((s.time_s for s in scores if s.strategy == "adjacent"), None)
    records = [{"job": name, "topology": grid.name, "policy": job.policy,
                **s.record(reference)} for s in scores]
    results = {f"{name} {s.strategy}": s.result for s in scores if s.result is not None}
    return JobResult(name, "noc-placement", records, results, {k: grid for k in results})


register_job("placement", PlacementJob, run_placement_job)
register_job("noc-placement", NocPlacementJob, run_noc_job)
