"""What each command's records hold: every field's type, unit and meaning, as JSON Schema.

A command's JSON is one envelope, ``{"netsim", "command", ...context, "records": [...]}``
(:func:`netsim.cli.options.envelope`); CSV and Parquet hold the same records as rows.
:data:`RECORD_FIELDS` names every field a record of ``coll``, ``compare``, ``flows``,
``topo``, ``place`` and ``validate`` can carry (some only in some runs: ``candidates``
for ``auto``, the NCCL model's choice for ``nccl``, ``faults`` with faults, the packet
model's figures with ``--model both``), with its unit; :func:`record_schema` turns them
into the JSON Schema that ``netsim schema coll`` prints and the tests hold every
command's output against. Units are in the names where a field has one: ``_s``
(seconds), ``_bytes``, ``_GBps`` (1e9 B/s), ``_Bps`` (B/s), ``_pct`` (percent).

>>> schema = record_schema("coll")
>>> schema["properties"]["records"]["items"]["properties"]["busbw_GBps"]["description"]
'bus bandwidth as nccl-tests defines it for the op (GB/s, 1e9 B/s)'
>>> sorted(RECORD_FIELDS)
['coll', 'compare', 'flows', 'place', 'topo', 'validate']
"""

from __future__ import annotations

from typing import Any

__all__ = ["RECORD_FIELDS", "CONTEXT_FIELDS", "record_schema"]

_NUM = "number"
_INT = "integer"
_STR = "string"
_BOOL = "boolean"


def _f(kind, description: str, *, null: bool = False) -> dict[str, Any]:
    types = [kind] if isinstance(kind, str) else list(kind)
    return {"type": types + ["null"] if null else types, "description": description}


# -- coll (and the runs of scenarios, sweeps and compare) ------------------------------

_RUN = {
    "op": _f(_STR, "collective: allreduce, allgather, reducescatter, alltoall, broadcast, "
                   "reduce"),
    "algorithm": _f(_STR, "the algorithm that ran (for auto: the fastest; a schedule "
                          "file's name for a file)"),
    "topology": _f(_STR, "the machine's name"),
    "ranks": _f(_INT, "ranks taking part (for --axis: one group's)"),
    "size_bytes": _f([_INT, _NUM], "message size as nccl-tests defines it for the op "
                                   "(bytes; an integer where whole)"),
    "time_s": _f(_NUM, "simulated time of the collective (s)"),
    "algbw_GBps": _f(_NUM, "algorithm bandwidth, size over time (GB/s, 1e9 B/s)", null=True),
    "busbw_GBps": _f(_NUM, "bus bandwidth as nccl-tests defines it for the op (GB/s, "
                           "1e9 B/s)", null=True),
    "bound_s": _f(_NUM, "lower bound of the algorithm that ran on the links its run "
                        "could use (s)"),
    "bound": _f(_STR, "what sets that bound (injection, latency, reduction, ...)"),
    "bound_detail": _f(_STR, "the bound's arithmetic, in words"),
    "efficiency": _f(_NUM, "bound_s / time_s (ratio, 0..1)", null=True),
    "machine_bound_s": _f(_NUM, "lower bound of any algorithm on the links these ranks "
                                "can use (s)", null=True),
    "machine_bound": _f(_STR, "what sets the machine's bound", null=True),
    "machine_bound_detail": _f(_STR, "the machine bound's arithmetic, in words", null=True),
    "machine_efficiency": _f(_NUM, "machine_bound_s / time_s (ratio, 0..1)", null=True),
    "max_link_util": _f(_NUM, "busiest link's bytes over its capacity times the run's "
                              "time (ratio, 0..1)"),
    "events": _f(_INT, "events the engine processed"),
    "flows": _f(_INT, "flows simulated (sends, split over parallel paths)"),
    "candidates": {"type": "array", "description": "auto: every candidate, simulated "
                   "ones fastest first ({algorithm, time_s}), then those skipped by their "
                   "lower bound ({algorithm, bound_s}); times in s",
                   "items": {"type": "object", "additionalProperties": False,
                             "required": ["algorithm"],
                             "properties": {"algorithm": {"type": "string"},
                                            "time_s": {"type": "number"},
                                            "bound_s": {"type": "number"}}}},
    "overhead_s": _f(_NUM, "per-message overhead the run paid (s): --alpha or the machine's "
                           "calibration, or the algorithm's own where it sets one (NCCL's "
                           "protocol step latency)"),
    "engine": {"type": "object", "description": "what the engine ran: loop, solver, "
               "symmetry (classes found, flows simulated, reduction factor), tolerance "
               "(netsim.engine.config.choose_path); loop 'packet' for the packet model"},
    "library": _f(_STR, "the machine's own library that --algo default ran (with how it "
                        "was launched)"),
    "ideal_links": _f(_BOOL, "true when the links are ideal: no latency, no per-message "
                             "cost (generic specs without lat= and alpha=)"),
    # NCCL's model (--algo nccl, or the default on NVIDIA presets)
    "nccl": _f(_STR, "NCCL's choice, algorithm/protocol/channels (ring/LL/12ch)"),
    "nccl_algorithm": _f(_STR, "NCCL's algorithm: ring, tree, nvls, ..."),
    "protocol": _f(_STR, "NCCL's protocol: LL, LL128, Simple"),
    "channels": _f(_INT, "NCCL's channel count"),
    "nccl_model_s": _f(_NUM, "NCCL's own cost model's time for its choice (s)"),
    "nccl_version": _f(_STR, "the NCCL release whose tuner picked (2.30.7 unless a log or "
                             "--nccl VERSION= says)"),
    "gpus_per_thread": _f(_INT, "GPUs one host thread drives (nccl-tests -g)"),
    "host_s": _f(_NUM, "host launch floor the run pays (s)"),
    # tt-metal's CCLs (the default on Tenstorrent presets)
    "tt_metal": _f(_STR, "tt-metal's choice: ring or line, and the links it uses"),
    # faults
    "faults": _f(_STR, "faults applied ('fail 0_0->0_1; degrade ...')"),
    "rerouted": _f(_INT, "flows moved off failed links"),
    # --axis / --nodes groups
    "groups": _f(_INT, "groups run at once"),
    "slowest_group": _f(_STR, "the slowest group's label (first..last node)"),
    "group_times": _f(_STR, "every group's time, 'label=time,...'"),
    # --model packet|both
    "packet_time_s": _f(_NUM, "the packet model's time (s)"),
    "makespan_error": _f(_NUM, "fluid time over packet time, less 1 (ratio)"),
    "op_error_mean": _f(_NUM, "mean over ops of the fluid finish time's relative error "
                              "against the packet model's (ratio)"),
    "op_error_max": _f(_NUM, "largest such error over ops (ratio)"),
    "model": _f(_STR, "the model that gave time_s: fluid or packet"),
    "tolerance": _f(_NUM, "the approximate engine's relative window (0: exact)"),
    # --measured
    "measured_time_s": _f(_NUM, "the measurement's time at this size (s)", null=True),
    "measured_busbw_GBps": _f(_NUM, "the measurement's bus bandwidth (GB/s)", null=True),
    "error_pct": _f(_NUM, "simulated over measured time, less 1 (percent)", null=True),
}

_COMPARE = {k: v for k, v in _RUN.items() if k not in ("bound_detail",
                                                       "machine_bound_detail")}
_COMPARE.update({
    "requested": _f(_STR, "the machine as the user named it (spec string or preset)"),
    "links": _f(_INT, "directed links of the machine"),
    "switches": _f(_INT, "switches of the machine"),
})

_FLOWS = {
    "id": _f([_STR, _INT], "the flow's id as the file gives it (its row otherwise)"),
    "start_s": _f(_NUM, "time the flow started draining (s)"),
    "finish_s": _f(_NUM, "time its last byte arrived (s)"),
    "packet_finish_s": _f(_NUM, "the packet model's finish time (s; --model both)"),
    "error": _f(_NUM, "fluid finish over packet finish, less 1 (ratio; --model both)"),
}

_TOPO = {
    "name": _f(_STR, "the machine's name"),
    "family": _f(_STR, "generator family (mesh, torus, nvswitch, fattree, custom, ...)"),
    "endpoints": _f(_INT, "endpoints (chips, GPUs, hosts)"),
    "switches": _f(_INT, "switches of the machine"),
    "links": _f(_INT, "directed links (a cable is two)"),
    "cables": _f(_INT, "pairs of opposite links"),
    "one_way_links": _f(_INT, "links with no opposite"),
    "diameter": _f(_INT, "longest shortest path between endpoints (hops)", null=True),
    "min_link_bandwidth_Bps": _f(_NUM, "slowest link (B/s)", null=True),
    "max_link_bandwidth_Bps": _f(_NUM, "fastest link (B/s)", null=True),
    "injection_bandwidth_Bps": _f(_NUM, "largest total outgoing bandwidth of an endpoint "
                                    "(B/s)"),
    "injection_bandwidth_min_Bps": _f(_NUM, "smallest total outgoing bandwidth of an "
                                        "endpoint (B/s)"),
    "bisection_bandwidth_Bps": _f(_NUM, "bandwidth across the worst even cut of the "
                                    "endpoints (B/s, one direction)", null=True),
    "bisection_method": _f(_STR, "how the bisection was found (closed form, exact "
                                 "search, heuristic)"),
}

_PLACE = {
    "strategy": _f(_STR, "placement strategy (row_major, snake, search, ...)"),
    "step_s": _f(_NUM, "simulated time of one step (s)"),
    "max_link_util": _f(_NUM, "busiest link's utilisation over the step (ratio)"),
    "mean_link_util": _f(_NUM, "mean link utilisation over the step (ratio)"),
    "hop_bytes": _f(_NUM, "bytes times links crossed, summed over sends (B x hops)"),
    "link_bound_s": _f(_NUM, "busiest link's bytes over its capacity (s)"),
    "vs_row_major_pct": _f(_NUM, "step time against row_major's, less 1 (percent)",
                           null=True),
    "algorithms": _f(_STR, "the algorithm of each phase"),
    "engine": {"type": "object", "description": "what the engine ran for this strategy's "
               "step: loop, solver, symmetry, tolerance (netsim.engine.config.choose_path)"},
}
#: ``place`` also has one ``PHASE_s`` field per phase of the workload (its time, s).
_PLACE_PATTERN = {"^.+_s$": _f(_NUM, "one phase's time within the step (s)")}

_VALIDATE = {
    "family": _f(_STR, "machine family of the measurement (its preset)"),
    "file": _f(_STR, "the measurement file in benchmarks/data/ (or the one given)"),
    "command": _f(_STR, "the default command a user would type for it"),
    "size_bytes": _f([_INT, _NUM], "message size (bytes, nccl-tests meaning)"),
    "measured_time_s": _f(_NUM, "measured time (s)"),
    "time_s": _f(_NUM, "simulated time with the default command (s)"),
    "error_pct": _f(_NUM, "simulated over measured time, less 1 (percent)"),
    "within": _f(_BOOL, "within the tolerance: 15% from 1 MiB up, 30% below"),
    "counted": _f(_BOOL, "counted in the family summary (files marked summary=no are not)"),
    "ran": _f(_STR, "what ran at this size (nccl ring/LL/12ch, tt_metal ring/1 link)"),
    "note": _f(_STR, "the file's '# note:' lines: why it differs for a reason outside the "
                     "model", null=True),
}

#: Every command's record fields: name -> JSON Schema of the value, with its description.
RECORD_FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "coll": _RUN, "compare": _COMPARE, "flows": _FLOWS, "topo": _TOPO, "place": _PLACE,
    "validate": _VALIDATE}

#: Context fields of each command's envelope beside ``netsim``, ``command``, ``records``.
CONTEXT_FIELDS: dict[str, dict[str, dict[str, Any]]] = {
    "coll": {}, "topo": {},
    "compare": {"op": _f(_STR, "the collective"),
                "title": _f(_STR, "the comparison's title"),
                "normalize": _f(_STR, "what the machines were normalised to", null=True),
                "injection_Bps": _f(_NUM, "the common injection bandwidth (B/s)",
                                    null=True)},
    "flows": {"makespan": _f(_NUM, "time the last flow finished (s)"),
              "engine": {"type": "object", "description": "what the engine ran (loop, "
                         "solver, symmetry, tolerance)"},
              "events": _f(_INT, "events the engine processed"),
              "model": _f(_STR, "the model that gave the times (fluid, packet, both)"),
              "model_error": {"type": "object", "description": "--model both: the fluid "
                              "makespan's and finish times' error against the packet "
                              "model's (ratios)"},
              "links": {"type": "array", "description": "per link: id, src, dst, bytes "
                        "(B), bandwidth_Bps, utilization (ratio), busy_s, peak_flows; with "
                        "the packet model queue_peak and queue_mean (packets)"}},
    "place": {"topology": _f(_STR, "the machine"),
              "layout": {"type": "object", "description": "parallel degrees: tp, cp, ep, "
                         "dp, pp"},
              "order": {"type": "array", "description": "rank order of the dimensions"},
              "phases": {"type": "array", "description": "the step's phases: name, dim, "
                         "op, bytes (B), repeat"},
              "overlap": _f(_BOOL, "whether the phases overlap"),
              "placements": {"type": "object", "description": "strategy -> the node of "
                             "every rank"},
              "search": {"type": "object", "description": "the search's start, "
                         "evaluations and whether it improved"}},
    "validate": {"directory": _f(_STR, "folder of the measurements"),
                 "summary": {"type": "array", "description": "per family: files, sizes, "
                             "median_abs_error_pct, worst_error_pct, worst_at, within_pct, "
                             "within_large_pct, within_small_pct, left_out"},
                 "notes": {"type": "array", "description": "per file with a note or kept "
                           "out of the summary: file, family, sizes, outside (sizes outside "
                           "tolerance), counted, note"}},
}


def record_schema(command: str) -> dict[str, Any]:
    """The JSON Schema of ``netsim COMMAND --format json`` output: the envelope, its
    context fields and its records (every field named, with unit and meaning; no other)."""
    from ..errors import unknown_name

    if command not in RECORD_FIELDS:
        raise unknown_name("command with records", command, RECORD_FIELDS)
    item: dict[str, Any] = {"type": "object", "properties": RECORD_FIELDS[command],
                            "additionalProperties": False}
    if command == "place":
        item["patternProperties"] = _PLACE_PATTERN
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"netsim {command} output",
        "type": "object",
        "required": ["netsim", "command", "records"],
        "additionalProperties": False,
        "properties": {"netsim": {"type": "string", "description": "netsim's version"},
                       "command": {"const": command},
                       **CONTEXT_FIELDS[command],
                       "records": {"type": "array", "items": item}},
    }
