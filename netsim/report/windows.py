"""Link loads over time: a run's recorded timeline as bytes per link per time window.

The engine's timeline (``simulate(..., record_timeline=True)``; ``Result.timeline``) holds
the rate of every busy link per interval between events, and rates are constant within an
interval, so the bytes a link carries in any window are exact: the integral of a step
function. :func:`link_windows` cuts the run ``[0, makespan]`` into a fixed number of equal
windows, so its array is ``windows x links`` whatever the number of events.

>>> from netsim.topology import ring
>>> from netsim.engine import simulate
>>> from netsim.schedule.traffic import shift
>>> topo = ring(4, bandwidth=1e9, latency=0.0)
>>> run = simulate(topo, shift(4, 1e6), record_timeline=True)   # 1 MB at 1 GB/s: 1 ms
>>> w = link_windows(run, 4)
>>> w.edges.tolist()
[0.0, 0.00025, 0.0005, 0.00075, 0.001]
>>> float(w.bytes[:, 0].sum()) == float(run.link_bytes[0]), round(float(w.utilization[2, 0]), 9)
(True, 1.0)
>>> window_at(w, 6e-4)
2
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["LinkWindows", "link_windows", "window_at", "window_label", "utilization_at",
           "MAX_WINDOWS", "check_timeline"]

#: Windows of one array at most (the array is windows x links floats).
MAX_WINDOWS = 1000


@dataclass(frozen=True)
class LinkWindows:
    """``bytes[k, l]``: bytes link ``l`` carried in window ``k``, which spans
    ``edges[k]``..``edges[k + 1]`` (s). ``bandwidth`` per link (bytes/s) and the link
    ``names`` come from the result."""

    edges: np.ndarray
    bytes: np.ndarray
    bandwidth: np.ndarray
    names: tuple[str, ...]

    @property
    def count(self) -> int:
        return int(self.bytes.shape[0])

    @property
    def utilization(self) -> np.ndarray:
        """Bytes over bandwidth x window length per window and link (0..1)."""
        span = np.diff(self.edges)[:, None] * self.bandwidth[None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(span > 0, self.bytes / np.where(span > 0, span, 1.0), 0.0)


def check_timeline(result) -> list:
    """``result.timeline``, or a one-line InputError saying how to get one."""
    timeline = getattr(result, "timeline", None)
    if timeline is None:
        raise InputError(f"the run on {result.topology} kept no timeline (the packet model "
                         f"and rings run on their blocks keep none; fluid runs: "
                         f"simulate(..., record_timeline=True))")
    return timeline


def link_windows(result, windows: int, *, end: float | None = None) -> LinkWindows:
    """Bytes per link in ``windows`` equal windows over ``[0, end]`` (default: the
    makespan), from ``result.timeline``. Exact: rates are constant between events. Refused
    (one line) when the timeline does not add up to the result's link bytes, which is what
    a timeline of a part of the run (a symmetric quotient) would do."""
    timeline = check_timeline(result)
    windows = int(windows)
    if not 1 <= windows <= MAX_WINDOWS:
        raise InputError(f"windows: expected 1 to {MAX_WINDOWS}, got {windows}")
    end = float(result.makespan if end is None else end)
    num_links = len(result.link_names)
    edges = np.linspace(0.0, end, windows + 1) if end > 0 else np.zeros(windows + 1)
    cumulative = _bytes_until(timeline, edges, num_links)
    out = LinkWindows(edges, np.diff(cumulative, axis=0),
                      np.asarray(result.link_bandwidth, dtype=float),
                      tuple(result.link_names))
    if end >= float(result.makespan):
        _check_total(result, cumulative[-1])
    return out


def _bytes_until(timeline, edges: np.ndarray, num_links: int) -> np.ndarray:
    """``(len(edges), num_links)``: bytes every link carried from 0 until each edge.

    The intervals are disjoint and in time order, so an edge lies inside one interval at
    most: it gets every interval ended before it in full and that one in part."""
    out = np.zeros((edges.size, num_links))
    if not timeline:
        return out
    t0 = np.fromiter((seg[0] for seg in timeline), float, len(timeline))
    t1 = np.fromiter((seg[1] for seg in timeline), float, len(timeline))
    sizes = np.fromiter((len(seg[2]) for seg in timeline), np.int64, len(timeline))
    ids = np.concatenate([np.asarray(seg[2], np.int64) for seg in timeline])
    rates = np.concatenate([np.asarray(seg[3], float) for seg in timeline])
    interval = np.repeat(np.arange(len(timeline)), sizes)
    ended = np.searchsorted(t1, edges, side="right")      # intervals over by each edge
    first_edge = np.searchsorted(ended, interval, side="right")   # first edge past each
    keep = first_edge < edges.size
    np.add.at(out, (first_edge[keep], ids[keep]),
              (rates * (t1 - t0)[interval])[keep])
    np.cumsum(out, axis=0, out=out)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for k, j in enumerate(ended):                   # the interval an edge cuts, if any
        if j < len(timeline) and t0[j] < edges[k]:
            part = slice(starts[j], starts[j + 1])
            out[k, ids[part]] += rates[part] * (edges[k] - t0[j])
    return out


def _check_total(result, total: np.ndarray) -> None:
    expected = np.asarray(result.link_bytes, dtype=float)
    scale = max(float(np.abs(expected).max(initial=0.0)), 1.0)
    worst = int(np.argmax(np.abs(total - expected))) if expected.size else 0
    if expected.size and abs(total[worst] - expected[worst]) > 1e-6 * scale:
        raise InputError(f"the timeline of the run on {result.topology} does not add up to "
                         f"its link bytes (link {result.link_names[worst]}: "
                         f"{total[worst]:.6g} B against {expected[worst]:.6g} B); it covers "
                         f"part of the run")


def utilization_at(result, time: float) -> np.ndarray:
    """Every link's rate at the instant ``time`` (s) over its bandwidth (0..1), in the
    result's link order: the interval holding ``time`` (the later one at an event), 0 in a
    gap with nothing transferring. An InputError when ``time`` is outside the run.

    >>> from netsim.topology import ring
    >>> from netsim.engine import simulate
    >>> from netsim.schedule.traffic import shift
    >>> run = simulate(ring(4, bandwidth=1e9, latency=0.0), shift(4, 1e6),
    ...                record_timeline=True)
    >>> utilization_at(run, 5e-4)[:2].tolist()
    [1.0, 0.0]
    """
    timeline = check_timeline(result)
    _check_inside(float(time), float(result.makespan))
    out = np.zeros(len(result.link_names))
    for t0, t1, ids, rates in timeline:
        if t0 <= time < t1 or (time == t1 == result.makespan):
            out[np.asarray(ids, np.int64)] = np.asarray(rates, float)
            break
    return out / np.asarray(result.link_bandwidth, dtype=float)


def _check_inside(time: float, end: float) -> None:
    if not 0.0 <= time <= end:
        from ..units import format_time

        raise InputError(f"--at {format_time(time)}: outside the run (0 to {format_time(end)})")


def window_at(windows: LinkWindows, time: float) -> int:
    """Index of the window holding ``time`` (s); the last one holds the makespan. An
    InputError when ``time`` is outside the run."""
    _check_inside(float(time), float(windows.edges[-1]))
    return int(min(np.searchsorted(windows.edges, time, side="right") - 1, windows.count - 1))


def window_label(windows: LinkWindows, k: int) -> str:
    """``'0.56-1.12 ms'``: window ``k``'s span in one unit."""
    from .timeline import time_unit

    unit, factor = time_unit(max(float(windows.edges[-1]), 1e-12))
    a, b = windows.edges[k] / factor, windows.edges[k + 1] / factor
    return f"{a:.3g}-{b:.3g} {unit}"
