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
    from .placements.evaluate import StepScore
    from .placements.search import SearchResult
    from .scenarios.scenario import ScenarioResult
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


def _items(obj: Any, cls: type, kind: str, what: str) -> list:
    """``obj`` (one ``cls`` or several) as a list; anything else refused by name."""
    items = [obj] if isinstance(obj, cls) else list(obj)
    for item in items:
        if not isinstance(item, cls):
            raise TypeError(f"to_pandas(kind={kind!r}): {what} only, got a "
                            f"{type(item).__name__}")
    return items


def _candidate_rows(obj: Any) -> list[dict[str, Any]]:
    """One row per candidate of each ``auto`` run: tidy, where a record packs them in one
    string (``candidates``)."""
    from .collective import CollectiveRun

    rows = []
    for run in _items(obj, CollectiveRun, "candidates", "collective runs"):
        head = {"op": run.op, "topology": run.topology,
                "size_bytes": run.record()["size_bytes"]}
        for name, t in sorted((run.candidates or {}).items(), key=lambda kv: kv[1]):
            rows.append({**head, "candidate": name, "time_s": t, "bound_s": None,
                         "simulated": True, "chosen": name == run.algorithm})
        for name, t in sorted((run.pruned or {}).items(), key=lambda kv: kv[1]):
            rows.append({**head, "candidate": name, "time_s": None, "bound_s": t,
                         "simulated": False, "chosen": False})
    return rows


def _phase_rows(obj: Any) -> list[dict[str, Any]]:
    """One row per placement strategy and phase: tidy, where a record has one
    ``<phase>_s`` column per phase."""
    from .placements.evaluate import StepScore

    return [{"strategy": score.strategy, "phase": phase, "time_s": t,
             "algorithm": score.algorithms.get(phase), "step_s": score.step_s}
            for score in _items(obj, StepScore, "phases", "placement scores")
            for phase, t in score.phase_s.items()]


def to_pandas(obj: Any, kind: str | None = None):
    """``obj`` as a DataFrame (see the module); ``kind`` is for a Result ("links", "ops"),
    ``"candidates"`` for ``auto`` runs: one row per candidate and size (its simulated
    ``time_s``, or the lower ``bound_s`` that ruled it out unsimulated; ``chosen``), or
    ``"phases"`` for placement scores: one row per strategy and phase.

    >>> from netsim.run import run_sweep
    >>> frame = to_pandas(run_sweep("allreduce", "ring:4", "auto", [1e6]), "candidates")
    >>> bool(frame["chosen"].sum() == 1), bool(frame["time_s"].min() == frame["time_s"][0])
    (True, True)
    """
    if isinstance(obj, Result):
        return obj.to_pandas(kind or "links")
    from ..outputs import to_jsonable

    if kind in ("candidates", "phases"):
        rows = _candidate_rows(obj) if kind == "candidates" else _phase_rows(obj)
        return rows_to_pandas(to_jsonable(rows))
    if kind is not None:
        raise ValueError(f"kind {kind!r} is for a Result ('links', 'ops'), 'candidates' or "
                         f"'phases'")
    return rows_to_pandas(to_jsonable(_rows(obj)))
