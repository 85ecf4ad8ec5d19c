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
* :mod:`.library`: the default algorithm, what the machine's own library runs;
* :mod:`.measured`: measured curves laid next to simulated ones; :mod:`.validate`: every
  published measurement against the command a user would type (``netsim validate``);
* :mod:`.workload`: Chakra execution traces run on a machine (job kind ``workload``).
* :mod:`.synth`: synthesised collectives against the best fixed algorithm, with fallback.

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
    "collective_groups": ("axis_groups", "parse_nodes", "run_groups"),
    "faultspec": ("FaultSpec", "parse_fault_option", "resolve_faults"),
    "library": ("DEFAULT_ALGORITHM", "ideal_links_note", "library_of", "ran_text",
                "resolve_default"),
    "flows": ("simulate_flows",),
    "models": ("MODELS", "flow_records_with_model", "link_records_with_queues",
               "model_fields", "simulate_model", "parse_packet_option",
               "recording_timelines", "timelines_recorded"),
    "measured": ("compare_measured", "read_measured", "read_measured_run", "MeasuredRun",
                 "measured_run_options", "read_measured_runs", "measured_gpus_per_thread"),
    # `netsim validate`: every published measurement against the default command.
    "validate": ("ValidationCase", "validation_cases", "run_validation", "summarize_validation"),
    "noc_eval": ("ChipScore", "compare_chip_placements", "evaluate_chip"),
    "placement_eval": ("LinkLoads", "StepModel", "StepScore", "link_bytes_by_tag"),
    "placement_search": ("ALL_STRATEGIES", "SEARCH_BUDGET", "SearchResult", "anneal",
                         "compare_strategies", "search_placement"),
    "placement_study": ("PlacementOutcome", "PlacementStudy", "run_placement_study",
                        "strategy_names"),
    "scenario": ("JobContext", "JobResult", "Scenario", "ScenarioResult",
                 "default_scenario_path", "load_scenario", "register_job", "run_scenario"),
    "workload": ("WorkloadRun", "collective_schedule", "run_workload", "workload_scenario"),
    # Synthesised collectives, searched against the best fixed algorithm.
    "synth": ("SYNTH_BUDGET_S", "SYNTH_CHUNKS", "SYNTH_OPS", "SYNTH_WAVES", "SynthRun",
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
