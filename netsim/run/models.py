"""One door to both network models: ``model='fluid' | 'packet' | 'both'``.

``fluid`` is :func:`netsim.engine.simulate` (max-min fair continuous bytes), ``packet``
:func:`netsim.packet.simulate_packets` (packets, buffers, credits, round-robin ports) on
the same inputs. ``both`` runs the two and returns the fluid result with the packet one's times in
``meta['packet']`` (``makespan``, ``op_start``, ``op_finish``, ``packets``, ``queue_peak``,
``queue_mean``; plain lists, so the result still writes as JSON) and the fluid model's error against it in ``meta['model_error']``:
``packet_time_s``, ``makespan_error`` = (fluid - packet) / packet makespan, and the same
relative error of every op's finish time summarised as ``op_error_max`` (largest in size,
signed) and ``op_error_mean`` (mean of absolute values). Positive: the fluid model is slower.

>>> from netsim.topology import ring
>>> from netsim.schedule import ScheduleBuilder
>>> b = ScheduleBuilder(2); _ = b.send(0, 1, 8192)
>>> r = simulate_model(ring(2, bandwidth=1e9, latency=1e-6), b.build(), model="both")
>>> round(r.meta["model_error"]["makespan_error"], 9)     # one link: the same time
0.0
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

import numpy as np

from ..engine import Result, simulate
from ..errors import InputError, NetsimError, unknown_name

__all__ = ["MODELS", "check_model", "simulate_model", "op_errors", "model_error",
           "model_fields", "flow_records_with_model", "link_records_with_queues",
           "parse_packet_option", "recording_timelines", "timelines_recorded"]

MODELS = ("fluid", "packet", "both")

# Set by recording_timelines(): fluid runs in that block keep their timeline (a figure over
# time asks for it without every layer between the command and the engine passing a flag).
_TIMELINES: ContextVar[bool] = ContextVar("netsim_record_timelines", default=False)


@contextmanager
def recording_timelines() -> Iterator[None]:
    """Fluid runs inside this block record ``Result.timeline`` (link rates per interval),
    and runs that would simulate a symmetric part for the whole (ring blocks, alike
    in-network planes) simulate every op instead, so the timeline covers every link (a
    ring of more than 50,000 sends still runs on its blocks, and keeps no timeline).

    >>> from netsim.topology import ring
    >>> from netsim.schedule.traffic import shift
    >>> with recording_timelines():
    ...     r = simulate_model(ring(4), shift(4, 1e6))
    >>> r.timeline is not None, timelines_recorded()
    (True, False)
    """
    token = _TIMELINES.set(True)
    try:
        yield
    finally:
        _TIMELINES.reset(token)


def timelines_recorded() -> bool:
    """Inside :func:`recording_timelines`?"""
    return _TIMELINES.get()


def check_model(model: str, packet=None) -> str:
    """``model`` if it is one of :data:`MODELS`, else a did-you-mean InputError. Packet
    options with the fluid model are refused (a NetsimError that is not an InputError, so
    that a caller which turns InputErrors into "does not apply" notes still stops)."""
    if model not in MODELS:
        raise unknown_name("network model", model, MODELS)
    if packet is not None and model == "fluid":
        raise NetsimError("packet options (--packet, packet:) apply to model packet or "
                          "both, not fluid")
    return model


def simulate_model(topology, schedule, placement=None, *, model: str = "fluid", packet=None,
                   router=None, overhead: float = 0.0, not_before=None, progress=None,
                   record_timeline: bool = False, faults=(), tolerance: float = 0.0,
                   config=None) -> Result:
    """Simulate with the fluid model, the packet model (``packet``: its
    :class:`~netsim.packet.PacketOptions`) or both (module docstring). ``tolerance`` is the
    fluid engine's approximate mode (relative; 0 = exact) and ``config`` its
    :class:`~netsim.engine.config.EngineConfig` (None: the defaults;
    :func:`netsim.engine.simulate`)."""
    check_model(model, packet)
    record_timeline = record_timeline or _TIMELINES.get()
    if model != "packet":
        fluid = simulate(topology, schedule, placement, router=router, overhead=overhead,
                         not_before=not_before, progress=progress,
                         record_timeline=record_timeline, faults=faults,
                         tolerance=tolerance, config=config)
        if model == "fluid":
            return fluid
    from ..packet import simulate_packets

    if faults:
        raise InputError("the packet model does not model faults: use model fluid")
    packets = simulate_packets(topology, schedule, placement, router=router, overhead=overhead,
                               not_before=not_before, options=packet, progress=progress)
    if model == "packet":
        return packets
    fluid.meta["packet"] = {"makespan": packets.makespan, "op_start": packets.op_start.tolist(),
                            "op_finish": packets.op_finish.tolist(),
                            "packets": packets.meta["packets"],
                            "queue_peak": packets.meta["queue_peak"],
                            "queue_mean": packets.meta["queue_mean"]}
    fluid.meta["model_error"] = model_error(fluid, packets)
    return fluid


def parse_packet_option(text: str | None):
    """``--packet payload=4KiB,header=48B,buffers=8,switching=cut-through`` as
    :class:`~netsim.packet.PacketOptions` (None when not given); one-line errors naming
    the key (:func:`netsim.packet.options.parse_packet_options`).

    >>> parse_packet_option("buffers=2").buffer
    2
    """
    from ..packet.options import parse_packet_options

    return parse_packet_options(text)


def op_errors(fluid: Result, packet: Result) -> np.ndarray:
    """(fluid - packet) / packet finish time of every op (0 where both finish at 0)."""
    f, p = fluid.op_finish, packet.op_finish
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.where(p > 0, (f - p) / p, np.where(f == p, 0.0, np.inf))
    return err


def model_error(fluid: Result, packet: Result) -> dict[str, float]:
    """The summary of :func:`op_errors` and the makespan error (module docstring)."""
    err = op_errors(fluid, packet)
    worst = float(err[np.argmax(np.abs(err))]) if err.size else 0.0
    span = packet.makespan
    return {"packet_time_s": float(span),
            "makespan_error": float((fluid.makespan - span) / span) if span > 0 else 0.0,
            "op_error_max": worst,
            "op_error_mean": float(np.abs(err).mean()) if err.size else 0.0}


def model_fields(result: Result) -> dict[str, Any]:
    """What a record adds for the model that made ``result``: nothing for fluid, ``model``
    for packet, the :func:`model_error` summary for both."""
    if "model_error" in result.meta:
        return dict(result.meta["model_error"])
    if result.meta.get("model") == "packet":
        return {"model": "packet"}
    return {}


def flow_records_with_model(result: Result) -> list[dict[str, Any]]:
    """``result.flow_records()``; after ``model='both'`` each also has the packet model's
    ``packet_finish_s`` and the fluid finish time's ``error`` (a ratio) against it."""
    records = result.flow_records()
    packet = result.meta.get("packet")
    if packet is None:
        return records
    finish = np.asarray(packet["op_finish"])
    errors = op_errors(result, _Finish(finish))
    for row, f, e in zip(records, finish.tolist(), errors.tolist()):
        row.update(packet_finish_s=f, error=e)
    return records


class _Finish:
    """Just the op finish times of a result, for :func:`op_errors`."""

    def __init__(self, op_finish: np.ndarray) -> None:
        self.op_finish = op_finish


def link_records_with_queues(result: Result, only_used: bool = False) -> list[dict[str, Any]]:
    """``result.link_records()``; after the packet model (or both) each also has the peak
    and the time-average number of packets in the input buffer at the link's far end
    (``queue_peak``, ``queue_mean``)."""
    source = result.meta if "queue_peak" in result.meta else result.meta.get("packet") or {}
    rows = result.link_records()
    if "queue_peak" in source:
        for row, peak, mean in zip(rows, source["queue_peak"], source["queue_mean"]):
            row.update(queue_peak=int(peak), queue_mean=float(mean))
    if only_used:
        rows = [row for row, nbytes in zip(rows, result.link_bytes) if nbytes]
    return rows
