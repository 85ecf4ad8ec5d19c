"""Reports: nccl-tests style figures and tables of collective runs.

Plots live in their own modules and import matplotlib inside their functions only.
"""

from .nccl import (BUSBW_FACTOR, GB, NCCL_COLUMNS, algbw_GBps, busbw_factor, busbw_GBps,
                   format_efficiency, format_GBps, format_us)

__all__ = ["GB", "BUSBW_FACTOR", "busbw_factor", "algbw_GBps", "busbw_GBps", "NCCL_COLUMNS",
           "format_us", "format_GBps", "format_efficiency"]
