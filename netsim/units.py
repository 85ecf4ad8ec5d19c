"""Parse and format physical quantities: sizes (bytes), rates (bytes/s) and times (s).

Inside netsim every quantity is an SI float: bytes, seconds, bytes per second.
Strings such as ``'25GB/s'``, ``'400Gbps'``, ``'711ns'`` or ``'64MiB'`` are only
accepted at the edges (CLI options, YAML and JSON files) and go through this module.

Conventions (as nccl-tests and vendors use them):

* ``GB`` = 1e9 bytes, ``GiB`` = 2**30 bytes, ``B`` = 1 byte, ``b``/``bit`` = 1/8 byte.
* ``Gbps`` = ``Gb/s`` = 1e9 bit/s = 1.25e8 bytes/s; ``GB/s`` = ``GBps`` = 1e9 bytes/s.
* A bare number (or a string such as ``'1e9'``, which PyYAML leaves as a string) is
  taken in the base unit: bytes, seconds or bytes/s.
* Sizes above :data:`MAX_SIZE` (1 EiB) are refused: no message is that large, and such a
  number is a typo (``'1e9 TiB'``) that would only produce meaningless times.

>>> parse_rate("400Gbps")
50000000000.0
>>> parse_size("64MiB")
67108864.0
>>> format_time(7.11e-07)
'711 ns'
"""

from __future__ import annotations

import math
import re

from .errors import UnitError

__all__ = [
    "parse_size", "parse_rate", "parse_time", "parse_quantity",
    "format_size", "format_rate", "format_time", "MAX_SIZE",
]

#: The largest size (bytes) :func:`parse_size` accepts: 1 EiB.
MAX_SIZE = 2.0**60

_DECIMAL = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50,
           "Ei": 2.0**60}
_TIME = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ns": 1e-9, "ps": 1e-12,
         "min": 60.0, "h": 3600.0}

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf(?:inity)?|nan"
_QUANTITY = re.compile(rf"^\s*(?P<num>{_NUMBER})\s*(?P<unit>[^\s\d].*?)?\s*$", re.IGNORECASE)


def _split(text: str, what: str) -> tuple[float, str]:
    match = _QUANTITY.match(text)
    if not match:
        raise UnitError(f"cannot read {what} {text!r}: expected a number with an optional unit")
    return float(match["num"]), (match["unit"] or "")


def _prefix_factor(prefix: str, text: str, what: str) -> float:
    if prefix in _BINARY:
        return _BINARY[prefix]
    if prefix in _DECIMAL:
        return _DECIMAL[prefix]
    raise UnitError(f"unknown unit prefix {prefix!r} in {what} {text!r}")


def _size_unit(unit: str, text: str, what: str) -> float:
    """Bytes per one ``unit`` of size: ``KiB``, ``GB``, ``Mb``, ``bit`` ..."""
    if unit.lower() in ("bit", "bits"):
        return 0.125
    if unit.lower() in ("byte", "bytes"):
        return 1.0
    if unit.endswith("B"):
        return _prefix_factor(unit[:-1], text, what)
    if unit.endswith("b"):
        return _prefix_factor(unit[:-1], text, what) / 8.0
    raise UnitError(f"unknown unit {unit!r} in {what} {text!r} (use B, KiB, MB, GiB, ...)")


def _checked(value: float, text, what: str, allow_inf: bool = False) -> float:
    if math.isnan(value) or (math.isinf(value) and not allow_inf):
        raise UnitError(f"{what} {text!r} is not a finite number")
    return value


def _number_and_unit(value, what: str, kind: str) -> tuple[float, str]:
    """(number, unit) in ``value``, a number (unit ``''``) or a string such as ``'64MiB'``;
    anything else (a bool too) is not a ``kind``."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UnitError(f"{what} {value!r} is not a {kind}")
    if isinstance(value, str):
        return _split(value, what)
    return float(value), ""


def parse_size(value: str | float | int, what: str = "size") -> float:
    """Bytes in ``value``: ``'64MiB'`` -> 67108864.0, ``'1e9'`` -> 1e9, ``'8Gb'`` -> 1e9."""
    number, unit = _number_and_unit(value, what, "size")
    size = _checked(number * (_size_unit(unit, value, what) if unit else 1.0), value, what)
    return _bounded(size, value, what)


def _bounded(size: float, text, what: str) -> float:
    if 0 < size < 1:     # a message moves whole bytes: half a byte (or '1b', a bit) is a typo
        raise UnitError(f"{what} {text!r} is {size:.3g} bytes: a size is 0 or at least "
                        f"1 byte")
    if size > MAX_SIZE:
        raise UnitError(f"{what} {text!r} is {size:.3g} bytes, more than the limit of "
                        f"1 EiB (2**60 bytes)")
    return size


#: The smallest positive rate (bytes/s): 1 EiB at this rate still takes a finite time
#: (~1e27 s), where a subnormal rate (1e-310 B/s) would overflow the engine's divisions
#: into warnings and a misleading "never finished".
MIN_RATE = 1e-9


def _slowest(rate: float, text, what: str) -> float:
    if 0 < rate < MIN_RATE:
        err = UnitError(f"{what} {text!r} is {rate:.3g} bytes/s, below the smallest rate "
                        f"netsim simulates ({MIN_RATE:g} bytes/s)")
        err.reason = f"{rate:.3g} bytes/s is below the smallest rate, {MIN_RATE:g} bytes/s"
        raise err
    return rate


def parse_rate(value: str | float | int, what: str = "rate") -> float:
    """Bytes per second in ``value``: ``'400Gbps'`` -> 5e10, ``'25GB/s'`` -> 2.5e10.
    A positive rate must be at least :data:`MIN_RATE`."""
    return _slowest(_parse_rate(value, what), value, what)


def _parse_rate(value: str | float | int, what: str) -> float:
    number, unit = _number_and_unit(value, what, "rate")
    if not unit:
        return _checked(number, value, what)
    if unit.endswith("/s"):
        per_second = unit[:-2]
    elif unit.endswith("ps"):
        per_second = unit[:-2]  # 'Gbps' -> 'Gb' (bits), 'GBps' -> 'GB' (bytes)
    else:
        raise UnitError(f"unknown rate unit {unit!r} in {what} {value!r} (use GB/s, Gbps, ...)")
    return _checked(number * _size_unit(per_second, value, what), value, what)


def parse_time(value: str | float | int, what: str = "time") -> float:
    """Seconds in ``value``: ``'711ns'`` -> 7.11e-7, ``'1us'`` -> 1e-6, ``0.5`` -> 0.5."""
    number, unit = _number_and_unit(value, what, "time")
    if not unit:
        return _checked(number, value, what)
    if unit not in _TIME:
        raise UnitError(f"unknown time unit {unit!r} in {what} {value!r} (use s, ms, us, ns)")
    factor = _TIME[unit]
    # Divide by the reciprocal for sub-second units so '711ns' is exactly 711/1e9.
    seconds = number / round(1.0 / factor) if factor < 1 else number * factor
    return _checked(seconds, value, what)


def parse_quantity(kind: str, value, what: str | None = None) -> float:
    """Dispatch on ``kind`` in ``{'size', 'rate', 'time'}``."""
    parser = {"size": parse_size, "rate": parse_rate, "time": parse_time}[kind]
    return parser(value, what or kind)


def _scaled(value: float, steps: list[tuple[float, str]], digits: int) -> str:
    magnitude = abs(value)
    for factor, name in steps:
        if magnitude >= factor:
            return f"{value / factor:.{digits}g} {name}"
    factor, name = steps[-1]
    return f"{value / factor:.{digits}g} {name}"


def format_size(nbytes: float, binary: bool = True, digits: int = 4) -> str:
    """``67108864`` -> ``'64 MiB'`` (binary) or ``'67.11 MB'`` (decimal)."""
    if binary:
        steps = [(2.0**40, "TiB"), (2.0**30, "GiB"), (2.0**20, "MiB"), (2.0**10, "KiB"), (1, "B")]
    else:
        steps = [(1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"), (1, "B")]
    return _scaled(nbytes, steps, digits)


def format_rate(bytes_per_s: float, digits: int = 4) -> str:
    """``2.5e10`` -> ``'25 GB/s'`` (decimal units, as vendors quote link rates)."""
    return _scaled(bytes_per_s, [(1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"),
                                 (1, "B/s")], digits)


def format_time(seconds: float, digits: int = 4) -> str:
    """``7.11e-7`` -> ``'711 ns'``."""
    if seconds == 0:
        return "0 s"
    return _scaled(seconds, [(1.0, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")],
                   digits)
