"""Placement: which chip runs which rank of a parallel job, and how much it matters.

* :mod:`.layout`: parallel layouts (tp, cp, ep, dp, pp) and their groups of ranks;
* :mod:`.workload`: a step as phases of collectives run by every group at once;
  transformer-derived sizes;
* :mod:`.strategies`: rank -> chip maps as pure functions of (topology, layout);
* :mod:`.evaluate` and :mod:`.search`: scoring maps by simulating the step, and a seeded
  simulated-annealing search that is never worse than the best fixed strategy (clients of
  the engine, one layer above it);
* :mod:`.noc`: the same question inside a chip: operators on a Tensix-like core grid.

>>> from netsim.topology import parse_topology
>>> topo = parse_topology("mesh:2x4,bw=10GB/s")
>>> layout = ParallelLayout(tp=4, dp=2)
>>> model = StepModel(topo, layout, bytes_workload(tp_bytes=4e6))
>>> rows = model.evaluate(place("row_major", topo, layout)).step_s
>>> strided = model.evaluate(place("interleaved", topo, layout)).step_s
>>> round(rows * 1e3, 3), round(strided * 1e3, 3)   # 2 (p-1)/p S / B, then twice that
(0.6, 1.2)
"""

from .evaluate import LinkLoads, StepModel, StepScore, link_bytes_by_tag
from .layout import DEFAULT_ORDER, DIMENSIONS, ParallelLayout, parse_layout
from .noc import (CHIP_STRATEGIES, NOC_POLICIES, ChipLayout, ChipScore, NocRouter, Operator,
                  chain, compare_chip_placements, evaluate_chip, place_operators,
                  tensix_grid, transfer_schedule)
from .search import ALL_STRATEGIES, SearchResult, anneal, compare_strategies, search_placement
from .strategies import (FIXED_STRATEGIES, STRATEGIES, GridView, applicable_strategies,
                         check_placement, grid_view, load_explicit, place, register_strategy,
                         why_not)
from .workload import (PHASE_OPS, Phase, StepSchedule, Transformer, Workload, build_step,
                       bytes_workload, phase_schedule)

__all__ = [
    "DIMENSIONS", "DEFAULT_ORDER", "ParallelLayout", "parse_layout",
    "Phase", "Workload", "Transformer", "PHASE_OPS", "StepSchedule", "bytes_workload",
    "build_step", "phase_schedule",
    "STRATEGIES", "FIXED_STRATEGIES", "GridView", "grid_view", "place", "why_not",
    "applicable_strategies", "register_strategy", "load_explicit", "check_placement",
    "StepModel", "StepScore", "LinkLoads", "link_bytes_by_tag",
    "ALL_STRATEGIES", "SearchResult", "anneal", "search_placement", "compare_strategies",
    "tensix_grid", "NocRouter", "NOC_POLICIES", "Operator", "chain", "ChipLayout",
    "CHIP_STRATEGIES", "place_operators", "transfer_schedule", "ChipScore", "evaluate_chip",
    "compare_chip_placements",
]
