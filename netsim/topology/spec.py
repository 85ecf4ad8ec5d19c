"""Topology spec strings: ``mesh:8x4,bw=12.5GB/s,lat=711ns,links=4`` -> a Topology.

Grammar: ``FAMILY[:ARGS][,OPTION=VALUE]...`` where ARGS is the family's shape (``8``,
``8x4``, ``4x4x4``) or itself an option (``fattree:k=8``), or a path to a topology YAML
file (a file that exists, or a name ending in ``.yaml``/``.yml``) optionally followed by
options, or a catalogue preset name followed by options (``galaxy-wh,links=1``).

=============  ================================  =========================================
family         example                           family-specific options
=============  ================================  =========================================
ring           ``ring:8``                        ``bidirectional`` (true)
mesh / torus   ``mesh:8x4``, ``torus:4x4x4``
fattree        ``fattree:8``, ``fattree:k=8``    ``host_bw``
leafspine      ``leafspine:hosts=16,leaves=8,    ``hosts``, ``leaves``, ``spines``,
               spines=4,over=2``                 ``over`` (oversubscription, 1)
nvswitch       ``nvswitch:8,switches=4``         ``switches`` (1), ``links_per_switch``
                                                 (``5/4/4/5``), ``reduce``, ``reduce_bw``
fullmesh       ``fullmesh:8``
=============  ================================  =========================================

Every family takes ``bw``/``bandwidth`` (bytes/s per link per direction; per GPU in total
for nvswitch; default 50 GB/s), ``lat``/``latency`` (s per link; default 0 s), ``links``
(parallel links per neighbour pair per direction, default 1) and ``name``.

:func:`netsim.topology.parse_topology` (in :mod:`netsim.topology.io`) reads a whole spec:
files and presets there, families here. Other modules add families with
:func:`register_family`; a factory receives the ARGS
text and a :class:`SpecOptions` (a dict of the options) and returns a Topology.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from ..errors import TopologyError, UnitError
from ..units import parse_rate, parse_time
from ._generate import DEFAULT_BANDWIDTH, DEFAULT_LATENCY
from .grid import mesh, torus
from .model import Topology
from .ring import ring
from .switched import full_mesh, nvswitch
from .trees import fat_tree, leaf_spine

__all__ = ["register_family", "FAMILIES", "OPTION_ALIASES", "SpecOptions",
           "split_spec", "family_names"]

#: Short option names and the canonical names they stand for.
OPTION_ALIASES = {"bw": "bandwidth", "lat": "latency", "over": "oversubscription",
                  "host_bw": "host_bandwidth", "reduce_bw": "reduce_bandwidth",
                  "hosts": "hosts_per_leaf"}

Factory = Callable[[str, "SpecOptions"], Topology]

#: Family name -> factory(args, options); aliases map to the same factory.
FAMILIES: dict[str, Factory] = {}
_MISSING = object()


def register_family(name: str, factory: Factory, aliases: tuple[str, ...] = ()) -> None:
    """Make ``name`` (and ``aliases``) usable in spec strings; replaces an existing entry."""
    for key in (name, *aliases):
        FAMILIES[key.lower()] = factory


def family_names() -> list[str]:
    """Every registered family name and alias, sorted."""
    return sorted(FAMILIES)


class SpecOptions(dict):
    """The options of a spec as a dict (canonical name -> value) that records what was read.

    Values are strings as written, except ``bandwidth`` and ``latency`` (already parsed to
    bytes/s and s and checked) and ``links`` (an int >= 1). Typed getters raise a one-line
    :class:`TopologyError` naming the option as the user spelled it.
    """

    def __init__(self, pairs: Mapping[str, Any], spelled: Mapping[str, str] | None = None):
        super().__init__()
        self.spelled = dict(spelled or {})
        self.used: set[str] = set()
        for key, value in pairs.items():
            self[key] = value
        for key, check in (("bandwidth", self._rate), ("latency", self._time),
                           ("links", self._int)):
            if key in self:
                dict.__setitem__(self, key, check(key, dict.__getitem__(self, key)))

    # reading marks the option as used, so unknown options can be reported afterwards
    def __getitem__(self, key: str) -> Any:
        self.used.add(key)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.used.add(key)
        return super().get(key, default)

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        self.used.add(key)
        return super().pop(key) if default is _MISSING else super().pop(key, default)

    def unused(self) -> list[str]:
        """Options nobody read, in the order given."""
        return [k for k in self if k not in self.used]

    def error(self, key: str, message: str) -> TopologyError:
        value = super().get(key)
        shown = f"={value}" if isinstance(value, str) else f"={value!r}"
        return TopologyError(f"option {self.spelled.get(key, key)}{shown}: {message}")

    def _rate(self, key: str, value: Any) -> float:
        try:
            rate = parse_rate(value, key)
        except UnitError as err:   # a well-formed rate that is too small says so
            raise self.error(key, getattr(err, "reason", None)
                             or "expected a rate such as 25GB/s or 400Gbps") from None
        if not (math.isfinite(rate) and rate > 0):
            raise self.error(key, "must be a positive finite rate (bytes/s)")
        if rate > MAX_LINK_RATE:
            raise self.error(key, f"{rate:.3g} B/s per link is above the limit of 1 EB/s "
                                  f"(a unit typo?)")
        return rate

    def _time(self, key: str, value: Any) -> float:
        try:
            seconds = parse_time(value, key)
        except UnitError:
            raise self.error(key, "expected a time such as 711ns or 1us") from None
        if not (math.isfinite(seconds) and seconds >= 0):
            raise self.error(key, "must be a finite time >= 0")
        return seconds

    def _int(self, key: str, value: Any, minimum: int = 1) -> int:
        try:
            number = int(str(value).strip()) if not isinstance(value, int) else value
        except ValueError:
            number = None
        if number is None or isinstance(value, bool) or number < minimum:
            raise self.error(key, f"must be an integer >= {minimum}")
        return number

    # typed getters for factories
    def rate(self, key: str, default: Any = _MISSING) -> Any:
        """Bytes/s of option ``key`` (or ``default`` when absent)."""
        value = self._take(key, default)
        return value if value is default else self._rate(key, value)

    def time(self, key: str, default: Any = _MISSING) -> Any:
        """Seconds of option ``key`` (or ``default`` when absent)."""
        value = self._take(key, default)
        return value if value is default else self._time(key, value)

    def int(self, key: str, default: Any = _MISSING, minimum: int = 1) -> Any:
        """Integer >= ``minimum`` of option ``key`` (or ``default`` when absent)."""
        value = self._take(key, default)
        return value if value is default else self._int(key, value, minimum)

    def float(self, key: str, default: Any = _MISSING) -> Any:
        """Positive finite number of option ``key`` (or ``default`` when absent)."""
        value = self._take(key, default)
        if value is default:
            return value
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise self.error(key, "must be a positive number")
        return number

    def bool(self, key: str, default: Any = _MISSING) -> Any:
        """Boolean of option ``key``: true/false, yes/no, on/off, 1/0."""
        value = self._take(key, default)
        if value is default or isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in ("true", "yes", "on", "1"):
            return True
        if text in ("false", "no", "off", "0"):
            return False
        raise self.error(key, "must be true or false")

    def _take(self, key: str, default: Any) -> Any:
        if key in self:
            return self[key]
        if default is _MISSING:
            raise TopologyError(f"missing option {key!r}")
        return default


def split_spec(spec: str) -> tuple[str, str, list[tuple[str, str]]]:
    """``'mesh:8x4,bw=1GB/s'`` -> ``('mesh', '8x4', [('bw', '1GB/s')])``.

    An ARGS part containing ``=`` is an option (``fattree:k=8``); an option without ``=``
    is a flag set to ``'true'`` (``nvswitch:8,reduce``).
    """
    first, *rest = [token.strip() for token in spec.split(",")]
    head, _, args = first.partition(":")
    if "=" in args:
        rest.insert(0, args)
        args = ""
    options = []
    for token in rest:
        if not token:
            raise TopologyError("empty option (two commas in a row?)")
        key, eq, value = token.partition("=")
        options.append((key.strip(), value.strip() if eq else "true"))
    return head.strip(), args.strip(), options


def _options(pairs: list[tuple[str, str]], defaults: Mapping[str, Any] | None,
             overrides: Mapping[str, Any] | None) -> SpecOptions:
    """Merge defaults < spec options < overrides into canonical names."""
    merged: dict[str, Any] = {OPTION_ALIASES.get(k, k): v for k, v in (defaults or {}).items()}
    spelled: dict[str, str] = {}
    for key, value in pairs:
        canon = OPTION_ALIASES.get(key.lower(), key.lower())
        if canon in spelled:
            raise TopologyError(f"option {key!r} is given twice")
        spelled[canon] = key
        merged[canon] = value
    for key, value in (overrides or {}).items():
        canon = OPTION_ALIASES.get(key, key)
        merged[canon] = value
    return SpecOptions(merged, spelled)


# -- built-in families -------------------------------------------------------------------

def _count(args: str, options: SpecOptions, key: str, family: str, example: str) -> int:
    """A single positional count (``ring:8``) or the option ``key=8``."""
    if args:
        if key in options:
            raise TopologyError(f"{key} given twice ({args!r} and {key}=)")
        try:
            return int(args)
        except ValueError:
            raise TopologyError(f"{family}: {key} must be an integer, got {args!r} "
                                f"(e.g. {example})") from None
    if key not in options:
        raise TopologyError(f"{family} needs {key}, e.g. {example}")
    return options.int(key, minimum=0)


#: Sanity limits: a grid spec above a million chips or a link above 1 EB/s is a typo, and
#: would otherwise start allocating (1e10 nodes) or print meaningless numbers.
MAX_GRID_NODES = 1 << 20
MAX_LINK_RATE = 1e18


def _dims(args: str, family: str) -> tuple[int, ...]:
    if not args:
        raise TopologyError(f"{family} needs dims, e.g. {family}:8x4")
    try:
        dims = tuple(int(part) for part in args.lower().split("x"))
    except ValueError:
        raise TopologyError(f"{family}: dims must look like 8x4 or 4x4x4, got {args!r}") from None
    if math.prod(dims) > MAX_GRID_NODES:
        raise TopologyError(f"{family}: {math.prod(dims):.3g} chips is above the limit of "
                            f"{MAX_GRID_NODES} chips per grid")
    return dims


def _common(options: SpecOptions) -> dict[str, Any]:
    return {"bandwidth": options.get("bandwidth", DEFAULT_BANDWIDTH),
            "latency": options.get("latency", DEFAULT_LATENCY),
            "name": options.get("name")}


def _ring(args: str, options: SpecOptions) -> Topology:
    return ring(_count(args, options, "n", "ring", "ring:8"), links=options.get("links", 1),
                bidirectional=options.bool("bidirectional", True), **_common(options))


def _mesh(args: str, options: SpecOptions) -> Topology:
    return mesh(_dims(args, "mesh"), links=options.get("links", 1), **_common(options))


def _torus(args: str, options: SpecOptions) -> Topology:
    return torus(_dims(args, "torus"), links=options.get("links", 1), **_common(options))


def _fat_tree(args: str, options: SpecOptions) -> Topology:
    return fat_tree(_count(args, options, "k", "fattree", "fattree:k=8"),
                    links=options.get("links", 1),
                    host_bandwidth=options.rate("host_bandwidth", None), **_common(options))


def _leaf_spine(args: str, options: SpecOptions) -> Topology:
    if args:
        raise TopologyError(f"leafspine takes options only, e.g. "
                            f"leafspine:hosts=16,leaves=8,spines=4 (got {args!r})")
    need = {k: options.int(k) if k in options else None
            for k in ("hosts_per_leaf", "leaves", "spines")}
    missing = [("hosts" if k == "hosts_per_leaf" else k) for k, v in need.items() if v is None]
    if missing:
        raise TopologyError(f"leafspine needs {', '.join(missing)}, e.g. "
                            f"leafspine:hosts=16,leaves=8,spines=4")
    return leaf_spine(need["hosts_per_leaf"], need["leaves"], need["spines"],
                      oversubscription=options.float("oversubscription", 1.0),
                      links=options.get("links", 1), **_common(options))


def _nvswitch(args: str, options: SpecOptions) -> Topology:
    per_switch = options.get("links_per_switch")
    if per_switch is not None:
        try:
            per_switch = tuple(int(p) for p in str(per_switch).replace("x", "/").split("/"))
        except ValueError:
            raise options.error("links_per_switch", "expected counts such as 5/4/4/5") from None
    return nvswitch(_count(args, options, "gpus", "nvswitch", "nvswitch:8"),
                    switches=options.int("switches", 1), links=options.get("links"),
                    links_per_switch=per_switch, reduce=options.bool("reduce", False),
                    reduce_bandwidth=options.rate("reduce_bandwidth", None),
                    **_common(options))


def _full_mesh(args: str, options: SpecOptions) -> Topology:
    return full_mesh(_count(args, options, "n", "fullmesh", "fullmesh:8"),
                     links=options.get("links", 1), **_common(options))


_CANONICAL = ("ring", "mesh", "torus", "fattree", "leafspine", "nvswitch", "fullmesh")
register_family("ring", _ring)
register_family("mesh", _mesh)
register_family("torus", _torus)
register_family("fattree", _fat_tree, aliases=("fat_tree", "fat-tree"))
register_family("leafspine", _leaf_spine, aliases=("leaf_spine", "leaf-spine"))
register_family("nvswitch", _nvswitch)
register_family("fullmesh", _full_mesh, aliases=("full_mesh", "full-mesh"))
