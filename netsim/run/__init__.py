"""The run layer: what the CLI and scenario files both call.

The collective pipeline, in the order a run takes it: :mod:`.request` (resolve: the
request checked once, the library's default, the machine's calibrated costs, the ranks'
nodes or groups, the candidates), :mod:`.placed` (build, place, simulate one algorithm;
its bounds), :mod:`.search` (the candidates simulated and the fastest kept),
:mod:`.machine` (one resolved request at one size, through the record), :mod:`.record`
(``CollectiveRun``) and :mod:`.collective` (the entry points: one size, size sweeps, and
synthesis), with :mod:`.collective_groups` (every line of a grid axis at once: the same
pipeline on a placement of several groups), :mod:`.checks` (values and memory
estimates), :mod:`.library` (what the machine's own library runs), :mod:`.models` (fluid
or packet), :mod:`.faultspec` (faults as users write them) and :mod:`.scaled_builds` (a
sweep's schedules built once). Beside it:

* :mod:`.flows`: a flow file run as it is; :mod:`.traces`: Chakra execution traces;
* :mod:`.synthesis`: synthesised collectives against the best fixed algorithm;
* :mod:`.placements` (sub-package): placements scored by simulation, the search, the study
  that ``netsim place`` and the scenario job kind both run, the NoC;
* :mod:`.scenarios` (sub-package): scenario files and their job kinds; :mod:`.sweep`
  (sub-package): a scenario's sweep grid on any executor;
* :mod:`.measured`, :mod:`.nccl_tests`, :mod:`.validate`: measured curves beside simulated
  ones, and every published measurement against the default command;
* :mod:`.record_schemas`, :mod:`.file_schemas`, :mod:`.frames`, :mod:`.plugins`: output
  and input schemas, DataFrames, plugins.

>>> from netsim.run import run_collective
>>> run = run_collective("allreduce", "ring:4,bw=1GB/s", "ring", "1MB", alpha=0.0)
>>> round(run.time_s * 1e3, 3)      # ring all-reduce: 2 (p-1)/p S / B
1.5
"""

from __future__ import annotations

import importlib

# Every public name and the module that owns it. Names load on first use (module
# ``__getattr__``), so a command pays only for the modules it touches: ``netsim flows``
# needs .flows and .models, not the placement search, the NoC or the sweeps.
_OWNERS = {
    "collective": ("CollectiveRun", "candidates_text", "requirement_text",
                   "resolve_algorithms", "run_collective", "run_sweep", "sweep_sizes"),
    "collective_groups": ("run_groups",),
    "request": ("CollectiveRequest", "axis_groups", "machine_costs", "parse_nodes",
                "resolve_request"),
    "faultspec": ("FaultSpec", "parse_fault_option", "resolve_faults"),
    "library": ("DEFAULT_ALGORITHM", "ideal_links_note", "library_of", "ran_text",
                "resolve_default"),
    "flows": ("simulate_flows",),
    "models": ("MODELS", "flow_records_with_model", "link_records_with_queues",
               "model_fields", "simulate_model", "parse_packet_option",
               "recording_timelines", "timelines_recorded"),
    "measured": ("compare_measured", "read_measured", "read_measured_run", "MeasuredRun",
                 "measured_run_options", "read_measured_runs", "measured_gpus_per_thread",
                 "measured_nccl_version"),
    # `netsim validate`: every published measurement against the default command.
    "validate": ("ValidationCase", "validation_cases", "run_validation", "summarize_validation",
                 "file_notes"),
    "placements.noc": ("ChipScore", "compare_chip_placements", "evaluate_chip"),
    "placements.evaluate": ("LinkLoads", "StepModel", "StepScore", "link_bytes_by_tag"),
    "placements.search": ("ALL_STRATEGIES", "SEARCH_BUDGET", "SearchResult", "anneal",
                         "compare_strategies", "search_placement"),
    "placements.study": ("PlacementOutcome", "PlacementStudy", "run_placement_study",
                        "strategy_names"),
    "scenarios.scenario": ("JobContext", "JobResult", "Scenario", "ScenarioResult",
                 "default_scenario_path", "load_scenario", "register_job", "run_scenario"),
    "traces": ("WorkloadRun", "collective_schedule", "run_workload", "workload_scenario"),
    # Synthesised collectives, searched against the best fixed algorithm.
    "synthesis": ("SYNTH_BUDGET_S", "SYNTH_CHUNKS", "SYNTH_OPS", "SYNTH_WAVES", "SynthRun",
              "run_schedule_file", "run_synth", "schedule_document", "synthesise"),
    # Sweeps, file schemas, DataFrames and plugins:
    # * .sweep: a scenario's ``sweep:`` grid run on any executor, resumably;
    # * .file_schemas: JSON Schemas of the files users write; .frames: results as DataFrames;
    # * .nccl_tests: collective records in nccl-tests' table layout (read by .measured);
    # * .plugins: entry-point plugins (machines, algorithms, placements, job kinds).
    "file_schemas": ("FILE_KINDS", "file_schema"),
    "record_schemas": ("RECORD_FIELDS", "record_schema"),
    "frames": ("to_pandas",),
    "nccl_tests": ("nccl_tests_table", "nccl_tests_log"),
    "plugins": ("PLUGIN_GROUPS", "PluginInfo", "load_plugins"),
    "sweep": ("Sweep", "SweepResult", "load_sweep", "rows_to_pandas", "rows_to_parquet",
              "run_sweep_points", "sweep_executor", "sweep_from_dict"),
}
_OWNER = {name: module for module, names in _OWNERS.items() for name in names}

#: Every public name, from the one table above.
__all__ = sorted(_OWNER)


def __getattr__(name: str):
    if name in _OWNER:
        module = importlib.import_module(f"{__name__}.{_OWNER[name]}")
        value = getattr(module, name)
        globals()[name] = value            # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
