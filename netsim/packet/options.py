"""What a packet-level run needs beyond the fluid engine's inputs: packet and header size,
buffer depth and the switching mode, and how they follow from a machine's calibration.

Defaults: the calibration's ``packet`` and ``header`` when it gives a packet (6144 B + 48 B
on Wormhole Ethernet: t3000, galaxy-wh), else 4096 B of payload and no header. A
calibrated link rate is a *payload* rate (framing and per-packet costs already taken
off), so on a machine whose calibration gives a packet the wire rate is set to
``bandwidth x (P + H) / P``: a stream of full packets then carries exactly the calibrated
payload rate, and a short packet still pays its whole header. Without a calibrated packet
the link's bandwidth is its wire rate.

Buffers: ``buffer=None`` sizes each input buffer to cover its link's credit round trip,
``ceil(2 + 2 L C / S) + 1`` packets of S wire bytes on a link of C bytes/s and latency L
(a lone stream never waits for credits); an integer sets every buffer to that many packets.

>>> o = PacketOptions(payload=1000, header=24, switching="cut-through")
>>> o.resolved(None).wire_bytes
1024.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..errors import InputError

__all__ = ["PacketOptions", "SWITCHING", "DEFAULT_PAYLOAD", "PACKET_KEYS", "parse_packet_options",
           "packet_options_from"]

#: Switching modes: a router forwards a packet once all of it (store-and-forward) or its
#: header (virtual cut-through) has arrived.
SWITCHING = ("store-and-forward", "cut-through")
#: Payload per packet (bytes) when the machine's calibration gives none.
DEFAULT_PAYLOAD = 4096.0


@dataclass(frozen=True)
class PacketOptions:
    """Packet model parameters (bytes, packets); ``None`` means the machine's default."""

    payload: float | None = None
    header: float | None = None
    buffer: int | None = None
    switching: str = "store-and-forward"

    def __post_init__(self) -> None:
        if self.switching not in SWITCHING:
            from ..errors import unknown_name

            raise unknown_name("switching mode", self.switching, SWITCHING)
        if self.payload is not None and not (math.isfinite(self.payload) and self.payload > 0):
            raise InputError(f"packet payload must be > 0 bytes, got {self.payload!r}")
        if self.header is not None and not (math.isfinite(self.header) and self.header >= 0):
            raise InputError(f"packet header must be >= 0 bytes, got {self.header!r}")
        if self.buffer is not None and (int(self.buffer) != self.buffer or self.buffer < 1):
            raise InputError(f"packet buffer must be a whole number >= 1 of packets, got "
                             f"{self.buffer!r}")

    @property
    def wire_bytes(self) -> float:
        return float(self.payload) + float(self.header)

    def resolved(self, topology) -> "PacketOptions":
        """A copy with payload and header filled in from ``topology``'s calibration."""
        packet, header = _calibrated_packet(topology)
        payload = self.payload if self.payload is not None else (packet or DEFAULT_PAYLOAD)
        head = self.header if self.header is not None else (header if packet else 0.0)
        return replace(self, payload=float(payload), header=float(head))

    def wire_rates(self, topology) -> np.ndarray:
        """Wire rate of every link (bytes/s), see the module docstring."""
        packet, _ = _calibrated_packet(topology)
        rate = np.asarray(topology.bandwidth, dtype=np.float64)
        if packet:
            return rate * (self.wire_bytes / float(self.payload))
        return rate.copy()

    def depths(self, wire_rate: np.ndarray, latency: np.ndarray) -> np.ndarray:
        """Input buffer depth (packets) of every link's downstream end."""
        if self.buffer is not None:
            return np.full(len(wire_rate), int(self.buffer), dtype=np.int64)
        per = self.wire_bytes / wire_rate                  # s to send one full packet
        return (np.ceil(2.0 + 2.0 * latency / per) + 1).astype(np.int64)


def _calibrated_packet(topology) -> tuple[float | None, float]:
    stored = (topology.meta.get("calibration") or {}) if topology is not None else {}
    packet = stored.get("packet")
    return (float(packet) if packet else None), float(stored.get("header") or 0.0)


#: Keys of ``--packet KEY=VALUE,...`` and of a scenario's ``packet:`` mapping.
PACKET_KEYS = ("payload", "header", "buffers", "switching")


def packet_options_from(mapping, where: str = "--packet") -> PacketOptions:
    """:class:`PacketOptions` from ``{'payload': '4KiB', 'header': '48B', 'buffers': 8,
    'switching': 'cut-through'}`` (sizes through :mod:`netsim.units`; any key may be left
    out). Errors are one line naming ``where`` and the key.

    >>> packet_options_from({"payload": "2KiB", "buffers": "4"}).payload
    2048.0
    >>> packet_options_from({"bufers": 4})
    Traceback (most recent call last):
    ...
    netsim.errors.InputError: --packet: unknown field 'bufers': did you mean 'buffers'?
    """
    from ..errors import NetsimError, refuse_unknown_keys
    from ..units import parse_size

    refuse_unknown_keys(mapping, PACKET_KEYS, where)
    values = {}
    try:
        for key in ("payload", "header"):
            if mapping.get(key) is not None:
                values[key] = parse_size(mapping[key], key)
        if mapping.get("buffers") is not None:
            text = mapping["buffers"]
            try:
                number = int(text) if not isinstance(text, (bool, float)) else None
            except (TypeError, ValueError):
                number = None
            if number is None or number < 1:
                raise InputError(f"{where} buffers: expected a whole number >= 1 of packets, "
                                 f"got {text!r}")
            values["buffer"] = number
        if mapping.get("switching") is not None:
            values["switching"] = str(mapping["switching"])
        return PacketOptions(**values)
    except NetsimError as err:
        message = str(err)
        if where in message:
            raise
        raise type(err)(f"{where}: {message}") from None


def parse_packet_options(text: str | None, where: str = "--packet") -> PacketOptions | None:
    """``'payload=4KiB,header=48B,buffers=8,switching=cut-through'`` as
    :class:`PacketOptions` (None for None or an empty string).

    >>> parse_packet_options("payload=4KiB,switching=cut-through").switching
    'cut-through'
    >>> parse_packet_options("payload")
    Traceback (most recent call last):
    ...
    netsim.errors.InputError: --packet: 'payload' is not KEY=VALUE (keys: payload, header, buffers, switching)
    """
    if text is None or not text.strip():
        return None
    mapping = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key or not value.strip():
            raise InputError(f"{where}: {item.strip()!r} is not KEY=VALUE (keys: "
                             f"{', '.join(PACKET_KEYS)})")
        if key in mapping:
            raise InputError(f"{where}: {key!r} given twice")
        mapping[key] = value.strip()
    return packet_options_from(mapping, where)
