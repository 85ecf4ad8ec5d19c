"""Reports: nccl-tests tables, link heatmaps, curves, timelines and HTML pages of runs.

Drawing functions import matplotlib inside their bodies only (Agg canvas, no pyplot), so
importing this package stays cheap.
"""

from __future__ import annotations

import importlib

# Every public name and the module that owns it, loaded on first use (module
# ``__getattr__``): writing a flow result needs .flowresult, not the figures and pages.
_OWNERS = {
    "curves": ("draw_bars", "draw_curves"),
    "figure": ("figure_format", "save_figure"),
    "flowresult": ("RESULT_SUFFIXES", "flow_records_fast", "flow_result_columns", "json_bytes",
                   "write_flow_result", "flow_result_csv"),
    "heatmap": ("document_difference", "document_topology", "document_values", "draw_heatmap",
                "draw_phase_heatmaps", "draw_scenario_heatmaps", "draw_time_heatmaps",
                "draw_window_heatmaps", "heatmap_paths", "read_result_document",
                "write_result_document", "labelled_paths"),
    "html": ("write_scenario_report",),
    "interactive": ("interactive_report", "write_interactive_report"),
    "nccl": ("BUSBW_FACTOR", "GB", "NCCL_COLUMNS", "algbw_GBps", "busbw_factor", "busbw_GBps",
             "format_efficiency", "format_GBps", "format_us"),
    "placement_map": ("draw_placement_map",),
    "timeline": ("draw_gantt", "draw_link_timeline"),
    "windows": ("link_windows",),
}
_OWNER = {name: module for module, names in _OWNERS.items() for name in names}

__all__ = ["GB", "BUSBW_FACTOR", "busbw_factor", "algbw_GBps", "busbw_GBps", "NCCL_COLUMNS",
           "format_us", "format_GBps", "format_efficiency",
           "draw_heatmap", "draw_phase_heatmaps", "draw_scenario_heatmaps", "heatmap_paths",
           "draw_time_heatmaps", "draw_window_heatmaps", "link_windows",
           "draw_curves",
           "draw_bars", "draw_placement_map", "draw_link_timeline", "draw_gantt",
           "figure_format", "save_figure", "write_scenario_report", "write_result_document",
           "interactive_report", "write_interactive_report",
           "read_result_document", "document_values", "document_topology",
           "document_difference", "labelled_paths",
           "RESULT_SUFFIXES", "json_bytes", "flow_result_columns", "flow_records_fast",
           "write_flow_result", "flow_result_csv"]


def __getattr__(name: str):
    if name in _OWNER:
        value = getattr(importlib.import_module(f"{__name__}.{_OWNER[name]}"), name)
        globals()[name] = value            # later look-ups skip this function
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
