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
        # repeat: {tp: 160}             # with bytes: collectives per step of a dimension
        algorithm: ring                 # or auto (the fastest per strategy)
        overlap: false                  # dp in its own stream (model) / all phases (bytes)
        strategies: [row_major, column_major, snake, tiles, search]   # or all
        shape: 2x4                      # tiles
        map: my-map.json                # explicit (path relative to the scenario)
        budget: 60                      # simulations of the search (the default)
        # seconds: 30s                  # wall-time limit of the search
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

A ``placement`` job is a :class:`~netsim.run.placements.study.PlacementStudy` (the one description
``netsim place`` fills from its options) run by the same function. Each strategy gives one
record; the engine results are kept for plots under
``'<job> <strategy>'``. The scenario loader imports this module to register the kinds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .jobs import JobContext, JobResult, register_job
from ..._inputs.schema import Rate, Size, Strict, Time, one_of
from ...placement.noc import CHIP_STRATEGIES, NOC_POLICIES, WORMHOLE, Operator
from ..placements.search import SEARCH_BUDGET
from ..placements.study import PlacementStudy, run_placement_study

__all__ = ["PlacementJob", "NocPlacementJob", "run_placement_job", "run_noc_job"]


class PlacementJob(PlacementStudy):
    """Compare rank -> chip placements of a parallel job (module docstring): a
    :class:`~netsim.run.placements.study.PlacementStudy` whose topology, seed and map path default
    to the scenario's."""

    kind: Literal["placement"] = "placement"


def run_placement_job(job: PlacementJob, ctx: JobContext) -> JobResult:
    study = job.model_copy(update={
        "topology": ctx.topology_spec(job.topology, "placement"), "seed": ctx.seed_for(job.seed),
        "map": str(ctx.base_dir / job.map) if job.map else None})
    outcome = run_placement_study(study, engine=ctx.engine)
    topology, layout, found = outcome.topology, outcome.layout, outcome.search
    name = job.name or f"placement {layout.describe()}"
    records = []
    for score, record in zip(outcome.scores, outcome.records()):
        row: dict[str, Any] = {"job": name, "topology": topology.name,
                               "layout": layout.describe(), **record}
        if score.strategy == "search" and found is not None:
            row.update(search_start=found.start, search_evaluations=found.evaluations)
        records.append(row)
    results = {f"{name} {s.strategy}": s.result for s in outcome.scores
               if s.result is not None}
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
    policy: Annotated[str, one_of("NoC policy", NOC_POLICIES)] = "shortest"
    pipelined: bool = True
    strategies: list[Annotated[str, one_of("chip placement strategy",
                                           (*CHIP_STRATEGIES, "search"))]] = \
        Field(default_factory=lambda: [*CHIP_STRATEGIES, "search"])
    budget: int = Field(default=SEARCH_BUDGET, ge=0)
    seconds: float | None = Field(default=None, gt=0)
    seed: int | None = Field(default=None, ge=0)



def _operators(specs: list[OperatorSpec]) -> list[Operator]:
    chained = all(s.successors is None for s in specs)
    ops = []
    for i, s in enumerate(specs):
        succ = ((specs[i + 1].name,) if i + 1 < len(specs) else ()) if chained \
            else tuple(s.successors or ())
        ops.append(Operator(s.name, s.rows, s.cols, s.out_bytes, succ))
    return ops


def run_noc_job(job: NocPlacementJob, ctx: JobContext) -> JobResult:
    from ..placements.noc import compare_chip_placements
    from ...placement.noc import tensix_grid

    grid = tensix_grid(job.grid.rows, job.grid.cols, bandwidth=job.grid.bandwidth,
                       latency=job.grid.latency)
    scores = compare_chip_placements(grid, _operators(job.operators), job.strategies,
                                     policy=job.policy, pipelined=job.pipelined,
                                     seed=ctx.seed_for(job.seed),
                                     budget=job.budget, seconds=job.seconds,
                                     engine=ctx.engine)
    name = job.name or "noc-placement"
    reference = next((s.time_s for s in scores if s.strategy == "adjacent"), None)
    records = [{"job": name, "topology": grid.name, "policy": job.policy,
                **s.record(reference)} for s in scores]
    results = {f"{name} {s.strategy}": s.result for s in scores if s.result is not None}
    return JobResult(name, "noc-placement", records, results, {k: grid for k in results})


register_job("placement", PlacementJob, run_placement_job)
register_job("noc-placement", NocPlacementJob, run_noc_job)
