"""The run layer: what the CLI and scenario files both call.

* :mod:`.collective`: one collective (or a size sweep) built, placed, simulated and bounded;
  :mod:`.collective_groups`: the same on every line of a grid axis at once, or named nodes;
* :mod:`.flows`: a flow file run as it is;
* :mod:`.placement_eval`, :mod:`.placement_search`, :mod:`.noc_eval`: placements scored by
  simulation, and the search that is never worse than its seeds; :mod:`.placement_study`
  the one description of a placement comparison that ``netsim place`` and the scenario
  job kind both run;
* :mod:`.scenario`, :mod:`.jobs` (+ ``collective_jobs``, ``placement_jobs``): scenario
  files and the job kinds they run;
* :mod:`.faultspec`: faults as users write them, resolved on a machine;
* :mod:`.measured`: measured curves laid next to simulated ones;
* :mod:`.workload`: Chakra execution traces run on a machine (job kind ``workload``).
* :mod:`.synth`: synthesised collectives against the best fixed algorithm, with fallback.

>>> run = run_collective("allreduce", "ring:4,bw=1GB/s", "ring", "1MB", alpha=0.0)
>>> round(run.time_s * 1e3, 3)      # ring all-reduce: 2 (p-1)/p S / B
1.5
"""

from .collective import (CollectiveRun, requirement_text, resolve_algorithms, run_collective,
                         run_sweep, sweep_sizes)
from .collective_groups import axis_groups, parse_nodes, run_groups
from .faultspec import FaultSpec, parse_fault_option, resolve_faults
from .flows import simulate_flows
from .models import (MODELS, flow_records_with_model, link_records_with_queues, model_fields,
                     simulate_model)
from .measured import compare_measured, read_measured
from .noc_eval import ChipScore, compare_chip_placements, evaluate_chip
from .placement_eval import LinkLoads, StepModel, StepScore, link_bytes_by_tag
from .placement_search import (ALL_STRATEGIES, SEARCH_BUDGET, SearchResult, anneal,
                               compare_strategies, search_placement)
from .placement_study import (PlacementOutcome, PlacementStudy, run_placement_study,
                              strategy_names)
from .scenario import (JobContext, JobResult, Scenario, ScenarioResult, default_scenario_path,
                       load_scenario, register_job, run_scenario)
from .workload import WorkloadRun, collective_schedule, run_workload, workload_scenario

# Synthesised collectives (issue 16).
from .synth import (SYNTH_BUDGET_S, SYNTH_CHUNKS, SYNTH_OPS, SYNTH_WAVES,  # noqa: E402
                    SynthRun, run_schedule_file, run_synth, schedule_document, synthesise)

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
    "PlacementStudy", "PlacementOutcome", "run_placement_study", "strategy_names",
    "axis_groups", "parse_nodes", "run_groups",
    "WorkloadRun", "run_workload", "collective_schedule", "workload_scenario",
]
__all__ += ["SynthRun", "run_synth", "synthesise", "schedule_document", "run_schedule_file",
            "SYNTH_CHUNKS", "SYNTH_WAVES", "SYNTH_OPS", "SYNTH_BUDGET_S"]


# Sweeps, file schemas, DataFrames and plugins (issue 14):
# * .sweep: a scenario's ``sweep:`` grid run on any executor, resumably;
# * .file_schemas: JSON Schemas of the files users write; .frames: results as DataFrames;
# * .nccl_tests: collective records in nccl-tests' table layout (read by .measured);
# * .plugins: entry-point plugins (machines, algorithms, placements, job kinds).
from .file_schemas import FILE_KINDS, file_schema  # noqa: E402
from .frames import to_pandas  # noqa: E402
from .nccl_tests import nccl_tests_table  # noqa: E402
from .plugins import GROUPS as PLUGIN_GROUPS, PluginInfo, load_plugins  # noqa: E402
from .sweep import (Sweep, SweepResult, load_sweep, rows_to_pandas,  # noqa: E402
                    rows_to_parquet, run_sweep_points, sweep_executor, sweep_from_dict)

__all__ += [
    "Sweep", "SweepResult", "load_sweep", "sweep_from_dict", "run_sweep_points",
    "sweep_executor", "rows_to_pandas", "rows_to_parquet", "file_schema", "FILE_KINDS",
    "to_pandas", "load_plugins", "PluginInfo", "PLUGIN_GROUPS", "nccl_tests_table",
]

__all__ += ["MODELS", "simulate_model", "model_fields", "flow_records_with_model",
            "link_records_with_queues"]
__all__ += ["parse_packet_option"]   # --packet (issue 17)
from .models import parse_packet_option  # noqa: E402
