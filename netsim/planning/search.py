"""The planner's search: which layout, which placement, what step time.

:func:`plan` enumerates the layouts of a model on a machine (:func:`enumerate_layouts`:
degrees that multiply to the chips, a micro-batch size, a ZeRO stage, recomputation or
not, plain or interleaved 1F1B), keeps those whose memory fits
(:func:`~.step.memory_per_chip` within :data:`~.step.MEMORY_USABLE` of the chip), orders
them by a lower bound (:func:`lower_bound`: the 1F1B critical path of compute alone plus
each block's collectives at the chip's injection bandwidth), and simulates the best
``top``: for each, the placement strategies of ``netsim place`` are scored on the step's
collectives (:func:`evaluate_layout`; the collectives' times come from
:class:`~.phases.PhaseTimes`, shared between placements and layouts), and the step is
simulated under the best placement (the 1F1B schedule with those times). Rows are ranked
by simulated step time.

>>> from netsim.planning.models import load_model
>>> from netsim.topology import parse_topology
>>> out = plan(load_model("llama3-8b"), parse_topology("dgx-h100"), batch=16, top=2)
>>> len(out.rows), out.rows[0]["step_s"] <= out.rows[1]["step_s"]
(2, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError
from .models import ModelSpec
from .phases import PhaseTimes
from .step import (COMPUTE_EFFICIENCY, MEMORY_USABLE, Chip, TrainLayout, block_collectives,
                   block_seconds, breakdown, build_train_step, chip_of, memory_per_chip,
                   step_phases)

__all__ = ["enumerate_layouts", "lower_bound", "plan", "evaluate_layout", "PlanResult",
           "PlacementScore"]

#: Tensor-parallel degrees tried (they must divide the heads and the KV heads' multiple).
_TP = (1, 2, 4, 8, 16, 32)
_CP = (1, 2, 4)
_MICRO = (1, 2, 4)
_ZERO = (1, 3)
_VIRTUAL = (1, 2)          # model chunks per stage (interleaved 1F1B)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def enumerate_layouts(model: ModelSpec, chips: int, batch: int) -> list[TrainLayout]:
    """Every layout of ``chips`` the planner considers (memory not yet checked)."""
    out = []
    eps = [e for e in _divisors(model.experts) if e <= 64] if model.moe else [1]
    for tp in (t for t in _TP if chips % t == 0 and model.heads % t == 0):
        for cp in (c for c in _CP if chips % (tp * c) == 0 and model.seq_len >= 8192 * c
                   or c == 1):
            for ep in (e for e in eps if chips % (tp * cp * e) == 0):
                rest = chips // (tp * cp * ep)
                for pp in (p for p in _divisors(rest) if model.layers % p == 0 and p <= 32):
                    dp = rest // pp
                    for mb in _MICRO:
                        if batch % (dp * ep * mb):
                            continue
                        m = batch // (dp * ep * mb)
                        if pp > 1 and m < pp:
                            continue              # 1F1B needs a micro-batch per stage
                        for zero in _ZERO:
                            if zero == 3 and dp == 1:
                                continue
                            for rc in (False, True):
                                for vp in _VIRTUAL:
                                    if vp > 1 and (pp == 1 or m % pp
                                                   or model.layers < pp * vp):
                                        continue
                                    out.append(TrainLayout(
                                        tp=tp, cp=cp, ep=ep, dp=dp, pp=pp, batch=batch,
                                        micro_batch=mb, zero=zero, recompute=rc,
                                        virtual=vp))
    return out


def _moved(op: str, n: int, size: float) -> float:
    """Bytes a rank sends in ``op`` over ``n`` ranks (``size`` with nccl-tests meaning)."""
    if n <= 1:
        return 0.0
    share = (n - 1) / n * size
    return 2 * share if op == "allreduce" else share


def lower_bound(model: ModelSpec, lay: TrainLayout, chip: Chip, injection: float,
                efficiency: float = COMPUTE_EFFICIENCY) -> float:
    """A lower bound on the step (s): the last stage runs every micro-batch's forward and
    backward and waits for the pipeline's fill ``(p - 1)`` blocks, and every block's
    collectives cost at least the bytes a chip sends over its injection bandwidth."""
    fwd, bwd = block_seconds(model, lay, chip, efficiency=efficiency)
    fwd_l, bwd_l = block_seconds(model, lay, chip, last=True, efficiency=efficiency)
    comm = 0.0
    for items in block_collectives(model, lay).values():
        for _, dim, op, size in items:
            comm += _moved(op, getattr(lay, dim), size) / injection
    m, p, v = lay.micro_batches, lay.pp, lay.virtual
    # block_collectives lists one model chunk's collectives: v chunks per micro-batch;
    # interleaving divides the fill by v
    return m * (fwd_l + bwd_l + v * comm) + (p - 1) * (fwd + bwd) / v


@dataclass(eq=False)
class PlacementScore:
    """One placement of a layout, scored as ``netsim place`` scores a step: ``step_s``
    the sum over collectives of ``phase_s`` (each collective's time per step: its repeats
    times one occurrence, ``times``), ``bound_s`` the link-load lower bound of the sum."""

    strategy: str
    step_s: float
    bound_s: float
    phase_s: dict[str, float]
    times: dict[str, float]
    placement: np.ndarray = field(repr=False)


@dataclass
class PlanResult:
    """Ranked rows (dicts, fastest first), the layouts considered and kept, and per row
    the placement scores (for ``--explain`` and figures)."""

    rows: list[dict[str, Any]]
    considered: int
    fitting: int
    chip: Chip
    details: list[dict[str, Any]] = field(default_factory=list)

    @property
    def stats(self) -> dict[str, int]:
        """How the search's collective times were obtained, summed over the layouts
        (:class:`~.phases.PhaseTimes` counters)."""
        out: dict[str, int] = {}
        for detail in self.details:
            for key, value in detail.get("stats", {}).items():
                out[key] = out.get(key, 0) + value
        return out


def evaluate_layout(model: ModelSpec, lay: TrainLayout, topology, *, chip: Chip,
                    algorithm: str = "default", strategies: Sequence[str] | None = None,
                    efficiency: float = COMPUTE_EFFICIENCY, router=None, seed: int = 0,
                    exact: bool = False, timer: PhaseTimes | None = None, engine=None
                    ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Simulate one layout under its best placement: (row, detail). ``exact`` simulates
    the whole step as one schedule (every collective and hand-off of every block, all at
    once on the network) instead of the timed form; slower, for checking. ``timer``
    (:class:`~.phases.PhaseTimes`) shares simulated collectives between layouts;
    ``engine`` is the engine's :class:`~netsim.engine.config.EngineConfig` (None: its
    defaults; a given ``timer`` has its own). The row's ``engine`` is what the engine ran
    for the step.

    The placements are those of ``netsim place``'s fixed strategies (or ``strategies``),
    each scored by the sum over the step's collectives of their repeats times one
    occurrence's simulated time (every group at once, each collective on its own; see
    ``docs/plan.md``). A strategy
    that cannot place the layout, or whose collectives cannot run under it, is skipped
    with its reason; one whose link-load bound already exceeds the best score is not
    simulated (it cannot win)."""
    from ..engine import simulate
    from ..routing import default_router
    from ..run.placed import fabric_topology
    from ..placement.strategies import FIXED_STRATEGIES, place, why_not
    from ..algorithms.options import AlgoOptions
    from ..errors import NetsimError
    from ..run import machine_costs

    router = router if router is not None else default_router(topology)
    overhead, costs = machine_costs(topology, None, AlgoOptions())
    gamma = costs.gamma or None
    if timer is None:
        timer = PhaseTimes(topology, router=router, overhead=overhead, gamma=gamma,
                           engine=engine)
    before = dict(timer.stats)
    par = lay.parallel()
    phases = step_phases(model, lay, algorithm, topology)
    scores: list[PlacementScore] = []
    skipped: dict[str, str] = {}
    strategy, placement, times = "row_major", np.arange(lay.chips), {}
    if phases:
        best = None
        for name in (list(strategies) if strategies else FIXED_STRATEGIES):
            reason = why_not(name, topology, par, seed=seed)
            if reason is not None:
                skipped[name] = reason
                continue
            try:
                where = place(name, topology, par, seed=seed)
                bound = sum(p.repeat * timer.bound(p, par, where) for p in phases)
                if best is not None and bound >= best.step_s:
                    skipped[name] = (f"not simulated: its link-load bound {bound:.4g} s "
                                     f">= {best.strategy}'s {best.step_s:.4g} s")
                    continue
                once = {p.name: timer.time(p, par, where) for p in phases}
            except NetsimError as exc:
                skipped[name] = str(exc)
                continue
            per_step = {p.name: p.repeat * once[p.name] for p in phases}
            score = PlacementScore(name, sum(per_step.values()), bound, per_step, once, where)
            scores.append(score)
            if best is None or score.step_s < best.step_s:
                best = score
        if best is None:
            raise InputError(f"layout {lay.describe()}: no placement strategy can run its "
                             f"collectives on {topology.name!r}: "
                             + "; ".join(f"{k}: {v}" for k, v in skipped.items()))
        strategy, placement, times = best.strategy, best.placement, best.times
    step = build_train_step(model, lay, topology, placement, chip=chip, algorithm=algorithm,
                            efficiency=efficiency, gamma=gamma,
                            timed=None if exact else times)
    machine = fabric_topology(topology, step.schedule) if exact else topology
    result = simulate(machine, step.schedule, step.placement, router=router,
                      overhead=overhead, config=timer.engine)
    split = breakdown(step, result)
    tokens = lay.batch * model.seq_len
    mem = memory_per_chip(model, lay)
    row = {"layout": lay.describe(), "placement": strategy, **split.record(),
           "memory_gib": mem["total"] / 2**30,
           "mfu": model.flops_per_token() * tokens / (split.step_s * lay.chips * chip.flops),
           "tokens_per_s": tokens / split.step_s}
    if "engine" in result.meta:             # what the engine ran for the step (json, csv)
        row["engine"] = result.meta["engine"]
    # each collective's own utilisation while it runs (bytes of one occurrence over
    # bandwidth x its time): a step average would hide the short phases behind the long
    utilisation, busiest = {}, {}
    for p in phases:
        if times.get(p.name, 0.0) > 0:
            util = timer.loads(p, par, placement) / (topology.bandwidth * times[p.name])
            i = int(util.argmax())
            utilisation[p.name] = util
            busiest[p.name] = (topology.link_names[i], float(util[i]))
    detail = {"layout": lay, "scores": scores,
              "skipped": skipped, "times": times, "breakdown": split, "memory": mem,
              "utilisation": utilisation, "busiest": busiest,
              "stats": {k: v - before[k] for k, v in timer.stats.items()}}
    return row, detail


def _remote(model, layouts, topology, kwargs) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Layouts in a worker process, sharing one cache of simulated collectives, under the
    caller's memory budget (the engine configuration's: a worker process does not inherit
    the caller's ``--max-memory``)."""
    from ..budget import max_memory

    with max_memory(getattr(kwargs.get("engine"), "memory_budget", None)):
        return _evaluate_all(model, layouts, topology, kwargs)


def _evaluate_all(model, layouts, topology, kwargs, progress=None
                  ) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Evaluate ``layouts`` in turn with one router and one :class:`PhaseTimes`."""
    from ..algorithms.options import AlgoOptions
    from ..routing import default_router
    from ..run import machine_costs

    router = default_router(topology)
    overhead, costs = machine_costs(topology, None, AlgoOptions())
    kwargs = dict(kwargs)
    timer = PhaseTimes(topology, router=router, overhead=overhead, gamma=costs.gamma or None,
                       engine=kwargs.pop("engine", None))
    out = []
    for lay in layouts:
        out.append(evaluate_layout(model, lay, topology, router=router, timer=timer, **kwargs))
        if progress:
            progress()
    return out


def _batches(layouts: Sequence[TrainLayout], workers: int) -> list[list[TrainLayout]]:
    """Layouts in batches for the workers: layouts with the same degrees share their
    collectives (the cache of one batch), so they go together; batches are then dealt out
    largest first to at most ``workers`` lists of about equal size."""
    by_degrees: dict[tuple, list[TrainLayout]] = {}
    for lay in layouts:
        by_degrees.setdefault((lay.tp, lay.cp, lay.ep, lay.dp, lay.pp), []).append(lay)
    groups = sorted(by_degrees.values(), key=len, reverse=True)
    if len(groups) >= workers:
        bins: list[list[TrainLayout]] = [[] for _ in range(workers)]
        for group in groups:
            min(bins, key=len).extend(group)
        return [b for b in bins if b]
    # fewer degree sets than workers: split the largest sets so that every worker works
    out = [list(g) for g in groups]
    while len(out) < workers and max(len(b) for b in out) > 1:
        big = max(out, key=len)
        out.remove(big)
        half = len(big) // 2
        out += [big[:half], big[half:]]
    return out


def _check_layout(model: ModelSpec, lay: TrainLayout) -> None:
    """Refuse a given layout that cannot split ``model`` (one line: which degree, why)."""
    what = f"layout {lay.describe()}"
    if lay.pp > model.layers:
        raise InputError(f"{what}: pp={lay.pp} stages for the {model.layers} layers of "
                         f"{model.name}")
    if lay.virtual > 1 and model.layers < lay.pp * lay.virtual:
        raise InputError(f"{what}: pp x vp = {lay.pp * lay.virtual} model chunks for the "
                         f"{model.layers} layers of {model.name}")
    if model.heads % lay.tp:
        raise InputError(f"{what}: tp={lay.tp} does not divide the {model.heads} attention "
                         f"heads of {model.name}")
    if model.seq_len % lay.cp:
        raise InputError(f"{what}: cp={lay.cp} does not divide the sequence of "
                         f"{model.seq_len} tokens of {model.name}")
    if lay.ep > 1 and (not model.moe or model.experts % lay.ep):
        raise InputError(f"{what}: ep={lay.ep} needs routed experts it divides; "
                         f"{model.name} has {model.experts}")


def _check_strategies(strategies: Sequence[str] | None) -> None:
    """Refuse, before any simulation, strategy names the planner cannot score: unknown
    names, and ``search`` (``netsim place``'s local search costs hundreds of simulations
    per layout; run it on the layout the plan picks)."""
    from ..placement.strategies import STRATEGIES
    from ..errors import unknown_name

    for name in strategies or ():
        if name == "search":
            raise InputError("plan scores fixed placement strategies; 'search' is netsim "
                             "place's local search: run `netsim place --strategies search` "
                             "on the layout the plan picks")
        if name not in STRATEGIES:
            raise unknown_name("placement strategy", name, list(STRATEGIES))


def plan(model: ModelSpec, topology, *, batch: int, layout: TrainLayout | None = None,
         top: int = 10, algorithm: str = "default", efficiency: float = COMPUTE_EFFICIENCY,
         strategies: Sequence[str] | None = None, seed: int = 0,
         progress: Callable[[int, int], None] | None = None, executor=None,
         workers: int | None = None, exact: bool = False, engine=None) -> PlanResult:
    """Rank the layouts of ``model`` on ``topology`` (see the module docstring); with
    ``layout`` only that one is simulated (it must fit). ``executor`` (a
    ``concurrent.futures.Executor``: local processes or a Dask cluster's, as ``netsim
    sweep`` uses) simulates the layouts in parallel, in at most ``workers`` batches
    (default: one per set of degrees) of layouts that share collectives; the ranking is
    the same. ``exact``: see :func:`evaluate_layout`. ``engine`` is the engine's
    :class:`~netsim.engine.config.EngineConfig` for every simulation, in this process and in
    the workers (None: its defaults)."""
    from ..topology import injection_bandwidth

    _check_strategies(strategies)
    chip = chip_of(topology, model.dtype)
    chips = topology.num_endpoints
    capacity = chip.memory * MEMORY_USABLE
    if layout is not None:
        if layout.chips != chips:
            raise InputError(f"layout {layout.describe()} uses {layout.chips} chips, the "
                             f"machine {topology.name!r} has {chips}")
        _check_layout(model, layout)
        # pp need not divide the layers: the stages then share the work evenly (fractional
        # layers), as a run that balances its first and last stages does
        need = memory_per_chip(model, layout)["total"]
        if need > capacity:
            raise InputError(f"layout {layout.describe()} needs {need / 2**30:.1f} GiB per "
                             f"chip; {chip.name} has {capacity / 2**30:.1f} GiB usable")
        candidates, considered = [layout], 1
    else:
        every = enumerate_layouts(model, chips, batch)
        considered = len(every)
        candidates = [lay for lay in every
                      if memory_per_chip(model, lay)["total"] <= capacity]
        if not candidates:
            raise InputError(f"{model.name} fits no layout of {chips} chips of {chip.name} "
                             f"with a batch of {batch} ({capacity / 2**30:.1f} GiB usable "
                             f"per chip; {considered} layouts tried)")
    injection = injection_bandwidth(topology)[0]
    bounds = {lay: lower_bound(model, lay, chip, injection, efficiency) for lay in candidates}
    chosen = sorted(candidates, key=lambda lay: (bounds[lay], lay.describe()))[:max(1, top)]
    kwargs = dict(chip=chip, algorithm=algorithm, strategies=strategies,
                  efficiency=efficiency, seed=seed, exact=exact, engine=engine)
    rows, details = [], []
    if executor is not None and len(chosen) > 1:
        degrees = {(lay.tp, lay.cp, lay.ep, lay.dp, lay.pp) for lay in chosen}
        batches = _batches(chosen, int(workers) if workers else max(2, len(degrees)))
        futures = [executor.submit(_remote, model, batch_, topology, kwargs)
                   for batch_ in batches]
        found: dict[TrainLayout, tuple] = {}
        done = 0
        for batch_, future in zip(batches, futures):
            for lay, outcome in zip(batch_, future.result()):
                found[lay] = outcome
                done += 1
                if progress:
                    progress(done, len(chosen))
        outcomes = [found[lay] for lay in chosen]
    else:
        # one cache of simulated collectives for every layout of the search
        count = iter(range(1, len(chosen) + 1))
        outcomes = _evaluate_all(model, chosen, topology, kwargs,
                                 progress=(lambda: progress(next(count), len(chosen)))
                                 if progress else None)
    for lay, (row, detail) in zip(chosen, outcomes):
        row["bound_s"] = bounds[lay]
        rows.append(row)
        details.append(detail)
    order = sorted(range(len(rows)), key=lambda i: (rows[i]["step_s"], rows[i]["layout"]))
    ranked = [dict(rank=k + 1, **rows[i]) for k, i in enumerate(order)]
    return PlanResult(ranked, considered, len(candidates), chip, [details[i] for i in order])
