"""The run layer: what the CLI and scenario files both call.

* :mod:`.collective`: one collective (or a size sweep) built, placed, simulated and bounded;
* :mod:`.flows`: a flow file run as it is;
* :mod:`.placement_eval`, :mod:`.placement_search`, :mod:`.noc_eval`: placements scored by
  simulation, and the search that is never worse than its seeds;
* :mod:`.scenario`, :mod:`.jobs` (+ ``collective_jobs``, ``placement_jobs``): scenario
  files and the job kinds they run;
* :mod:`.faultspec`: faults as users write them, resolved on a machine;
* :mod:`.measured`: measured curves laid next to simulated ones;
* :mod:`.sweep`: a scenario's ``sweep:`` grid run on any executor, resumably;
* :mod:`.plugins`: entry-point plugins (machines, algorithms, placements, job kinds);
* :mod:`.frames`, :mod:`.file_schemas`: results as DataFrames; JSON Schemas of input files.

>>> run = run_collective("allreduce", "ring:4,bw=1GB/s", "ring", "1MB", alpha=0.0)
>>> round(run.time_s * 1e3, 3)      # ring all-reduce: 2 (p-1)/p S / B
1.5
"""

from .collective import (CollectiveRun, requirement_text, resolve_algorithms, run_collective,
                         run_sweep, sweep_sizes)
from .faultspec import FaultSpec, parse_fault_option, resolve_faults
from .file_schemas import FILE_KINDS, file_schema
from .flows import simulate_flows
from .frames import to_pandas
from .plugins import GROUPS as PLUGIN_GROUPS, PluginInfo, load_plugins
from .measured import compare_measured, read_measured
from .noc_eval import ChipScore, compare_chip_placements, evaluate_chip
from .placement_eval import LinkLoads, StepModel, StepScore, link_bytes_by_tag
from .placement_search import (ALL_STRATEGIES, SEARCH_BUDGET, SearchResult, anneal,
                               compare_strategies, search_placement)
from .scenario import (JobContext, JobResult, Scenario, ScenarioResult, default_scenario_path,
                       load_scenario, register_job, run_scenario)
from .sweep import (Sweep, SweepResult, load_sweep, rows_to_pandas, rows_to_parquet,
                    run_sweep_points, sweep_executor, sweep_from_dict)

__all__ = [
    "CollectiveRun", "run_collective", "run_sweep", "sweep_sizes", "resolve_algorithms",
    "requirement_text", "simulate_flows",
    "FaultSpec", "parse_fault_option", "resolve_faults", "read_measured", "compare_measured",
    "StepModel", "StepScore", "LinkLoads", "link_bytes_by_tag",
    "ALL_STRATEGIES", "SEARCH_BUDGET", "SearchResult", "anneal", "search_placement",
    "compare_strategies",
    "ChipScore", "evaluate_chip", "compare_chip_placements",
    "Scenario", "ScenarioResult", "load_scenario", "run_scenario", "register_job",
    "default_scenario_path", "JobContext", "JobResult",
    "Sweep", "SweepResult", "load_sweep", "sweep_from_dict", "run_sweep_points",
    "sweep_executor", "rows_to_pandas", "rows_to_parquet", "file_schema", "FILE_KINDS",
    "to_pandas", "load_plugins", "PluginInfo", "PLUGIN_GROUPS",
]
