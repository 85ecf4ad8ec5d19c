"""A placement study: one description of "compare placements of this job on this machine",
and the one function that runs it.

``netsim place`` maps its options onto a :class:`PlacementStudy`; the scenario job kind
``placement`` *is* a study with a ``kind`` (:mod:`netsim.run.scenarios.placement_jobs`). Both call
:func:`run_placement_study`, so the same case gives the same numbers through either door.

The workload is one of ``model`` (a transformer, :class:`~netsim.placement.Transformer`),
``bytes`` (the size of each dimension's collective, with ``repeat`` collectives per step)
or ``phases`` (explicit collectives). Sizes and times take units (``32MiB``, ``30s``).

>>> study = PlacementStudy(topology="mesh:2x4,bw=10GB/s", layout={"tp": 4, "dp": 2},
...                        bytes={"tp": "4MB"}, strategies="row_major,interleaved")
>>> out = run_placement_study(study)
>>> [(r["strategy"], round(r["step_s"] * 1e3, 3)) for r in out.records()]  # 1.5 S / B
[('row_major', 0.6), ('interleaved', 1.2)]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Callable, Literal, Sequence

from pydantic import Field, field_validator, model_validator

from ..._inputs.schema import Rate, Size, Strict, Time, one_of
from ...errors import InputError, unknown_name
from ...placement.layout import DIMENSIONS, ParallelLayout, parse_layout
from ...placement.strategies import FIXED_STRATEGIES
from ...placement.workload import (PHASE_OPS, Phase, Transformer, Workload, algorithm_for,
                                  bytes_workload)
from .search import ALL_STRATEGIES, SEARCH_BUDGET

__all__ = ["PlacementStudy", "PlacementOutcome", "ModelSpec", "PhaseSpec",
           "run_placement_study", "strategy_names"]

#: Every strategy name a study accepts: the fixed ones, ``explicit`` (a map file), search.
KNOWN_STRATEGIES = (*ALL_STRATEGIES, "explicit")


def strategy_names(strategies: str | Sequence[str], *, has_map: bool) -> list[str]:
    """``'all'``, a comma list or a list -> strategy names, in the order to run them.

    ``all`` is every fixed strategy, ``explicit`` when a map is given, then the search.
    Unknown names get a did-you-mean :class:`~netsim.errors.InputError`.

    >>> strategy_names("snake, search", has_map=False)
    ['snake', 'search']
    """
    if isinstance(strategies, str):
        if strategies.strip().lower() == "all":
            names = list(ALL_STRATEGIES)
            if has_map:
                names.insert(len(FIXED_STRATEGIES), "explicit")
            return names
        strategies = strategies.split(",")
    names = [n.strip().replace("-", "_") for n in strategies if n.strip()]
    for name in names:
        if name not in KNOWN_STRATEGIES:
            raise unknown_name("placement strategy", name, KNOWN_STRATEGIES)
    if "explicit" in names and not has_map:
        # One message for both doors: the option, and the scenario key.
        raise InputError("strategy explicit needs --map FILE (in a scenario: map: FILE)")
    return names


def _known_dimensions(mapping: dict | None) -> dict | None:
    for key in mapping or {}:
        if key not in DIMENSIONS:
            raise ValueError(str(unknown_name("parallel dimension", key, DIMENSIONS)))
    return mapping


class ModelSpec(Strict):
    """A transformer (see :class:`~netsim.placement.Transformer`)."""

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
    """One explicit collective of the step (see :class:`~netsim.placement.Phase`)."""

    name: str
    dim: Literal["tp", "cp", "ep", "dp", "pp"]
    op: Annotated[str, one_of("phase op", PHASE_OPS)]
    size: Size
    algorithm: str | None = None      # default: the study's algorithm
    repeat: int = Field(default=1, ge=1)
    stream: str | None = None
    both_ways: bool = False


class PlacementStudy(Strict):
    """Compare rank -> chip placements of a parallel job on a machine (module docstring).

    ``topology`` a spec, preset or file; ``layout`` degrees (``{"tp": 8, "dp": 4}`` or
    ``"tp=8,dp=4"``) numbered in ``order``, fastest first; one of ``model``, ``bytes``
    (bytes per dimension; ``repeat``: collectives per step of a dimension) or ``phases``;
    ``algorithm`` of every phase (``default``: what the machine's library runs for its op,
    ring where it names none; ``auto``: the fastest per strategy), ``chunks`` (None: the
    algorithm's own depth); ``strategies`` ``'all'`` or names; ``shape`` of ``tiles``;
    ``map`` the file of ``explicit``; ``budget`` simulations and ``seconds`` (s) of the
    search, ``seed`` of it and of ``random``; ``max_copies`` of a repeated phase with
    ``overlap``; ``alpha`` (s per message) and ``gamma`` (bytes/s of reduction), by
    default the machine's calibration.
    """

    name: str | None = None
    topology: str | None = None
    layout: str | dict[str, int]
    order: str = "-".join(DIMENSIONS)
    model: ModelSpec | None = None
    bytes: dict[str, Size] | None = None
    repeat: dict[str, int] | None = None
    phases: list[PhaseSpec] | None = None
    algorithm: str = "default"        # the machine's library (netsim.run.library)
    chunks: int | None = Field(default=None, ge=1)   # None: the algorithm picks its depth
    overlap: bool = False
    strategies: str | list[str] = "all"
    shape: str | None = None
    map: str | None = None
    budget: int = Field(default=SEARCH_BUDGET, ge=0)
    seconds: Time | None = None
    seed: int | None = Field(default=None, ge=0)     # None: 0 (a scenario's seed in a job)
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
        return _known_dimensions(sizes)

    @field_validator("repeat")
    @classmethod
    def _known_repeats(cls, repeats):
        for key, count in (_known_dimensions(repeats) or {}).items():
            if count < 1:
                raise ValueError(f"repeat of {key} must be >= 1, got {count}")
        return repeats

    @field_validator("strategies")
    @classmethod
    def _known_strategies(cls, names):
        strategy_names(names, has_map=True)   # names here; a map for explicit: below
        return names

    @field_validator("seconds")
    @classmethod
    def _positive(cls, seconds):
        if seconds is not None and seconds <= 0:
            raise ValueError("must be > 0 s")
        return seconds

    @model_validator(mode="after")
    def _one_workload(self) -> "PlacementStudy":
        given = [k for k in ("model", "bytes", "phases") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of model, bytes or phases"
                             + (f" (got {', '.join(given)})" if given else ""))
        if self.repeat and self.bytes is None:
            raise ValueError("repeat goes with bytes (a phase has its own repeat)")
        strategy_names(self.strategies, has_map=self.map is not None)
        return self

    def parallel_layout(self) -> ParallelLayout:
        """The layout with its rank order (an unknown order is a one-line error)."""
        return parse_layout(self.layout, order=self.order)

    def strategy_names(self) -> list[str]:
        """The strategies to run, in order (see :func:`strategy_names`)."""
        return strategy_names(self.strategies, has_map=self.map is not None)

    def workload(self, layout: ParallelLayout, topology=None) -> Workload:
        """The step's collectives, ``chunks`` applied to every phase when given, and
        ``default`` phases given the algorithm the library of ``topology`` runs for their op
        (:func:`~netsim.run.library.phase_algorithm`)."""
        from ..library import DEFAULT_ALGORITHM, phase_algorithm

        workload = self._workload(layout)
        if any(p.algorithm == DEFAULT_ALGORITHM for p in workload.phases):
            workload = replace(workload, phases=tuple(
                replace(p, algorithm=algorithm_for(p.op, phase_algorithm(p.op, topology,
                                                                         p.algorithm)))
                for p in workload.phases))
        return workload

    def _workload(self, layout: ParallelLayout) -> Workload:
        if self.model is not None:
            workload = Transformer(**self.model.model_dump()).workload(
                layout, self.algorithm, self.overlap)
        elif self.bytes is not None:
            workload = bytes_workload(**{f"{d}_bytes": v for d, v in self.bytes.items()},
                                      algorithm=self.algorithm, overlap=self.overlap,
                                      repeat=self.repeat)
        else:
            workload = Workload(
                tuple(Phase(p.name, p.dim, p.op, p.size,
                            p.algorithm or algorithm_for(p.op, self.algorithm), p.repeat,
                            p.stream, self.chunks, p.both_ways) for p in self.phases),
                overlap=self.overlap, name=self.name or "step")
        if self.chunks is None:
            return workload
        return replace(workload, phases=tuple(replace(p, chunks=self.chunks)
                                              for p in workload.phases))


@dataclass(eq=False)
class PlacementOutcome:
    """What a study found: the machine, the step model (layout, active workload), the
    strategies asked, the scores of those that could place the layout (the search last)
    and the search record (None without search)."""

    topology: Any
    model: Any
    strategies: list[str]
    scores: list
    search: Any = None
    #: strategy -> why its placement could not run (a phase's algorithm refused its groups)
    unrunnable: dict[str, str] = field(default_factory=dict)

    @property
    def layout(self) -> ParallelLayout:
        return self.model.layout

    @property
    def reference(self) -> float | None:
        """Row-major's step time (s), the base of ``vs_row_major_pct``; None without it."""
        return next((s.step_s for s in self.scores if s.strategy == "row_major"), None)

    @property
    def skipped(self) -> list[str]:
        """Strategies asked for that cannot place this layout on this machine."""
        placed = {s.strategy for s in self.scores}
        return [n for n in self.strategies if n not in placed]

    def records(self) -> list[dict[str, Any]]:
        """One flat row per strategy (:meth:`~netsim.run.StepScore.record`)."""
        reference = self.reference
        return [s.record(reference) for s in self.scores]


def run_placement_study(study: PlacementStudy, *,
                        progress: Callable[[int, int], None] | None = None,
                        engine=None) -> PlacementOutcome:
    """Build the step of ``study`` on its machine and score every strategy by simulation.
    ``progress(steps_done, budget)`` follows the search, if the study has one; ``engine``
    is the engine's :class:`~netsim.engine.config.EngineConfig` (None: its defaults)."""
    from ...topology import parse_topology
    from .evaluate import StepModel
    from .search import compare_strategies

    if study.topology is None:
        raise InputError("placement study: no topology given")
    topology = parse_topology(study.topology)
    layout = study.parallel_layout()
    layout.check_fits(topology.num_endpoints, repr(topology.name))
    model = StepModel(topology, layout, study.workload(layout, topology), overhead=study.alpha,
                      gamma=study.gamma, max_copies=study.max_copies, engine=engine)
    names = study.strategy_names()
    unrunnable: dict[str, str] = {}
    scores, found = compare_strategies(model, names, seed=study.seed or 0,
                                       budget=study.budget, seconds=study.seconds,
                                       params={"shape": study.shape, "path": study.map},
                                       progress=progress, unrunnable=unrunnable)
    if not scores and unrunnable:
        raise InputError(f"layout {layout.describe()}: no placement strategy can run its "
                         f"collectives on {topology.name!r}: " + "; ".join(
                             f"{k}: {v}" for k, v in unrunnable.items()))
    return PlacementOutcome(topology, model, names, scores, found, unrunnable)
