"""Searching placements by simulation, and comparing strategies.

:func:`anneal` is a generic simulated-annealing local search over maps rank -> node with
swap moves: it starts from the best of the seed maps it is given, proposes ``pool``
random swaps per step, keeps the one a cheap score ranks best (no simulation), simulates
only that one, and accepts it if it is faster or, with probability
``exp(-(t_new - t_cur) / (T * t_cur))``, if slower, the temperature ``T`` falling linearly
from ``temperature`` to 0 over the budget. It returns the best map simulated, which can
only be a seed map or one strictly faster than every seed: the search is never worse
than the best fixed strategy. With a budget in evaluations the result is a function of
the seed; a budget in seconds makes it depend on the machine's speed.

:func:`search_placement` runs it on a :class:`~.evaluate.StepModel` (objective = the
simulated step time, cheap score = (link-load bound, hop-bytes)); :func:`compare_strategies`
scores every fixed strategy and the search on one workload, the table ``netsim place``
prints.

This module is a client of the engine (through :mod:`.evaluate`), one layer above it.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...errors import InputError
from .evaluate import StepModel, StepScore
from ...placement.strategies import FIXED_STRATEGIES, applicable_strategies, place

__all__ = ["SearchResult", "anneal", "search_placement", "compare_strategies",
           "ALL_STRATEGIES", "SEARCH_BUDGET"]

#: Relative difference below which two simulated times are the same (float rounding).
_TIE = 1e-9
#: Simulations a search may run unless told otherwise, in the CLI, scenarios and the API
#: alike: on galaxy-wh (tp 8, dp 4) 60 find the map that 200 find, in a tenth of the time.
SEARCH_BUDGET = 60
#: Every strategy ``--strategies all`` runs: the fixed ones, then the search.
ALL_STRATEGIES = (*FIXED_STRATEGIES, "search")


@dataclass(eq=False)
class SearchResult:
    """The best map found, its objective value, the seed map it started from, how many
    maps were simulated (``evaluations``, seeds included) and how many cheap scores were
    computed, the best value after each evaluation (``history``) and the wall time (s)."""

    placement: np.ndarray
    value: float
    start: str
    evaluations: int
    cheap_scores: int
    history: list[float] = field(default_factory=list)
    accepted: int = 0
    seconds: float = 0.0
    improved: bool = False


def _swap(placement: np.ndarray, rng: np.random.Generator, free: np.ndarray,
          orbits: Sequence[np.ndarray]) -> np.ndarray:
    """A neighbour of ``placement`` (a copy; ``free`` is updated in place when a rank moves
    to a free node): half the time, when ``orbits`` are given, positions p and q swap in
    every row of one orbit table at once (the same change in every group, which a step
    paced by its slowest group needs); otherwise two ranks swap nodes, or a rank moves to
    a free node."""
    out = placement.copy()
    n = out.size
    if orbits and rng.random() < 0.5:
        table = orbits[int(rng.integers(len(orbits)))]
        p, q = rng.choice(table.shape[1], size=2, replace=False)
        out[table[:, p]], out[table[:, q]] = placement[table[:, q]], placement[table[:, p]]
        return out
    if free.size and rng.random() < free.size / (n + free.size):
        i = int(rng.integers(n))
        j = int(rng.integers(free.size))
        out[i], free[j] = free[j], out[i]
        return out
    i, j = rng.choice(n, size=2, replace=False)
    out[i], out[j] = out[j], out[i]
    return out


def anneal(objective: Callable[[np.ndarray], float],
           seeds: Mapping[str, tuple[np.ndarray, float]], *,
           cheap: Callable[[np.ndarray], Any] | None = None, nodes: Sequence[int] | None = None,
           budget: int = SEARCH_BUDGET, seconds: float | None = None, seed: int = 0, pool: int = 8,
           temperature: float = 0.02, orbits: Sequence[np.ndarray] = (),
           progress: Callable[[int, int], None] | None = None) -> SearchResult:
    """Simulated annealing over maps, from the best of ``seeds`` (see the module docstring).

    ``seeds`` maps a name to (map, objective value already computed). ``budget`` counts
    objective evaluations beyond the seeds; ``seconds`` (optional) stops earlier on wall
    time. ``nodes``: the nodes ranks may use (default: those of the seed maps; extra nodes
    are free cells a rank can move to). ``cheap(map)`` returns a sortable score used to
    pick which of ``pool`` proposals to simulate (None: the first proposal). ``orbits``:
    (groups, k) rank tables whose positions may be swapped in every group at once.
    ``progress(steps_done, budget)`` is called after every step (a progress bar).
    """
    if not seeds:
        raise InputError("search: no seed placement to start from")
    if budget < 0 or pool < 1:
        raise InputError(f"search: budget must be >= 0 and pool >= 1, got {budget}, {pool}")
    rng = np.random.default_rng(seed)
    start = min(seeds, key=lambda name: (seeds[name][1], name))
    best = np.asarray(seeds[start][0], dtype=np.int64).copy()
    best_value = float(seeds[start][1])
    used = set(best.tolist())
    pool_nodes = sorted(set(np.asarray(nodes).tolist()) if nodes is not None else used)
    if not used <= set(pool_nodes):
        raise InputError("search: the seed maps use nodes outside the allowed nodes")
    free = np.asarray([v for v in pool_nodes if v not in used], dtype=np.int64)
    seen = {np.asarray(p, dtype=np.int64).tobytes(): float(v) for p, v in seeds.values()}
    current, current_value = best.copy(), best_value
    history, accepted, cheap_count = [], 0, 0
    began = _time.perf_counter()
    for step in range(budget):
        if seconds is not None and _time.perf_counter() - began > seconds:
            break
        if best.size < 2 and not free.size:   # nothing to move
            break
        proposals = []
        for _ in range(pool):
            f = free.copy()
            candidate = _swap(current, rng, f, orbits)
            proposals.append((candidate, f))
        fresh = [(c, f) for c, f in proposals if c.tobytes() not in seen] or proposals[:1]
        if cheap is not None and len(fresh) > 1:
            scores = [cheap(c) for c, _ in fresh]
            cheap_count += len(fresh)
            candidate, candidate_free = fresh[min(range(len(fresh)), key=scores.__getitem__)]
        else:
            candidate, candidate_free = fresh[0]
        key = candidate.tobytes()
        value = seen[key] if key in seen else float(objective(candidate))
        seen[key] = value
        t = temperature * (1.0 - step / max(budget, 1))
        worse = (value - current_value) / max(current_value, 1e-300)
        if worse < -_TIE or (t > 0 and rng.random() < np.exp(-max(worse, 0.0) / t)):
            current, current_value, free = candidate, value, candidate_free
            accepted += 1
        if value < best_value * (1.0 - _TIE):   # ties (to rounding) keep the seed strategy
            best, best_value = candidate.copy(), value
        history.append(best_value)
        if progress is not None:
            progress(step + 1, budget)
    return SearchResult(best, best_value, start, len(seeds) + len(history), cheap_count,
                        history, accepted, _time.perf_counter() - began,
                        improved=bool(best_value < float(seeds[start][1])))


def search_placement(model: StepModel, seeds: Mapping[str, StepScore] | None = None, *,
                     budget: int = SEARCH_BUDGET, seconds: float | None = None, seed: int = 0,
                     pool: int = 8, temperature: float = 0.02,
                     strategies: Sequence[str] | None = None,
                     progress: Callable[[int, int], None] | None = None
                     ) -> tuple[StepScore, SearchResult]:
    """Search a map for ``model``'s step, seeded with the scored fixed strategies.

    ``seeds`` (strategy -> score) default to every applicable fixed strategy of
    ``strategies`` (``random`` with ``seed``). Algorithms named ``'auto'`` are resolved
    once, for the best seed, and kept during the search. Returns the score of the best map
    (strategy ``'search'``) and the search record.
    """
    if seeds is None:
        seeds = {name: model.evaluate(place(name, model.topology, model.layout, seed=seed),
                                      strategy=name, keep_result=False)
                 for name in applicable_strategies(model.topology, model.layout, strategies)}
    if not seeds:
        raise InputError("search: no fixed strategy applies to seed the search")
    start = min(seeds, key=lambda n: (seeds[n].step_s, n))
    algorithms = seeds[start].algorithms
    # Re-score the seeds with the search's algorithms so that every value compares alike.
    values = {n: (s.placement, s.step_s if s.algorithms == algorithms else
                  model.evaluate(s.placement, algorithms, keep_result=False).step_s)
              for n, s in seeds.items()}

    # A map whose groups a phase's algorithm cannot run (NCCL's model across nodes wants
    # as many ranks on every node) is no candidate: it scores infinitely slow.
    def objective(p: np.ndarray) -> float:
        try:
            return model.step_time(p, algorithms)
        except InputError:
            return np.inf

    def cheap(p: np.ndarray):
        try:
            return model.cheap(p, algorithms)
        except InputError:
            return np.inf, np.inf

    orbits = [model.layout.group_array(d) for d in model.layout.active_dimensions()]
    found = anneal(objective, values, cheap=cheap, budget=budget, seconds=seconds, seed=seed,
                   pool=pool, temperature=temperature, orbits=orbits, progress=progress)
    score = model.evaluate(found.placement, algorithms, strategy="search")
    return score, found


def compare_strategies(model: StepModel, strategies: Sequence[str] = ALL_STRATEGIES, *,
                       seed: int = 0, budget: int = SEARCH_BUDGET, seconds: float | None = None,
                       params: Mapping[str, Any] | None = None,
                       progress: Callable[[int, int], None] | None = None,
                       unrunnable: dict[str, str] | None = None
                       ) -> tuple[list[StepScore], SearchResult | None]:
    """Score each strategy of ``strategies`` on ``model`` (those that cannot place this
    layout are skipped, and so are those whose groups a phase's algorithm cannot run: NCCL's
    model across nodes wants as many ranks on every node; ``unrunnable``, when given,
    receives why), the search last. The search is seeded with the fixed strategies
    listed (``explicit`` included), or with every applicable fixed strategy when only
    ``search`` is asked for, and passes over maps the algorithms cannot run. ``params`` go
    to the strategies (``shape``, ``path`` ...). Returns the scores in the order asked and
    the search record (None without search)."""
    unrunnable = unrunnable if unrunnable is not None else {}
    params = dict(params or {})
    params.setdefault("seed", seed)
    fixed = [s for s in strategies if s != "search"]
    if "search" in strategies and not fixed:
        fixed_seeds = applicable_strategies(model.topology, model.layout, None, **params)
    else:
        fixed_seeds = []
    usable = applicable_strategies(model.topology, model.layout, fixed, **params) \
        if fixed else []
    scores = {}
    for name in [*usable, *fixed_seeds]:
        # A bad map file is the user's error and stops the run; only the evaluation's
        # refusal (groups a phase's algorithm cannot run) skips the strategy.
        placement = place(name, model.topology, model.layout, **params)
        try:
            scores[name] = model.evaluate(placement, strategy=name)
        except InputError as err:   # its groups are ones a phase's algorithm cannot run
            unrunnable[name] = str(err)
    found = None
    if "search" in strategies:
        if not scores:
            raise InputError("search: no fixed strategy can seed the search: " + "; ".join(
                f"{k}: {v}" for k, v in unrunnable.items()) if unrunnable else
                "search: no fixed strategy applies to seed the search")
        scores["search"], found = search_placement(model, dict(scores), budget=budget,
                                                   seconds=seconds, seed=seed,
                                                   progress=progress)
    return [scores[s] for s in strategies if s in scores], found
