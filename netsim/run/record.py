"""The record of a collective run: :class:`CollectiveRun` and what checks it.

A run's time (s), nccl-tests' algbw and busbw (GB/s, GB = 1e9 B) and its two lower bounds
(the algorithm's and the machine's), flattened by :meth:`CollectiveRun.record` for tables,
JSON and CSV. :func:`make_run` builds one from a simulated result and refuses
(:func:`check_above_bound`) a time below a bound printed beside it.

>>> candidates_text([{"algorithm": "ring", "time_s": 2e-3}])
'ring=2ms'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..algorithms.bounds import Bound
from ..engine import Result
from ..report.nccl import algbw_GBps, busbw_GBps
from ..units import format_time

__all__ = ["CollectiveRun", "candidates_text", "group_records", "make_run",
           "check_above_bound"]


@dataclass(eq=False)
class CollectiveRun:
    """One simulated collective: times in s, bandwidths in GB/s (nccl-tests' 1e9 B)."""

    op: str
    algorithm: str
    topology: str
    ranks: int
    size_bytes: float
    time_s: float
    algbw_GBps: float | None
    busbw_GBps: float | None
    bound_s: float
    bound_name: str
    bound_detail: str
    efficiency: float | None
    max_link_util: float
    events: int
    flows: int
    result: Result = field(repr=False)
    # The machine's bound: the best any algorithm could do on the links these ranks can
    # use (bound_s and efficiency are the bound of the algorithm that ran).
    machine_bound_s: float | None = None
    machine_bound_name: str | None = None
    machine_bound_detail: str | None = None
    machine_efficiency: float | None = None
    candidates: dict[str, float] | None = None   # auto: every simulated candidate's time, s
    faults: str | None = None        # the faults applied ('fail 0_0->0_1; ...'), if any
    rerouted: int | None = None      # flows moved off failed links, when there were faults
    groups: list[str] | None = None        # --axis: every group's label ('0_1..7_1')
    group_times: list[float] | None = None  # ... and its time (s); time_s is the slowest
    machine: Any = field(default=None, repr=False)   # the topology run on (its fabric)
    model: dict | None = None        # packet or both: run.models.model_fields of the result
    pruned: dict[str, float] | None = None   # auto: candidates not simulated -> lower bound, s

    def candidates_list(self) -> list[dict[str, Any]] | None:
        """``auto``'s candidates (auto runs only): the simulated ones fastest first as
        ``{"algorithm", "time_s"}``, then those skipped because their lower bound already
        exceeded the winner's time as ``{"algorithm", "bound_s"}``, smallest bound first."""
        if not self.candidates:
            return None
        return ([{"algorithm": name, "time_s": float(t)} for name, t in
                 sorted(self.candidates.items(), key=lambda kv: kv[1])]
                + [{"algorithm": name, "bound_s": float(t)} for name, t in
                   sorted((self.pruned or {}).items(), key=lambda kv: kv[1])])

    def candidates_text(self) -> str | None:
        """:func:`candidates_text` of :meth:`candidates_list`."""
        return candidates_text(self.candidates_list())

    def record(self) -> dict[str, Any]:
        """A flat dict of plain values for tables, JSON and CSV."""
        row = {"op": self.op, "algorithm": self.algorithm, "topology": self.topology,
               "ranks": self.ranks, "size_bytes": _whole(self.size_bytes),
               "time_s": self.time_s,
               "algbw_GBps": self.algbw_GBps, "busbw_GBps": self.busbw_GBps,
               "bound_s": self.bound_s, "bound": self.bound_name,
               "efficiency": self.efficiency,
               "machine_bound_s": self.machine_bound_s, "machine_bound": self.machine_bound_name,
               "machine_efficiency": self.machine_efficiency,
               "max_link_util": self.max_link_util,
               "events": self.events, "flows": self.flows, "bound_detail": self.bound_detail,
               "machine_bound_detail": self.machine_bound_detail}
        row.update(self.result.meta.get("record", {}))   # hook: what the algorithm chose
        if "overhead_s" in self.result.meta:   # what each message paid: alpha or the algorithm's
            row["overhead_s"] = self.result.meta["overhead_s"]
        if "engine" in self.result.meta:                 # the engine's path (json, csv)
            row["engine"] = self.result.meta["engine"]
        if self.candidates:
            row["candidates"] = self.candidates_list()
        if self.faults:
            row["faults"] = self.faults
            row["rerouted"] = self.rerouted
        if self.groups:
            row.update(group_records(self.groups, self.group_times))
        if self.model:
            row.update(self.model)
        return row


def candidates_text(entries) -> str | None:
    """``'ring=1.2ms,tree=3.4ms,direct>=5.6ms'``: a record's ``candidates`` list as tables
    show it (``name>=bound`` for one skipped by its lower bound).

    >>> candidates_text([{"algorithm": "ring", "time_s": 1.2e-3},
    ...                  {"algorithm": "direct", "bound_s": 5.6e-3}])
    'ring=1.2ms,direct>=5.6ms'
    """
    if not entries:
        return None
    if isinstance(entries, str):            # a record written before the list
        return entries
    text = lambda t: format_time(t).replace(" ", "")    # noqa: E731
    return ",".join(f"{e['algorithm']}={text(e['time_s'])}" if "time_s" in e
                    else f"{e['algorithm']}>={text(e['bound_s'])}" for e in entries)


def _whole(size: float) -> int | float:
    """A byte count as an int where it is whole (tables and Parquet get an integer column)."""
    return int(size) if float(size).is_integer() else float(size)


def group_records(labels: Sequence[str], times: Sequence[float]) -> dict[str, Any]:
    """The record keys of a grouped run: ``groups`` (how many), ``slowest_group`` and
    ``group_times`` (``'label=time,...'``)."""
    slowest = int(np.argmax(times))
    return {"groups": len(labels), "slowest_group": labels[slowest],
            "group_times": ",".join(f"{label}={format_time(t).replace(' ', '')}"
                                    for label, t in zip(labels, times))}


def make_run(op: str, name: str, topo, n: int, size: float, result: Result, bound: Bound,
             candidates: dict[str, float] | None, *,
             machine_bound: Bound | None = None) -> CollectiveRun:
    """The run's record: ``bound`` the algorithm's (efficiency = bound / time),
    ``machine_bound`` the machine's (machine_efficiency; the same bound when not given)."""
    time = float(result.makespan)
    machine_bound = bound if machine_bound is None else machine_bound
    check_above_bound(f"{op} {name} on {n} ranks of {topo.name!r}", time, machine_bound,
                      float(result.events) + float(result.num_flows))
    check_above_bound(f"{op} {name} on {n} ranks of {topo.name!r}", time, bound,
                      float(result.events) + float(result.num_flows))
    return CollectiveRun(
        op=op, algorithm=name, topology=topo.name, ranks=n, size_bytes=size, time_s=time,
        algbw_GBps=algbw_GBps(size, time), busbw_GBps=busbw_GBps(op, size, time, n),
        bound_s=bound.seconds, bound_name=bound.name, bound_detail=bound.detail,
        efficiency=_efficiency(bound, time),
        max_link_util=result.max_link_utilization, events=int(result.events),
        flows=int(result.num_flows), result=result, candidates=candidates,
        machine_bound_s=machine_bound.seconds, machine_bound_name=machine_bound.name,
        machine_bound_detail=machine_bound.detail,
        machine_efficiency=_efficiency(machine_bound, time))


def _efficiency(bound, time: float) -> float | None:
    """bound / time; None where no bound applies (one rank, nothing to move): a share
    of 0% would read as a run that wasted all its time."""
    return bound.seconds / time if time > 0 and bound.seconds > 0 else None


def check_above_bound(what: str, time: float, bound: Bound, steps: float = 0.0) -> None:
    """Refuse to report a time below the lower bound printed beside it: that is a bug
    (an algorithm that does not perform the collective, or an engine that moves bytes
    faster than its links), never an answer. Rounding may take 1e-6 relative, or 2e-9 per
    event and flow (the engine's merging of close events,
    :func:`netsim.algorithms.lower_bound.engine_floor`)."""
    from ..algorithms.lower_bound import SLACK
    from ..errors import SimulationError

    floor = bound.seconds * (1.0 - max(SLACK, 2e-9 * steps))
    if not time >= floor:       # nan too
        raise SimulationError(f"internal error: {what} took {format_time(time)}, below its "
                              f"lower bound of {format_time(bound.seconds)} ({bound.name}): "
                              f"please report it")
