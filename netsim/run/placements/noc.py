"""Scoring operator placements on a chip's NoC by simulation, and searching for better ones."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ...engine import route_schedule, simulate
from ...errors import InputError
from ...placement.noc import (CHIP_STRATEGIES, NocRouter, Operator, place_operators,
                             transfer_schedule)
from ...schedule import Schedule
from ...topology import Topology
from .search import SEARCH_BUDGET, anneal

__all__ = ["ChipScore", "evaluate_chip", "compare_chip_placements"]


@dataclass(eq=False)
class ChipScore:
    """A chip placement's transfer time (s), NoC link load and hop-bytes."""

    strategy: str
    time_s: float
    max_util: float
    mean_util: float
    max_link_bytes: float
    hop_bytes: float
    placement: np.ndarray
    edge_s: dict[str, float]
    link_util: np.ndarray | None = None
    result: Any = field(default=None, repr=False)

    def record(self, reference: float | None = None) -> dict[str, Any]:
        row = {"strategy": self.strategy, "time_s": self.time_s,
               "max_link_util": self.max_util, "mean_link_util": self.mean_util,
               "max_link_bytes": self.max_link_bytes, "hop_bytes": self.hop_bytes}
        if reference:
            row["vs_adjacent_pct"] = 100.0 * (self.time_s / reference - 1.0)
        if self.result is not None and "engine" in self.result.meta:
            row["engine"] = self.result.meta["engine"]
        return row


def evaluate_chip(topo: Topology, schedule: Schedule, placement: np.ndarray,
                  router: NocRouter, strategy: str = "", *, engine=None) -> ChipScore:
    """Simulate the transfers with rank r on core ``placement[r]`` (``engine``: the
    engine's :class:`~netsim.engine.config.EngineConfig`, None: its defaults)."""
    result = simulate(topo, schedule, placement, router=router, config=engine)
    edge_s = {}
    for tag in schedule.tags:
        release, finish = result.tag_span(tag)
        edge_s[tag] = finish - release
    util = result.link_utilization
    return ChipScore(strategy, float(result.makespan), float(util.max()), float(util.mean()),
                     float(result.link_bytes.max()), float(result.link_bytes.sum()),
                     np.asarray(placement, np.int64), edge_s, util, result)


def compare_chip_placements(topo: Topology, ops: Sequence[Operator],
                            strategies: Sequence[str] = (*CHIP_STRATEGIES, "search"), *,
                            policy: str = "shortest", pipelined: bool = True, seed: int = 0,
                            budget: int = SEARCH_BUDGET, seconds: float | None = None,
                            engine=None) -> list[ChipScore]:
    """Score each chip strategy (the search seeded with every fixed one, cores free to
    move anywhere on the grid, never worse than the best seed); ``engine`` is the
    engine's :class:`~netsim.engine.config.EngineConfig` (None: its defaults)."""
    router = NocRouter(policy)
    schedule = transfer_schedule(ops, pipelined)
    scores = {}
    wanted_fixed = [s for s in strategies if s != "search"]
    seeds_needed = CHIP_STRATEGIES if "search" in strategies else ()
    for name in dict.fromkeys([*wanted_fixed, *seeds_needed]):
        try:
            placement = place_operators(name, topo, ops, seed)
        except InputError:
            if name in wanted_fixed:
                raise
            continue
        scores[name] = evaluate_chip(topo, schedule, placement, router, name, engine=engine)
    out = [scores[s] for s in wanted_fixed]
    if "search" in strategies:
        sent = schedule.nbytes[schedule.kind == 0]

        def objective(p):
            return simulate(topo, schedule, p, router=router, config=engine).makespan

        def cheap(p):   # (busiest link's bytes, hop-bytes), from the routes alone
            loads = route_schedule(topo, schedule, p, router).link_bytes(sent)
            return float(loads.max()), float(loads.sum())

        seeds = {n: (s.placement, s.time_s) for n, s in scores.items()}
        found = anneal(objective, seeds, cheap=cheap, nodes=np.asarray(topo.endpoints),
                       budget=budget, seconds=seconds, seed=seed)
        out.append(evaluate_chip(topo, schedule, found.placement, router, "search",
                                 engine=engine))
    return out

