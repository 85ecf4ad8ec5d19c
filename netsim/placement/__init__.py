"""Placement: which chip runs which rank of a parallel job, and how much it matters.

* :mod:`.layout`: parallel layouts (tp, cp, ep, dp, pp) and their groups of ranks;
* :mod:`.workload`: a step as phases of collectives run by every group at once;
  transformer-derived sizes;
* :mod:`.strategies`: rank -> chip maps as pure functions of (topology, layout);
* :mod:`.noc`: the same question inside a chip: operators on a Tensix-like core grid.

Scoring maps by simulating the step, and the seeded search that is never worse than the
best fixed strategy, are clients of the engine and live one layer up, in :mod:`netsim.run`.

>>> from netsim.topology import parse_topology
>>> topo = parse_topology("mesh:2x4,bw=10GB/s")
>>> layout = ParallelLayout(tp=4, dp=2)
>>> from netsim.run import StepModel
>>> model = StepModel(topo, layout, bytes_workload(tp_bytes=4e6))
>>> rows = model.evaluate(place("row_major", topo, layout)).step_s
>>> strided = model.evaluate(place("interleaved", topo, layout)).step_s
>>> round(rows * 1e3, 3), round(strided * 1e3, 3)   # 2 (p-1)/p S / B, then twice that
(0.6, 1.2)
"""

from .layout import DEFAULT_ORDER, DIMENSIONS, ParallelLayout, parse_layout
from .noc import (CHIP_STRATEGIES, NOC_POLICIES, ChipLayout, NocRouter, Operator, chain,
                  place_operators, tensix_grid, transfer_schedule)
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
    "tensix_grid", "NocRouter", "NOC_POLICIES", "Operator", "chain", "ChipLayout",
    "CHIP_STRATEGIES", "place_operators", "transfer_schedule",
]
