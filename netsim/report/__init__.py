"""Reports: nccl-tests tables, link heatmaps, curves, timelines and HTML pages of runs.

Drawing functions import matplotlib inside their bodies only (Agg canvas, no pyplot), so
importing this package stays cheap.
"""

from .curves import draw_bars, draw_curves
from .figure import figure_format
from .heatmap import (document_difference, document_topology, document_values,
                      draw_heatmap, draw_scenario_heatmaps, heatmap_paths,
                      read_result_document, write_result_document)
from .html import write_scenario_report
from .nccl import (BUSBW_FACTOR, GB, NCCL_COLUMNS, algbw_GBps, busbw_factor, busbw_GBps,
                   format_efficiency, format_GBps, format_us)
from .placement_map import draw_placement_map
from .timeline import draw_gantt, draw_link_timeline

__all__ = ["GB", "BUSBW_FACTOR", "busbw_factor", "algbw_GBps", "busbw_GBps", "NCCL_COLUMNS",
           "format_us", "format_GBps", "format_efficiency",
           "draw_heatmap", "draw_scenario_heatmaps", "heatmap_paths", "draw_curves",
           "draw_bars", "draw_placement_map", "draw_link_timeline", "draw_gantt",
           "figure_format", "write_scenario_report", "write_result_document",
           "read_result_document", "document_values", "document_topology",
           "document_difference"]
