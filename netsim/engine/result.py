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

__all__ = ["Result"]


@dataclass(eq=False)
class Result:
    """Per-op times, per-link loads and run statistics of one simulation.

    Per op (index = op id in the schedule): ``op_release`` (dependencies met, s),
    ``op_start`` (first byte on the wire for sends, = release otherwise, s), ``op_finish`` (s).
    Per link: ``link_ends`` (source and destination node names), ``link_bytes`` (bytes carried), ``link_busy`` (s with at least one flow
    transferring), ``link_peak_flows`` (most flows transferring at once).
    ``timeline``, when recorded, holds ``(t0, t1, link_ids, rates)`` per interval.
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
        return [{"id": i, "start": float(s), "finish": float(f)}
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
                         "bandwidth": float(self.link_bandwidth[lid]),
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
        writer = csv.DictWriter(out, fieldnames=["id", "start", "finish"])
        writer.writeheader()
        writer.writerows(self.flow_records())
        return out.getvalue()

    def to_pandas(self, kind: str = "links"):
        """A pandas DataFrame per link (``kind="links"``: the columns of
        :meth:`link_records`) or per op (``"ops"``: id, release, start, finish, tag), built
        from the arrays as columns (no Python loop over links). Needs ``netsim[parquet]``.

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
            return pd.DataFrame({"id": np.asarray(ids), "release": self.op_release,
                                 "start": self.op_start, "finish": self.op_finish,
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
                             "bandwidth": np.asarray(self.link_bandwidth, dtype=float),
                             "utilization": np.asarray(self.link_utilization, dtype=float),
                             "busy_s": np.asarray(self.link_busy, dtype=float),
                             "peak_flows": np.asarray(self.link_peak_flows, dtype=np.int64)})
