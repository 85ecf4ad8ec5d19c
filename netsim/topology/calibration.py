"""Calibration: the few physical parameters between a machine's datasheet and what software gets.

A topology's links carry *line rates* (what the vendor quotes per link per direction). A
collective sees less: framing and protocol headers, per-message software costs, the rate at
which a switch or a chip can add numbers. A topology file states those costs once, in a
``calibration:`` mapping, as physics a user can read and change::

    calibration:
      efficiency: 0.822        # payload / line rate of every link (or {nvlink: .., ib: ..})
      packet: 6144B            # fabric payload per packet ...
      header: 48B              # ... and its header: efficiency from Ethernet framing
      alpha: 3.4us             # per-message software overhead at the sender
      launch: 4.5us            # fixed cost per collective phase (barrier, setup)
      launch_per_device: 1us   # ... plus this per device of the collective (dispatch)
      gamma: 50GB/s            # reduction rate of an endpoint (bytes reduced per second)
      reduce_bandwidth: 1TB/s  # in-switch (NVLS) reduction rate of every reducing switch
      fabric: ring             # 'line', 'ring' (deadlock-free ring fabric) or 'auto'
                               # (the fabric each collective algorithm runs on)
      ring_packet_cost: 75ns   # extra link time per packet on a ring fabric

Every key is optional and may be overridden from a spec string
(``t3000,links=1,fabric=ring``, ``dgx-h100,eff=0.8,alpha=2us``). Loading a file applies the
calibration (:func:`apply_calibration`): each link's bandwidth becomes its *payload* rate

    rate = R * e / (1 + t_ring * R * e / P)

with R the line rate, e the efficiency (given, or ``P / (P + H + F * ceil((P + H) / MTU))``
for Ethernet frames of ``MTU`` = 1500 B with ``F`` = 50 B of header, FEC and CRC each, as
tt-metal's CCL_bandwidth.md states), P the packet payload and t_ring the ring fabric's
per-packet cost (0 on a line fabric). With ``fabric: auto`` the links load at line-fabric
rates and :func:`on_fabric` gives the ring-fabric machine to algorithms that run on one
(tt-metal's ring CCLs configure FABRIC_1D_RING, its line CCLs FABRIC_1D). Reducing switches get ``reduce_bandwidth``. The rest
(alpha, launch, launch_per_device, gamma) is read at run time: :func:`calibrated_alpha` by
:func:`netsim.run.collective.run_collective` when the caller gives no alpha, and so on. The
applied calibration is kept in ``topology.meta['calibration']`` as plain values.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import InputError, NetsimError, TopologyError
from ..units import parse_rate, parse_size, parse_time

__all__ = ["Calibration", "CALIBRATION_KEYS", "ETH_MTU", "ETH_FRAME_OVERHEAD",
           "payload_efficiency", "split_calibration", "apply_calibration", "calibration_of",
           "calibrated_alpha", "calibrated_gamma", "calibrated_launch", "link_classes",
           "on_fabric"]

#: Largest Ethernet frame and its header + FEC + CRC bytes (tt-metal CCL_bandwidth.md:
#: "Ethernet packets run from 16 B to 1500 B. Each carries upwards of 50 B of headers").
ETH_MTU = 1500.0
ETH_FRAME_OVERHEAD = 50.0

#: Key -> (kind, aliases). Kinds: 'fraction', 'size' (B), 'time' (s), 'rate' (B/s), 'fabric'.
_KEYS: dict[str, tuple[str, tuple[str, ...]]] = {
    "efficiency": ("fraction", ("eff",)),
    "packet": ("size", ("packet_bytes",)),
    "header": ("size", ("header_bytes",)),
    "mtu": ("size", ()),
    "frame_overhead": ("size", ()),
    "alpha": ("time", ()),
    "launch": ("time", ()),
    "launch_per_device": ("time", ()),
    "gamma": ("rate", ()),
    "reduce_bandwidth": ("rate", ("reduce_bw",)),
    "fabric": ("fabric", ()),
    "ring_packet_cost": ("time", ("ring_cost",)),
}
#: Every key and alias a calibration mapping or a spec override may use.
CALIBRATION_KEYS = tuple(sorted({k for k in _KEYS} | {a for _, al in _KEYS.values() for a in al}))
_CANON = {alias: key for key, (_, aliases) in _KEYS.items() for alias in (key, *aliases)}
_FABRICS = ("line", "ring", "auto")


def payload_efficiency(packet: float, header: float = 0.0, mtu: float = ETH_MTU,
                       frame_overhead: float = ETH_FRAME_OVERHEAD) -> float:
    """Payload bytes / wire bytes of one fabric packet split into Ethernet frames.

    ``P / (P + H + F * ceil((P + H) / MTU))`` (tt-metal CCL_bandwidth.md). Wormhole, 1D
    fabric, 6144 B packets: 6144 / (6144 + 48 + 5 * 50) = 0.9537.

    >>> round(payload_efficiency(6144, 48), 4)
    0.9537
    """
    wire = packet + header
    return packet / (wire + frame_overhead * math.ceil(wire / mtu))


def _fraction(value: Any) -> float:
    number = float(value)
    if not (0.0 < number <= 1.0):
        raise ValueError("must be a fraction in (0, 1]")
    return number


def _parse_value(key: str, value: Any) -> Any:
    """``value`` of canonical ``key`` in SI units; ValueError/NetsimError when malformed."""
    kind = _KEYS[key][0]
    if kind == "fraction":
        if isinstance(value, Mapping):
            return {str(k): _fraction(v) for k, v in value.items()}
        return _fraction(value)
    if kind == "fabric":
        if str(value).lower() not in _FABRICS:
            raise ValueError(f"must be one of {', '.join(_FABRICS)}")
        return str(value).lower()
    number = {"size": parse_size, "time": parse_time, "rate": parse_rate}[kind](value, key)
    if not math.isfinite(number) or number < 0 or (kind == "rate" and number == 0):
        raise ValueError("must be a finite number >= 0" + (" and > 0" if kind == "rate" else ""))
    return number


@dataclass(frozen=True)
class Calibration:
    """Physical parameters of a machine (module docstring). SI units: s, bytes, bytes/s.

    ``efficiency`` is a fraction or a mapping from link class (see :func:`link_classes`)
    to fraction, ``None`` meaning "from ``packet`` framing, else 1". ``fabric`` is ``'line'``,
    ``'ring'`` or ``'auto'`` (line rates at load, see :func:`on_fabric`); ``ring_packet_cost`` applies on a ring fabric and needs ``packet``.
    """

    efficiency: float | dict[str, float] | None = None
    packet: float | None = None
    header: float = 0.0
    mtu: float = ETH_MTU
    frame_overhead: float = ETH_FRAME_OVERHEAD
    alpha: float = 0.0
    launch: float = 0.0
    launch_per_device: float = 0.0
    gamma: float | None = None
    reduce_bandwidth: float | None = None
    fabric: str = "line"
    ring_packet_cost: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)   # derived values, for display

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any],
                     error: Callable[[str, str], NetsimError] | None = None) -> "Calibration":
        """Parse a mapping of keys (or aliases) to values with units; ``error(key, message)``
        builds the exception for a bad key (default: an InputError naming the key)."""
        error = error or (lambda key, msg: InputError(f"calibration.{key}: {msg}"))
        values: dict[str, Any] = {}
        for key, value in mapping.items():
            canon = _CANON.get(str(key).lower())
            if canon is None:
                raise error(str(key), f"unknown key (allowed: {', '.join(_KEYS)})")
            try:
                values[canon] = _parse_value(canon, value)
            except (ValueError, TypeError, NetsimError) as err:
                raise error(str(key), f"{err}, got {value!r}") from None
        calibration = cls(**values)
        if calibration.ring_packet_cost and calibration.packet is None:
            raise error("ring_packet_cost", "needs 'packet' (the payload bytes per packet)")
        if calibration.packet == 0:
            raise error("packet", "must be > 0 bytes")
        return calibration

    def merged(self, overrides: Mapping[str, Any],
               error: Callable[[str, str], NetsimError] | None = None) -> "Calibration":
        """A copy with ``overrides`` (keys or aliases, values with units) applied."""
        given = {k: v for k, v in self.to_dict().items() if k in _KEYS and v is not None}
        given.update({_CANON.get(str(k).lower(), k): v for k, v in overrides.items()})
        return Calibration.from_mapping(given, error)

    def to_dict(self) -> dict[str, Any]:
        """Plain values (SI floats, strings, dicts) for ``topology.meta['calibration']``."""
        values = asdict(self)
        extra = values.pop("extra")
        return {**values, **extra}

    def base_efficiency(self, link_class: str = "default") -> float:
        """Payload fraction of the line rate before any ring-fabric cost."""
        if isinstance(self.efficiency, dict):
            return self.efficiency.get(link_class, self.efficiency.get("default", 1.0))
        if self.efficiency is not None:
            return self.efficiency
        if self.packet is not None:
            return payload_efficiency(self.packet, self.header, self.mtu, self.frame_overhead)
        return 1.0

    def payload_rate(self, line_rate: np.ndarray | float, link_class: str = "default"):
        """Bytes/s of payload a link of ``line_rate`` carries: ``R e / (1 + t R e / P)``."""
        rate = np.asarray(line_rate, dtype=np.float64) * self.base_efficiency(link_class)
        if self.fabric == "ring" and self.ring_packet_cost > 0:
            rate = rate / (1.0 + self.ring_packet_cost * rate / self.packet)
        return rate


def link_classes(topology) -> np.ndarray:
    """Class of every link: the ``fabric`` attribute of its switch end, else ``'default'``.

    ``dgx_cluster`` tags NVSwitch chips ``'nvlink'`` and InfiniBand switches ``'ib'``, so a
    calibration may give ``efficiency: {nvlink: 0.82, ib: 0.94}``.
    """
    node_class = np.array([str(a.get("fabric", "default")) if sw else ""
                           for a, sw in zip(topology.node_attrs, topology.is_switch)], dtype=object)
    src, dst = node_class[topology.link_src], node_class[topology.link_dst]
    return np.where(src != "", src, np.where(dst != "", dst, "default"))


def split_calibration(mapping: Mapping[str, Any] | None, overrides: Mapping[str, Any],
                      error: Callable[[str, str], NetsimError] | None = None
                      ) -> tuple[Calibration | None, dict[str, Any]]:
    """(calibration from a file's mapping with the calibration ``overrides`` applied, the
    overrides that are not calibration keys). None when neither gives any key."""
    rest = {k: v for k, v in overrides.items() if str(k).lower() not in _CANON}
    given = {k: v for k, v in overrides.items() if str(k).lower() in _CANON}
    if not mapping and not given:
        return None, rest
    base = Calibration.from_mapping(mapping or {}, error)
    override_error = (lambda key, msg: TopologyError(f"option {key}: {msg}"))
    return (base.merged(given, override_error) if given else base), rest


def apply_calibration(topology, calibration: Calibration | None):
    """``topology`` with payload link rates, reduce rates and ``meta['calibration']`` set.

    Line rates become payload rates (module docstring), reducing switches get
    ``reduce_bandwidth``; ``meta['calibration']`` keeps the parameters and, under
    ``link_efficiency``, the resulting rate / line rate of each link class.
    """
    if calibration is None:
        return topology
    if "calibration" in topology.meta:
        raise TopologyError(f"topology {topology.name!r} is already calibrated")
    classes = link_classes(topology)
    bandwidth = topology.bandwidth.copy()
    ratio = {}
    for name in np.unique(classes).tolist():
        sel = classes == name
        bandwidth[sel] = calibration.payload_rate(topology.bandwidth[sel], name)
        ratio[name] = float(bandwidth[sel][0] / topology.bandwidth[sel][0])
    attrs = tuple(_with_reduce(a, calibration.reduce_bandwidth) for a in topology.node_attrs)
    shown = replace(calibration, extra={"link_efficiency": ratio})
    meta = {**topology.meta, "calibration": shown.to_dict()}
    return replace(topology.with_links(bandwidth=bandwidth), node_attrs=attrs, meta=meta)


def _with_reduce(attrs: dict, rate: float | None) -> dict:
    if rate is None or not attrs.get("reduce"):
        return attrs
    return {**attrs, "reduce_bandwidth": rate}


def calibration_of(topology) -> Calibration | None:
    """The calibration applied to ``topology`` (None if it has none)."""
    stored = topology.meta.get("calibration") if topology is not None else None
    if not stored:
        return None
    known = {k: v for k, v in stored.items() if k in _KEYS}
    extra = {k: v for k, v in stored.items() if k not in _KEYS}
    return Calibration(**known, extra=extra)


def calibrated_alpha(topology) -> float:
    """Per-message software overhead (s) of ``topology``'s calibration, 0 without one."""
    calibration = calibration_of(topology)
    return calibration.alpha if calibration is not None else 0.0


def calibrated_gamma(topology) -> float | None:
    """Reduction rate of an endpoint (bytes/s) from the calibration, None (free) without."""
    calibration = calibration_of(topology)
    return calibration.gamma if calibration is not None else None


def calibrated_launch(topology, devices: int = 0) -> float:
    """Fixed cost (s) of one collective phase over ``devices`` devices from the
    calibration: ``launch + launch_per_device * devices``, 0 without one."""
    calibration = calibration_of(topology)
    if calibration is None:
        return 0.0
    return calibration.launch + calibration.launch_per_device * devices


def on_fabric(topology, fabric: str | None):
    """``topology`` as an algorithm that runs on ``fabric`` (``'ring'``, ``'line'`` or None)
    sees it. Only a calibration with ``fabric: auto`` changes: on ``'ring'`` every link
    then pays ``ring_packet_cost`` per packet, as a ``fabric: ring`` calibration would
    (meta says ``fabric: ring``). Anything else is returned as it is. Cached per topology.

    >>> from netsim.topology import parse_topology
    >>> t3000 = parse_topology("t3000,links=1")
    >>> ring = on_fabric(t3000, "ring")
    >>> round(float(ring.bandwidth[0] / 1e9), 2), round(float(t3000.bandwidth[0] / 1e9), 2)
    (10.42, 11.92)
    >>> on_fabric(t3000, "line") is t3000, on_fabric(ring, "ring") is ring
    (True, True)
    """
    calibration = calibration_of(topology)
    if fabric != "ring" or calibration is None or calibration.fabric != "auto":
        return topology
    cache = _FABRIC_CACHE.get(id(topology))
    if cache is not None and cache[0] is topology:
        return cache[1]
    ring = replace(calibration, fabric="ring", extra={})
    bandwidth = topology.bandwidth.copy()
    if ring.ring_packet_cost > 0:
        bandwidth = bandwidth / (1.0 + ring.ring_packet_cost * bandwidth / ring.packet)
    meta = {**topology.meta, "calibration": {**topology.meta["calibration"], "fabric": "ring"}}
    result = replace(topology.with_links(bandwidth=bandwidth), meta=meta)
    if len(_FABRIC_CACHE) > 16:       # a few machines per process; keep it bounded
        _FABRIC_CACHE.clear()
    _FABRIC_CACHE[id(topology)] = (topology, result)
    return result


# id(topology) -> (topology, its ring-fabric twin); the topology is kept so the id stays valid
_FABRIC_CACHE: dict[int, tuple[Any, Any]] = {}
