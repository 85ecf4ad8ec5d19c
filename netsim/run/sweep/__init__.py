"""Sweeps: a scenario's ``sweep:`` grid run point by point on any executor, resumably.

* :mod:`.points`: the ``sweep:`` mapping, its points, their seeds and storage keys;
* :mod:`.runner`: the points run on a :class:`concurrent.futures.Executor` (this process,
  local processes, a Dask cluster), each outcome stored as it arrives;
* :mod:`.table`: the outcomes as one table (rows, pandas, Parquet).
"""

from .points import MAX_POINTS, SweepSpec, apply_point, expand, point_key, point_seed
from .runner import (SerialExecutor, Sweep, SweepResult, load_sweep, run_point,
                     run_sweep_points, sweep_executor, sweep_from_dict)
from .table import columns, flat_rows, rows_to_pandas, rows_to_parquet, sweep_rows

__all__ = ["SweepSpec", "expand", "apply_point", "point_seed", "point_key", "MAX_POINTS",
           "Sweep", "SweepResult", "load_sweep", "sweep_from_dict", "run_sweep_points",
           "run_point", "SerialExecutor", "sweep_executor", "sweep_rows", "columns",
           "flat_rows", "rows_to_pandas", "rows_to_parquet"]
