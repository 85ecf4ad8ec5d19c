"""The outcome of a simulation: plain arrays that serialise to JSON and CSV.

Units: seconds, bytes, bytes/s. Utilisation of a link is its bytes divided by
(bandwidth x makespan), so 1.0 means the link was full for the whole run.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Result", "Deferred", "PerBlock"]

#: The per-op arrays a run may give as :class:`Deferred`.
_OP_ARRAYS = ("op_release", "op_start", "op_finish", "op_tags")


class Deferred:
    """A per-op array held in the compact form a symmetric run produces, made full only
    when :class:`Result` is first asked for it. Subclasses hold ``values`` (what was
    simulated) and say how many ops they stand for (``size``) and how to lay the values
    out over them (``_full``)."""

    __slots__ = ("values",)

    @property
    def size(self) -> int:
        raise NotImplementedError

    def max(self):
        return self.values.max()

    def expand(self, what: str) -> np.ndarray:
        """The full per-op array, refused with one line (budget.require_memory) when it
        does not fit."""
        from ..budget import require_memory

        require_memory(float(self.values.itemsize) * self.size, what,
                       advice="ask only for the makespan and link figures, which need no "
                              "per-op times")
        return self._full()

    def _full(self) -> np.ndarray:
        raise NotImplementedError


class PerBlock(Deferred):
    """A per-op array held as one value per block of ``repeat`` consecutive ops, as a run
    on one send per block (engine.blocks) makes it: op ``b * repeat + i`` has
    ``values[b]``. :class:`Result` keeps it so until the array is first read, because
    expanded it costs 8 bytes per op: 4.3 GB per array for a 16,384-rank ring
    all-reduce, whose run itself needs a few MB.

    >>> PerBlock(np.array([1.0, 2.0]), 3).expand("ops").tolist()
    [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    """

    __slots__ = ("repeat",)

    def __init__(self, values: np.ndarray, repeat: int):
        self.values, self.repeat = np.asarray(values, dtype=np.float64), int(repeat)

    @property
    def size(self) -> int:
        return self.values.size * self.repeat

    def _full(self) -> np.ndarray:
        return np.repeat(self.values, self.repeat)


@dataclass(eq=False)
class Result:
    """Per-op times, per-link loads and run statistics of one simulation.

    Per op (index = op id in the schedule): ``op_release`` (dependencies met, s),
    ``op_start`` (first byte on the wire for sends, = release otherwise, s), ``op_finish`` (s).
    Per link: ``link_ends`` (source and destination node names), ``link_bytes`` (bytes carried), ``link_busy`` (s with at least one flow
    transferring), ``link_peak_flows`` (most flows transferring at once).
    ``timeline``, when recorded, holds ``(t0, t1, link_ids, rates)`` per interval.
    The per-op arrays (``op_tags`` too) may be given as :class:`Deferred` (one value per
    ring block, or per simulated in-network plane); each is then expanded when it is
    first read (and refused with one line if it cannot fit), so a symmetric run that is
    asked only for its makespan and links stays as small as what was simulated.
    """

    topology: str
    makespan: float
    op_release: np.ndarray
    op_start: np.ndarray
    op_finish: np.ndarray
    link_names: tuple[str, ...]
    link_bandwidth: np.ndarray
    link_bytes: np.ndarray
    link_busy: np.ndarray
    link_peak_flows: np.ndarray
    events: int
    num_flows: int
    link_ends: tuple[tuple[str, str], ...] = ()
    op_ids: tuple | None = None
    op_tags: np.ndarray | None = None
    tags: tuple[str, ...] = ()
    placement: np.ndarray | None = None
    timeline: list | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        kept = {name: self.__dict__[name] for name in _OP_ARRAYS
                if isinstance(self.__dict__[name], Deferred)}
        if kept:                               # read through __getattr__ until expanded
            self.__dict__["_deferred"] = kept
            for name in kept:
                del self.__dict__[name]

    def __getattr__(self, name: str):
        kept = self.__dict__.get("_deferred")
        if kept is not None and name in kept:
            value = kept[name].expand(f"{name} of a run of {kept[name].size:,} ops on "
                                      f"{self.topology}")
            self.__dict__[name] = value
            del kept[name]
            return value
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:
        ops = self.__dict__.get("_deferred", {}).get("op_finish")
        n_ops = ops.size if ops is not None else len(self.op_finish)
        return (f"Result(topology={self.topology!r}, makespan={self.makespan!r}, "
                f"ops={n_ops}, links={len(self.link_names)}, events={self.events}, "
                f"num_flows={self.num_flows})")

    @property
    def link_utilization(self) -> np.ndarray:
        """Bytes / (bandwidth x makespan) per link (0 when the run took no time)."""
        if self.makespan <= 0:
            return np.zeros_like(self.link_bytes)
        return self.link_bytes / (self.link_bandwidth * self.makespan)

    @property
    def max_link_utilization(self) -> float:
        util = self.link_utilization
        return float(util.max()) if util.size else 0.0

    def tag_span(self, tag: str) -> tuple[float, float]:
        """(first release, last finish) of the ops tagged ``tag``, in seconds."""
        if self.op_tags is None or tag not in self.tags:
            raise KeyError(tag)
        ops = self.op_tags == self.tags.index(tag)
        return float(self.op_release[ops].min()), float(self.op_finish[ops].max())

    def flow_records(self) -> list[dict[str, Any]]:
        ids = self.op_ids if self.op_ids is not None else range(len(self.op_finish))
        return [{"id": i, "start_s": float(s), "finish_s": float(f)}
                for i, s, f in zip(ids, self.op_start, self.op_finish)]

    def link_records(self, only_used: bool = False) -> list[dict[str, Any]]:
        util = self.link_utilization
        rows = []
        for lid, name in enumerate(self.link_names):
            if only_used and self.link_bytes[lid] == 0:
                continue
            ends = self.link_ends[lid] if self.link_ends else (None, None)
            rows.append({"id": name, "src": ends[0], "dst": ends[1],
                         "bytes": float(self.link_bytes[lid]),
                         "bandwidth_Bps": float(self.link_bandwidth[lid]),
                         "utilization": float(util[lid]), "busy_s": float(self.link_busy[lid]),
                         "peak_flows": int(self.link_peak_flows[lid])})
        return rows

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"makespan", "flows": [...], "links": [...], ...}``."""
        return {"topology": self.topology, "makespan": float(self.makespan),
                "events": int(self.events), "num_flows": int(self.num_flows),
                "flows": self.flow_records(), "links": self.link_records(),
                **({"meta": self.meta} if self.meta else {})}

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    def links_csv(self) -> str:
        out = io.StringIO()
        rows = self.link_records()
        writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["id"])
        writer.writeheader()
        writer.writerows(rows)
        return out.getvalue()

    def flows_csv(self) -> str:
        out = io.StringIO()
        writer = csv.DictWriter(out, fieldnames=["id", "start_s", "finish_s"])
        writer.writeheader()
        writer.writerows(self.flow_records())
        return out.getvalue()

    def to_pandas(self, kind: str = "links", *, schedule=None):
        """A pandas DataFrame per link (``kind="links"``: the columns of
        :meth:`link_records`: bytes, ``bandwidth_Bps``, utilization 0..1, ``busy_s``,
        peak flows) or per op (``"ops"``: id, ``release_s``, ``start_s``, ``finish_s``, tag;
        with the ``schedule`` that was run also each op's ``src`` and ``dst`` rank and
        ``bytes``), built from the arrays as columns (no Python loop over links). Needs
        ``netsim[parquet]``.

        >>> from netsim.engine import simulate
        >>> from netsim.schedule import ScheduleBuilder
        >>> from netsim.topology import ring
        >>> b = ScheduleBuilder(2); _ = b.send(0, 1, 1e9)
        >>> frame = simulate(ring(2, bandwidth=1e9), b.build()).to_pandas()
        >>> frame[["src", "dst", "bytes", "utilization"]].to_dict("records")[0]
        {'src': 'n0', 'dst': 'n1', 'bytes': 1000000000.0, 'utilization': 1.0}
        """
        from .._inputs.extras import require

        pd = require("pandas", "parquet", "Result.to_pandas()")
        if kind == "ops":
            ids = self.op_ids if self.op_ids is not None else np.arange(len(self.op_finish))
            tags = None
            if self.op_tags is not None and self.tags:
                tags = pd.Categorical.from_codes(np.asarray(self.op_tags, dtype=np.int64),
                                                 categories=list(self.tags))
            ops = {}
            if schedule is not None:
                if schedule.num_ops != len(self.op_finish):
                    raise ValueError(f"the schedule has {schedule.num_ops} ops, this result "
                                     f"{len(self.op_finish)}: not the schedule that was run")
                ops = {"src": np.asarray(schedule.src), "dst": np.asarray(schedule.dst),
                       "bytes": np.asarray(schedule.nbytes, dtype=float)}
            return pd.DataFrame({"id": np.asarray(ids), **ops, "release_s": self.op_release,
                                 "start_s": self.op_start, "finish_s": self.op_finish,
                                 **({"tag": tags} if tags is not None else {})})
        if kind != "links":
            raise ValueError(f"kind must be 'links' or 'ops', got {kind!r}")
        ends = np.asarray(self.link_ends, dtype=object).reshape(-1, 2) if self.link_ends \
            else np.full((len(self.link_names), 2), None, dtype=object)
        # object columns as they are: pandas' string dtype would convert every name
        text = {key: pd.Series(column, dtype=object, copy=False) for key, column in
                (("id", np.asarray(self.link_names, dtype=object)), ("src", ends[:, 0]),
                 ("dst", ends[:, 1]))}
        return pd.DataFrame({**text,
                             "bytes": np.asarray(self.link_bytes, dtype=float),
                             "bandwidth_Bps": np.asarray(self.link_bandwidth, dtype=float),
                             "utilization": np.asarray(self.link_utilization, dtype=float),
                             "busy_s": np.asarray(self.link_busy, dtype=float),
                             "peak_flows": np.asarray(self.link_peak_flows, dtype=np.int64)})


# ``op_tags`` has a default, so the dataclass left None on the class, where attribute lookup
# finds it before __getattr__: a deferred op_tags (removed from the instance) would read as
# None. The default stays in __init__'s signature and in the field.
del Result.op_tags
