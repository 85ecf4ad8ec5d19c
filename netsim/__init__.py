"""netsim: a flow-level simulator of interconnect topologies and collective communication.

The public API is the names below (and each package's ``__all__``). They load on first
use, so ``import netsim`` (and every CLI command) pays only for what it touches.

>>> import netsim
>>> topo = netsim.parse_topology("ring:4,bw=1GB/s")
>>> run = netsim.run_collective("allreduce", topo, "ring", 1e6, alpha=0.0)
>>> round(run.time_s * 1e3, 3)             # 2 (p-1)/p S / B
1.5
>>> b = netsim.ScheduleBuilder(2); _ = b.send(0, 1, 1e9)
>>> netsim.simulate(netsim.ring(2, bandwidth=1e9), b.build()).makespan
1.0
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: Public name -> the package that owns it.
_API = {
    "netsim.topology": ("Topology", "TopologyBuilder", "ring", "mesh", "torus", "fat_tree",
                        "leaf_spine", "nvswitch", "full_mesh", "parse_topology",
                        "register_family", "summarize", "preset_names", "load_topology_file"),
    "netsim.routing": ("route", "Routes", "default_router"),
    "netsim.schedule": ("Schedule", "ScheduleBuilder", "concurrent", "sequential",
                        "load_schedule", "save_schedule", "load_flow_file", "make_pattern"),
    "netsim.algorithms": ("OPS", "AlgoOptions", "Algorithm", "register", "get_algorithm",
                          "algorithms_for", "build_schedule", "verify"),
    "netsim.placement": ("ParallelLayout", "place", "applicable_strategies",
                         "register_strategy", "bytes_workload", "Workload", "Transformer"),
    "netsim.engine": ("simulate", "Result", "Fault", "fail_links", "degrade_links",
                      "fail_nodes", "max_min_rates"),
    "netsim.run": ("run_collective", "run_sweep", "CollectiveRun", "simulate_flows",
                   "StepModel", "search_placement", "compare_strategies", "load_scenario",
                   "run_scenario"),
    "netsim.report": ("draw_heatmap", "draw_curves", "draw_bars", "draw_placement_map",
                      "draw_link_timeline", "draw_gantt"),
    "netsim.units": ("parse_size", "parse_rate", "parse_time", "format_size", "format_rate",
                     "format_time"),
    "netsim.errors": ("NetsimError", "InputError"),
}
_OWNER = {name: module for module, names in _API.items() for name in names}

__all__ = ["__version__", *_OWNER]


def __getattr__(name: str):
    if name in _OWNER:
        value = getattr(importlib.import_module(_OWNER[name]), name)
        globals()[name] = value            # later look-ups skip this function
        return value
    raise AttributeError(f"module 'netsim' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
