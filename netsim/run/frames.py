"""Results of the run layer as pandas DataFrames, for notebooks and data tools.

:func:`to_pandas` takes what the run layer returns and gives one row per record:
collective runs (one row per run, the columns of ``CollectiveRun.record()``), placement
studies (one row per strategy, ``StepScore.record()``), a search's history, scenario and
sweep results, or a list of dicts; an engine :class:`~netsim.engine.Result` gives one row
per link (or per op with ``kind="ops"``). Needs ``netsim[parquet]``.

>>> from netsim.run import run_sweep
>>> runs = run_sweep("allreduce", "ring:4,bw=1GB/s", "ring", [1e6, 2e6], alpha=0.0)
>>> frame = to_pandas(runs)
>>> list(frame["time_s"] * 1e3)           # 2 (p-1)/p S / B
[1.5, 3.0]
"""

from __future__ import annotations

from typing import Any

from ..engine import Result
from .sweep import rows_to_pandas

__all__ = ["to_pandas"]


def _rows(obj: Any) -> list[dict[str, Any]]:
    from .collective import CollectiveRun
    from .placement_eval import StepScore
    from .placement_search import SearchResult
    from .scenario import ScenarioResult
    from .sweep import SweepResult

    if isinstance(obj, (CollectiveRun, StepScore)):
        return [obj.record()]
    if isinstance(obj, SearchResult):
        return [{"evaluation": n + 1, "best": value} for n, value in enumerate(obj.history)]
    if isinstance(obj, ScenarioResult):
        return obj.records
    if isinstance(obj, SweepResult):
        return obj.rows
    if isinstance(obj, dict):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [row for item in obj for row in _rows(item)]
    raise TypeError(f"to_pandas: cannot tabulate a {type(obj).__name__}")


def to_pandas(obj: Any, kind: str | None = None):
    """``obj`` as a DataFrame (see the module); ``kind`` is for a Result ("links", "ops")."""
    if isinstance(obj, Result):
        return obj.to_pandas(kind or "links")
    from ..outputs import to_jsonable

    return rows_to_pandas(to_jsonable(_rows(obj)))
