"""Machines from text and back: spec strings, topology files, presets, networkx and GraphML.

:func:`parse_topology` reads any machine a user names: a spec string of a generator family
(:mod:`netsim.topology.spec`: ``mesh:8x4,bw=12.5GB/s``), a catalogue preset
(``galaxy-wh,links=1``) or a file (topology YAML, a SimGrid platform, an ASTRA-sim
network). A file's ``generator`` is itself any such name, so files and spec strings are
read by one owner here.

A topology YAML file describes a machine by a generator spec, by explicit nodes and
links, or by both (a generator's machine plus extra nodes and links)::

    name: my-machine
    description: two GPUs and a switch          # optional
    sources: ["vendor datasheet, p. 3"]         # optional, where the numbers come from
    generator: "mesh:8x4,links=4"               # optional: any spec string
    defaults: {bandwidth: 25GB/s, latency: 1us, links: 1}
    nodes:
      - {name: gpu0, kind: endpoint, coord: [0, 0]}
      - {name: sw0, kind: switch, reduce: true, reduce_bandwidth: 400GB/s}
    links:
      - {src: gpu0, dst: sw0, bandwidth: 25GB/s, latency: 1us, duplex: true, count: 18}
    endpoints: [gpu0]                           # optional natural rank order
    variants:                                   # optional: named sets of spec options,
      rated: {bandwidth: 50GB/s}                #   chosen by a flag (my-machine,rated)
    library:                                    # optional: what the vendor library runs
      name: "NCCL 2.30"                         #   (the default --algo on this machine)
      source: "NVIDIA/nccl src/graph/tuning.cc"
      algorithms: {allreduce: nccl, alltoall: direct}
    chip:                                       # optional: one chip's compute and memory
      name: H100 SXM
      bf16: 989TFLOP/s                          #   (netsim plan); dense, no sparsity
      fp8: 1979TFLOP/s
      memory: 80GiB
      memory_bandwidth: 3.35TB/s
      source: "NVIDIA H100 datasheet"

Precedence of bandwidth / latency / links, highest first: a value on the link itself; an
override passed to :func:`load_topology_file` (``galaxy-wh,links=1``); an option in the
``generator`` spec; the file's ``defaults``; the generator's own default (50 GB/s, 0 s, 1).
``count`` on a link is its number of parallel links per direction, each of ``bandwidth``.
"""

from __future__ import annotations

import contextvars
import io
import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping

import numpy as np
import yaml
from pydantic import BeforeValidator, ConfigDict, Field, ValidationError

from ..errors import (InputError, NetsimError, TopologyError, UnitError, did_you_mean,
                      unknown_name)
from ..outputs import to_jsonable, write_atomic
from ..units import parse_rate, parse_time
from .._inputs.jsonio import loads_json
from .._inputs.schema import NoBoolNumbers, unit_json_schema
from .._inputs.yamlio import load_yaml as _load_yaml_text, read_text, yaml_line
from .catalogue import find_preset, preset_names
from .simgrid import is_simgrid_text, topology_from_simgrid
from .spec import _CANONICAL, FAMILIES, OPTION_ALIASES, _options, family_names, split_spec
from .model import Topology, TopologyBuilder

__all__ = ["from_networkx", "to_graphml", "read_graphml", "load_topology_file", "load_yaml",
           "topology_from_dict", "topology_to_dict", "save_topology_file", "topology_file_schema",
           "check_connected", "TopologyFile", "NodeSpec", "LinkSpec", "Defaults", "LibrarySpec",
           "ChipSpec", "parse_topology", "load_preset", "preset_table"]

# Option names a preset or file override may carry besides the generator's own options.
_LINK_OPTIONS = ("bandwidth", "latency", "links")


# -- schema ------------------------------------------------------------------------------

def _positive_rate(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value  # let pydantic report the wrong type
    try:
        rate = parse_rate(value)
    except UnitError as err:       # a well-formed rate that is too small says so
        raise ValueError(getattr(err, "reason", None)
                         or "must be a rate such as 25GB/s or 400Gbps") from None
    if not (math.isfinite(rate) and rate > 0):
        raise ValueError("must be a positive finite rate (bytes/s)")
    return rate


def _latency(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return value
    try:
        seconds = parse_time(value)
    except UnitError:
        raise ValueError("must be a time such as 711ns or 1us") from None
    if not (math.isfinite(seconds) and seconds >= 0):
        raise ValueError("must be a finite time >= 0")
    return seconds


def _name(value: Any) -> Any:
    # YAML reads `- 0` as an int; node names are strings.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Rate = Annotated[float, BeforeValidator(_positive_rate),
                 unit_json_schema("bytes/s", "450GB/s", exclusive=True)]
Time = Annotated[float, BeforeValidator(_latency), unit_json_schema("s", "711ns")]
NodeName = Annotated[str, BeforeValidator(_name)]


class _Strict(NoBoolNumbers):       # bandwidth: yes is not 1 B/s
    model_config = ConfigDict(extra="forbid")


class Defaults(_Strict):
    """Values for links that do not give their own (bytes/s, s, parallel links)."""

    bandwidth: Rate | None = None
    latency: Time | None = None
    links: int | None = Field(default=None, ge=1)


class NodeSpec(_Strict):
    """One node; ``attrs`` holds free-form attributes (``tier``, ``pod`` ...)."""

    name: NodeName
    kind: Literal["endpoint", "switch"] = "endpoint"
    # finite: a NaN or infinite coordinate made the figures fail (matplotlib's size check)
    coord: list[Annotated[float, Field(allow_inf_nan=False)]] | None = None
    reduce: bool = False
    reduce_bandwidth: Rate | None = None
    attrs: dict[str, Any] = Field(default_factory=dict)


class LinkSpec(_Strict):
    """A cable (``duplex: true``, two directions) or a one-way link, ``count`` times."""

    src: NodeName
    dst: NodeName
    bandwidth: Rate | None = None
    latency: Time | None = None
    duplex: bool = True
    count: int | None = Field(default=None, ge=1)


class LibrarySpec(_Strict):
    """What the machine's own collective library runs: the default ``--algo`` on it.

    ``algorithms`` maps an op to a registered netsim algorithm name (checked when a run
    resolves it: the topology layer does not know the algorithms); ops it leaves out run
    ``auto``. ``options`` go to the algorithm's ``AlgoOptions.extra`` when the default is
    used (a user's own keys win)."""

    name: str
    source: str | list[str]
    algorithms: dict[str, str] = Field(min_length=1)
    options: dict[str, Any] = Field(default_factory=dict)


def _flops(value: Any) -> Any:
    # '989TFLOP/s', '2.25PFLOP/s' or a number of FLOP/s
    if isinstance(value, str):
        text = value.strip().replace(" ", "")
        scale = {"TFLOP/s": 1e12, "PFLOP/s": 1e15, "GFLOP/s": 1e9, "FLOP/s": 1.0}
        for unit, factor in scale.items():
            if text.endswith(unit):
                try:
                    return float(text[:-len(unit)]) * factor
                except ValueError:
                    break
        raise ValueError("must be a compute rate such as 989TFLOP/s")
    return value


def _capacity(value: Any) -> Any:
    if isinstance(value, str):
        from ..units import parse_size

        try:
            return parse_size(value)
        except UnitError:
            raise ValueError("must be a size such as 80GiB") from None
    return value


def _flops_schema():
    from pydantic import WithJsonSchema

    return WithJsonSchema({"anyOf": [{"type": "number", "exclusiveMinimum": 0},
                                     {"type": "string",
                                      "pattern": r"^\s*[0-9.eE+-]+\s*[TPG]?FLOP/s\s*$"}],
                           "description": "FLOP/s: a number, or a string such as "
                                          "'989TFLOP/s'"})


Flops = Annotated[float, BeforeValidator(_flops), Field(gt=0, allow_inf_nan=False),
                  _flops_schema()]
Capacity = Annotated[float, BeforeValidator(_capacity), Field(gt=0, allow_inf_nan=False),
                     unit_json_schema("bytes", "80GiB", exclusive=True)]


class ChipSpec(_Strict):
    """One chip's dense compute (FLOP/s, no sparsity), memory capacity (bytes) and memory
    bandwidth (bytes/s), with the source of the figures: what ``netsim plan`` prices
    compute and memory with. ``fp8`` is absent on chips without FP8 units."""

    name: str
    bf16: Flops
    fp8: Flops | None = None
    memory: Capacity
    memory_bandwidth: Rate
    source: str | list[str]


class TopologyFile(_Strict):
    """A topology YAML file; see the module docstring."""

    name: str | None = None
    description: str | None = None
    sources: list[str] = Field(default_factory=list)
    generator: str | None = None
    defaults: Defaults = Field(default_factory=Defaults)
    nodes: list[NodeSpec] = Field(default_factory=list)
    links: list[LinkSpec] = Field(default_factory=list)
    endpoints: list[NodeName] | None = None
    calibration: dict[str, Any] = Field(default_factory=dict)   # see netsim/calibration.py
    library: LibrarySpec | None = None     # the vendor library's choice (default --algo)
    chip: ChipSpec | None = None           # one chip's compute and memory (netsim plan)
    # name -> spec options (bandwidth, calibration keys...) that the flag ``preset,name``
    # applies: a documented alternative one word away (galaxy-bh,rated)
    variants: dict[str, dict[str, Any]] = Field(default_factory=dict)
    version: int | None = Field(default=None, ge=1)   # file format (TOPOLOGY_VERSION)


#: The topology file format this netsim reads; files without ``version:`` are read as it.
TOPOLOGY_VERSION = 1


def topology_file_schema() -> dict[str, Any]:
    """The JSON Schema of topology files (for editors)."""
    return TopologyFile.model_json_schema()


# -- one-line errors ---------------------------------------------------------------------

def _loc_text(loc: tuple) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


_SUB_MODELS = {"nodes": NodeSpec, "links": LinkSpec, "defaults": Defaults,
               "library": LibrarySpec, "chip": ChipSpec}


def _pydantic_message(err: ValidationError) -> tuple[tuple, str]:
    first = err.errors()[0]
    loc, msg, kind = tuple(first["loc"]), first["msg"], first["type"]
    msg = msg.removeprefix("Value error, ")
    if kind == "extra_forbidden":
        model = _SUB_MODELS.get(loc[0], TopologyFile) if len(loc) > 1 else TopologyFile
        return loc, f"unknown field (allowed: {', '.join(model.model_fields)})"
    if kind == "missing":
        return loc, "missing (required)"
    msg = msg[:1].lower() + msg[1:]
    return loc, f"{msg}, got {first.get('input')!r}"


class _FileErrors:
    """Formats ``file: field.path: message (line N)`` messages for one file."""

    def __init__(self, source: str, root: yaml.Node | None) -> None:
        self.source, self.root = source, root

    def __call__(self, loc: tuple, message: str, error=TopologyError) -> NetsimError:
        line = yaml_line(self.root, loc) if loc else None
        where = f"{_loc_text(loc)}: " if loc else ""
        suffix = f" (line {line})" if line else ""
        return error(f"{self.source}: {where}{message}{suffix}")


# -- loading -----------------------------------------------------------------------------

_LOADING: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar("_LOADING",
                                                                           default=())


def load_topology_file(path: str | Path, overrides: Mapping[str, Any] | None = None
                       ) -> Topology:
    """Read and check a topology YAML file (see the module docstring).

    ``overrides`` are spec options (``{'bandwidth': '25GB/s', 'links': 1, ...}``, canonical
    names): bandwidth/latency/links replace the generator's options and the file's
    ``defaults``; ``name`` renames the topology; any other option goes to the generator.
    Every error is a one-line :class:`InputError` naming the file, the field and the value.
    """
    source = str(path)
    text = read_text(path, "topology file")
    if is_simgrid_text(text):          # a SimGrid platform (XML): its own format
        if overrides:
            raise TopologyError(f"{source}: a SimGrid platform file takes no options "
                                f"(got {', '.join(sorted(overrides))})")
        return topology_from_simgrid(text, source)
    from . import tt_metal

    if tt_metal.is_mesh_graph_textproto(text):     # tt-metal's own machine descriptions
        _no_options(overrides, source, "a tt-metal mesh graph descriptor")
        return topology_from_dict(tt_metal.document_from_tt_metal_text(text, source), source)
    data, root = _load_yaml_text(text, source)
    if tt_metal.is_tt_metal_data(data):
        _no_options(overrides, source, "a tt-metal descriptor")
        return topology_from_dict(tt_metal.document_from_tt_metal(data, source), source)
    if isinstance(data, dict) and "npus_count" in data:
        # an ASTRA-sim analytical network file: its own format, read where any file is
        from .astra import topology_from_astra

        if overrides:
            raise TopologyError(f"{source}: an ASTRA-sim network file takes no options "
                                f"(got {', '.join(sorted(overrides))})")
        return topology_from_astra(data, source)
    key = str(Path(path).resolve())
    if key in _LOADING.get():
        raise TopologyError(f"topology file {source!r} includes itself")
    token = _LOADING.set(_LOADING.get() + (key,))
    try:
        return topology_from_dict(data, source, overrides, _root=root,
                                  default_name=Path(path).stem)
    finally:
        _LOADING.reset(token)


def _no_options(overrides: Mapping[str, Any] | None, source: str, what: str) -> None:
    if overrides:
        raise TopologyError(f"{source}: {what} takes no options "
                            f"(got {', '.join(sorted(overrides))})")


def topology_from_dict(data: Any, source: str = "<topology>",
                       overrides: Mapping[str, Any] | None = None, *, _root=None,
                       default_name: str | None = None) -> Topology:
    """A Topology from the parsed content of a topology file; ``source`` names it in errors."""
    fail = _FileErrors(source, _root)
    if not isinstance(data, dict):
        raise fail((), f"expected a mapping of fields at the top level, got "
                       f"{type(data).__name__}")
    try:
        spec = TopologyFile.model_validate(data)
    except ValidationError as err:
        loc, message = _pydantic_message(err)
        raise fail(loc, message, InputError) from None
    if spec.version is not None and spec.version > TOPOLOGY_VERSION:
        raise fail(("version",), f"topology file format {spec.version} is newer than this "
                                 f"netsim reads (up to {TOPOLOGY_VERSION}): upgrade netsim",
                   InputError)
    from .calibration import apply_calibration, split_calibration

    overrides, variant = _with_variants(spec, dict(overrides or {}), fail)
    calibration, overrides = split_calibration(
        spec.calibration, overrides, lambda k, msg: fail(("calibration", k), msg))
    name = str(overrides.pop("name", None) or spec.name or default_name or "topology")
    defaults = _merged_defaults(spec.defaults, overrides, fail)
    base = _generated(spec, overrides, fail)
    if base is not None and not spec.nodes and not spec.links and spec.endpoints is None:
        meta = {**base.meta, **_meta(spec, source, variant)}
        return apply_calibration(replace(base, name=name, meta=meta), calibration)
    builder = TopologyBuilder(name, family="custom")
    if base is not None:
        builder.params = {"generator": spec.generator, "base_family": base.family,
                          **base.params}
        _copy_into(builder, base)
    _add_nodes(builder, spec.nodes, fail)
    _add_links(builder, spec.links, defaults, fail)
    builder.set_endpoints(_endpoints(builder, spec, base, fail))
    builder.meta = _meta(spec, source, variant)
    try:
        topo = builder.build()
        check_connected(topo)
    except TopologyError as err:
        raise TopologyError(f"{source}: {err}") from None
    return apply_calibration(topo, calibration)


def _with_variants(spec: TopologyFile, overrides: dict, fail) -> tuple[dict, list[str]]:
    """(``overrides`` with every variant flag in them, ``galaxy-bh,rated``, replaced by
    the variant's options, the variants chosen). Options given beside the flag win."""
    out = {k: v for k, v in overrides.items() if k not in spec.variants}
    chosen = []
    for name in [k for k in overrides if k in spec.variants]:
        flag = str(overrides[name]).strip().lower()
        if flag in ("false", "no", "off", "0"):
            continue
        if flag not in ("true", "yes", "on", "1"):
            # (no quotes around the value: the CLI shortens long quoted spans)
            raise fail(("variants", name), f"a flag ({name} or {name}=false), got "
                                           f"{name}={overrides[name]}", InputError)
        chosen.append(name)
        for key, value in spec.variants[name].items():
            out.setdefault(OPTION_ALIASES.get(str(key).lower(), str(key).lower()), value)
    return out, chosen


def _meta(spec: TopologyFile, source: str, variant: list[str] | None = None
          ) -> dict[str, Any]:
    meta: dict[str, Any] = {"source_file": source}
    if variant:
        meta["variant"] = ",".join(variant)
    if spec.description:
        meta["description"] = spec.description
    if spec.sources:
        meta["sources"] = list(spec.sources)
    if spec.library is not None:
        meta["library"] = spec.library.model_dump()
    if spec.chip is not None:
        meta["chip"] = spec.chip.model_dump()
    return meta


def _merged_defaults(defaults: Defaults, overrides: dict, fail) -> Defaults:
    """The file's defaults with bandwidth/latency/links overrides applied."""
    values = defaults.model_dump()
    for key in _LINK_OPTIONS:
        if key in overrides:
            values[key] = overrides[key]
    try:
        return Defaults.model_validate(values)
    except ValidationError as err:
        loc, message = _pydantic_message(err)
        raise fail((), f"override {_loc_text(loc)}: {message}") from None


def _generated(spec: TopologyFile, overrides: dict, fail) -> Topology | None:
    """The generator's topology with the file defaults below and the overrides above."""
    if spec.generator is None:
        extra = sorted(set(overrides) - set(_LINK_OPTIONS))
        if extra:
            raise fail((), f"option {extra[0]!r} needs a 'generator' in the file "
                           f"(this file takes only: {', '.join(_LINK_OPTIONS)}, name)")
        return None
    file_defaults = {k: v for k, v in spec.defaults.model_dump().items() if v is not None}
    try:
        return parse_topology(_beside_file(spec.generator), defaults=file_defaults,
                              overrides=overrides)
    except NetsimError as err:
        raise fail(("generator",), str(err), type(err)) from None


def _beside_file(generator: str) -> str:
    """A generator naming another topology file (``base.yaml,links=2``) reads it relative
    to the file being loaded, as every path inside a netsim file is; specs and preset
    names are returned as they are."""
    loading = _LOADING.get()
    head, sep, rest = generator.partition(",")
    if not loading or Path(head).is_absolute() or not head.lower().endswith((".yaml", ".yml")):
        return generator
    return str(Path(loading[-1]).parent / head) + sep + rest


def _copy_into(builder: TopologyBuilder, topo: Topology) -> None:
    for i, node in enumerate(topo.node_names):
        builder.add_node(node, switch=bool(topo.is_switch[i]), coord=topo.coords[i],
                         **topo.node_attrs[i])
    for lid in range(topo.num_links):
        builder.add_link(int(topo.link_src[lid]), int(topo.link_dst[lid]),
                         float(topo.bandwidth[lid]), float(topo.latency[lid]),
                         dim=int(topo.dim[lid]), sign=int(topo.sign[lid]),
                         wrap=bool(topo.wrap[lid]))


def _add_nodes(builder: TopologyBuilder, nodes: list[NodeSpec], fail) -> None:
    for i, node in enumerate(nodes):
        if node.name in builder._index:
            raise fail(("nodes", i, "name"), f"duplicate node {node.name!r}")
        attrs = dict(node.attrs)
        if node.reduce:
            attrs["reduce"] = True
        if node.reduce_bandwidth is not None:
            attrs["reduce_bandwidth"] = node.reduce_bandwidth
        builder.add_node(node.name, switch=node.kind == "switch", coord=node.coord, **attrs)


def _add_links(builder: TopologyBuilder, links: list[LinkSpec], defaults: Defaults,
               fail) -> None:
    from ..budget import require_topology

    # `count: 1000000000` is one short line: estimate every link before adding any.
    total = sum((link.count or defaults.links or 1) * (2 if link.duplex else 1)
                for link in links)
    require_topology(len(builder._names), total, f"topology {builder.name!r}")
    for i, link in enumerate(links):
        for end in ("src", "dst"):
            if getattr(link, end) not in builder._index:
                raise fail(("links", i, end), f"unknown node {getattr(link, end)!r}")
        if link.src == link.dst:
            raise fail(("links", i, "dst"), f"self-loop on node {link.src!r}")
        bandwidth = link.bandwidth if link.bandwidth is not None else defaults.bandwidth
        if bandwidth is None:
            raise fail(("links", i), "no bandwidth (give it on the link or in defaults)")
        latency = link.latency if link.latency is not None else (defaults.latency or 0.0)
        count = link.count or defaults.links or 1
        for _ in range(count):
            if link.duplex:
                builder.add_cable(link.src, link.dst, bandwidth, latency)
            else:
                builder.add_link(link.src, link.dst, bandwidth, latency)


def _endpoints(builder: TopologyBuilder, spec: TopologyFile, base: Topology | None,
               fail) -> list[int]:
    if spec.endpoints is None:
        order = [] if base is None else [int(e) for e in base.endpoints]
        first_new = 0 if base is None else base.num_nodes
        order += [i for i in range(first_new, len(builder._names)) if not builder._switch[i]]
        return order
    seen: set[str] = set()
    for i, node in enumerate(spec.endpoints):
        if node not in builder._index:
            raise fail(("endpoints", i), f"unknown node {node!r}")
        if builder._switch[builder._index[node]]:
            raise fail(("endpoints", i), f"node {node!r} is a switch, not an endpoint")
        if node in seen:
            raise fail(("endpoints", i), f"node {node!r} is listed twice")
        seen.add(node)
    return [builder._index[n] for n in spec.endpoints]


#: Short name of :func:`load_topology_file`.
load_yaml = load_topology_file


# -- spec strings: families, files and presets ------------------------------------------

def parse_topology(spec: str | Path, *, defaults: Mapping[str, Any] | None = None,
                   overrides: Mapping[str, Any] | None = None) -> Topology:
    """The Topology described by ``spec`` (see the module docstring for the grammar).

    ``defaults`` are options used when the spec does not give them and ``overrides``
    options that replace the spec's (both keyed by option name; values are strings or
    numbers). Defaults when nothing gives them: 50 GB/s per link, 0 s latency, 1 link.

    >>> parse_topology("mesh:8x4,bw=12.5GB/s,lat=711ns,links=4").num_links
    416
    >>> parse_topology("fattree:k=4").num_switches
    20
    """
    if isinstance(spec, Path):
        return load_topology_file(spec, overrides={**(defaults or {}), **(overrides or {})})
    text = str(spec).strip()
    path, options = _file_part(text)
    if path is not None:   # errors inside the file name the file
        try:
            given = dict(_options(options, None, None))
        except NetsimError as err:
            raise type(err)(f"topology {text!r}: {err}") from None
        return load_topology_file(path, overrides={**(defaults or {}), **given,
                                                   **(overrides or {})})
    try:
        return _parse(text, defaults, overrides)
    except NetsimError as err:
        if repr(text) in str(err):
            raise
        raise type(err)(f"topology {text!r}: {err}") from None


def _file_part(text: str) -> tuple[str | None, list[tuple[str, str]]]:
    """(path, options) when ``text`` names a topology file, else (None, [])."""
    if text and Path(text).is_file():
        return text, []
    first, _, rest = text.partition(",")
    if first.lower().endswith((".yaml", ".yml", ".xml")) or (first and Path(first).is_file()):
        try:
            return first, split_spec("file," + rest)[2] if rest else []
        except TopologyError as err:
            raise TopologyError(f"topology {text!r}: {err}") from None
    return None, []


def _parse(text: str, defaults, overrides) -> Topology:
    head, args, pairs = split_spec(text)
    factory = FAMILIES.get(head.lower())
    if factory is not None:
        options = _options(pairs, defaults, overrides)
        topo = factory(args, options)
        unused = options.unused()
        if unused:
            raise TopologyError(f"unknown option {options.spelled.get(unused[0], unused[0])!r} "
                                f"for {head.lower()}")
        return topo
    preset = _find_preset(head)
    if preset is not None:
        if args:
            raise TopologyError(f"preset {head!r} takes options (name,opt=value), not "
                                f"{args!r}")
        options = _options(pairs, defaults, overrides)
        return load_topology_file(preset, overrides=dict(options))
    raise _unknown(text, head)


def _find_preset(name: str) -> Path | None:
    return find_preset(name) if name else None


def _unknown(text: str, head: str) -> TopologyError:
    names = family_names() + preset_names()
    hint = did_you_mean(head.lower(), names,
                        otherwise=f" (families: {', '.join(_CANONICAL)}; or a preset name "
                                  f"or a .yaml file)")
    return TopologyError(f"unknown topology {text!r}{hint}")


def load_preset(name: str, overrides: Mapping[str, Any] | None = None):
    """The Topology of preset ``name``; ``overrides`` as in a spec (``{'links': 1}``)."""
    path = find_preset(name)
    if path is None:
        raise unknown_name("machine preset", name, preset_names())
    return load_topology_file(path, overrides=dict(overrides or {}))


def preset_table() -> list[dict[str, Any]]:
    """One row per preset: name, endpoints, switches, links (directed), description, sources.

    Sources are joined with ``'; '``. A preset that fails to load shows its error as the
    description, so one broken file does not hide the catalogue.
    """
    rows = []
    for name in preset_names():
        try:
            topo = load_preset(name)
        except Exception as err:  # noqa: BLE001 - shown to the user, not swallowed silently
            rows.append({"name": name, "endpoints": None, "switches": None, "links": None,
                         "description": f"error: {err}", "sources": ""})
            continue
        rows.append({"name": name, "endpoints": int(topo.num_endpoints),
                     "switches": int(topo.num_switches), "links": int(topo.num_links),
                     "description": topo.meta.get("description", ""),
                     "sources": "; ".join(topo.meta.get("sources", []))})
    return rows


# -- writing -----------------------------------------------------------------------------

def topology_to_dict(topology: Topology) -> dict[str, Any]:
    """The topology-file form of ``topology``: explicit nodes and links (bytes/s, s).

    A link a->b of plane p whose reverse b->a of plane p has the same bandwidth and latency
    is written as one duplex cable; equal cables of a pair are merged into ``count``.
    Grid tags (dim/sign/wrap) and the family are not kept: a reloaded file is 'custom',
    and link ids may be numbered differently (the same links, planes and values).
    """
    t, names = topology, topology.node_names
    nodes = []
    for i, name in enumerate(names):
        attrs = {k: to_jsonable(v) for k, v in t.node_attrs[i].items()
                 if k not in ("reduce", "reduce_bandwidth")}
        node: dict[str, Any] = {"name": name, "kind": "switch" if t.is_switch[i] else "endpoint"}
        if t.coords[i] is not None:
            node["coord"] = to_jsonable(t.coords[i])
        if t.node_attrs[i].get("reduce"):
            node["reduce"] = True
        if t.node_attrs[i].get("reduce_bandwidth") is not None:
            node["reduce_bandwidth"] = float(t.node_attrs[i]["reduce_bandwidth"])
        if attrs:
            node["attrs"] = attrs
        nodes.append(node)
    by_key = {(int(s), int(d), int(p)): lid for lid, (s, d, p)
              in enumerate(zip(t.link_src, t.link_dst, t.plane))}
    done, groups = set(), {}
    for lid in range(t.num_links):
        if lid in done:
            continue
        s, d, p = int(t.link_src[lid]), int(t.link_dst[lid]), int(t.plane[lid])
        back = by_key.get((d, s, p))
        duplex = bool(back is not None and back not in done and back != lid
                  and t.bandwidth[back] == t.bandwidth[lid] and t.latency[back] == t.latency[lid])
        done.update((lid, back) if duplex else (lid,))
        key = (s, d, float(t.bandwidth[lid]), float(t.latency[lid]), duplex)
        groups[key] = groups.get(key, 0) + 1
    links = []
    for (s, d, bw, lat, duplex), count in groups.items():
        link: dict[str, Any] = {"src": names[s], "dst": names[d], "bandwidth": bw,
                                "latency": lat, "duplex": duplex}
        if count > 1:
            link["count"] = count
        links.append(link)
    doc: dict[str, Any] = {"name": t.name}
    for key in ("description", "sources", "library", "chip"):
        if t.meta.get(key):
            doc[key] = to_jsonable(t.meta[key])
    doc.update(nodes=nodes, links=links, endpoints=[names[e] for e in t.endpoints])
    return doc


def save_topology_file(topology: Topology, path: str | Path) -> None:
    """Write ``topology`` as a topology YAML file (atomically); see :func:`topology_to_dict`."""
    write_atomic(path, yaml.safe_dump(topology_to_dict(topology), sort_keys=False,
                                      default_flow_style=None), overwrite=True)


def check_connected(topo: Topology) -> None:
    """Raise TopologyError ``endpoint 'a' cannot reach 'b'`` unless all endpoints reach all."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components

    if topo.num_endpoints < 2:
        return
    n = topo.num_nodes
    graph = csr_matrix((np.ones(topo.num_links), (topo.link_src, topo.link_dst)), shape=(n, n))
    _, label = connected_components(graph, directed=True, connection="strong")
    ends = topo.endpoints
    if np.all(label[ends] == label[ends[0]]):
        return
    first = int(ends[0])
    reached = np.zeros(n, dtype=bool)
    reached[breadth_first_order(graph, first, directed=True, return_predecessors=False)] = True
    missing = ends[~reached[ends]]
    if missing.size:
        a, b = first, int(missing[0])
    else:  # all reachable from the first endpoint, so some endpoint cannot get back to it
        a, b = int(ends[label[ends] != label[first]][0]), first
    raise TopologyError(f"endpoint {topo.node_names[a]!r} cannot reach {topo.node_names[b]!r}")


# -- networkx and GraphML ----------------------------------------------------------------

def _coord(value: Any, node: str) -> tuple[float, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in re.split(r"[\s,()\[\]]+", value) if v]
    try:
        coord = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        raise TopologyError(f"node {node!r}: coord must be a list of numbers, "
                            f"got {value!r}") from None
    if not all(math.isfinite(v) for v in coord):
        raise TopologyError(f"node {node!r}: coord must be finite numbers, got {value!r}")
    return coord


def _tuples(value: Any) -> Any:
    """JSON lists back to tuples (``params['dims']`` is a tuple)."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def _edge_value(parse, data: dict, key: str, edge: str, default=None):
    if key not in data:
        if default is None:
            raise TopologyError(f"from_networkx: edge {edge}: no {key!r} attribute")
        return default
    try:
        return parse(data[key], key)
    except UnitError as err:
        raise TopologyError(f"from_networkx: edge {edge}: {err}") from None


def from_networkx(graph, name: str | None = None, check: bool = True) -> Topology:
    """A Topology from a networkx (Multi)(Di)Graph.

    Edges need ``bandwidth`` (bytes/s, a number or a unit string) and may have ``latency``
    (s, default 0), grid tags ``dim``/``sign``/``wrap`` and ``index`` (when every edge has
    one, links are created in that order). An undirected edge becomes a cable (two links);
    a directed edge one link; parallel edges become planes. Nodes may
    have ``kind`` (``'switch'`` or ``'endpoint'``, the default), ``coord`` (a sequence or a
    string such as ``'3,2'``), ``rank`` (the endpoints' order; default: graph order) and any
    other attributes, which are kept. Graph attributes ``name``, ``family`` and ``params``
    (a dict or JSON text) are restored when present, as :func:`to_graphml` writes them.
    With ``check``, every endpoint must reach every other one.

    >>> import networkx as nx
    >>> g = nx.Graph()
    >>> g.add_edge("a", "b", bandwidth="25GB/s", latency="1us")
    >>> from_networkx(g, name="pair").num_links
    2
    """
    gattrs = graph.graph
    params = gattrs.get("params", {})
    if isinstance(params, str):
        params = loads_json(params, "graph attribute 'params'") if params else {}
    builder = TopologyBuilder(str(name or gattrs.get("name") or "custom"),
                              family=str(gattrs.get("family") or "custom"), **_tuples(params))
    ranks: dict[int, Any] = {}
    for node, data in graph.nodes(data=True):
        data = {k: v for k, v in data.items() if k != "switch"}  # 'kind' says that
        kind = data.pop("kind", "endpoint")
        if kind not in ("switch", "endpoint"):
            raise TopologyError(f"from_networkx: node {node!r}: kind must be 'switch' or "
                                f"'endpoint', got {kind!r}")
        coord = _coord(data.pop("coord", None), str(node))
        rank = data.pop("rank", None)
        index = builder.add_node(str(node), switch=kind == "switch", coord=coord, **data)
        if rank is not None and kind == "endpoint":
            ranks[index] = rank
    edges = list(graph.edges(keys=True, data=True) if graph.is_multigraph()
                 else ((u, v, None, d) for u, v, d in graph.edges(data=True)))
    if edges and all("index" in e[3] for e in edges):   # link ids as to_graphml wrote them
        edges.sort(key=lambda e: int(e[3]["index"]))
    for u, v, _, data in edges:
        edge = f"({u!r}, {v!r})"
        bw = _edge_value(parse_rate, data, "bandwidth", edge)
        lat = _edge_value(parse_time, data, "latency", edge, default=0.0)
        dim = int(data.get("dim", -1))
        if graph.is_directed():
            builder.add_link(str(u), str(v), bw, lat, dim=dim, sign=int(data.get("sign", 0)),
                             wrap=bool(data.get("wrap", False)))
        else:
            builder.add_cable(str(u), str(v), bw, lat, dim=dim,
                              wrap=bool(data.get("wrap", False)))
    endpoints = [i for i, s in enumerate(builder._switch) if not s]
    if ranks and len(ranks) == len(endpoints):
        endpoints.sort(key=lambda i: ranks[i])
    builder.set_endpoints(endpoints)
    topo = builder.build()
    if check:
        check_connected(topo)
    return topo


def _graphml_value(value: Any) -> Any:
    """GraphML keeps str, int, float and bool; other values become JSON text."""
    plain = to_jsonable(value)
    if isinstance(plain, (str, int, float, bool)):
        return plain
    return json.dumps(plain, default=str)


def to_graphml(topology: Topology, path: str | Path) -> None:
    """Write ``topology`` as GraphML (atomically: a temporary file, then a rename).

    Nodes carry ``kind``, ``coord`` (as text ``'3.0,2.0'``), ``rank`` (endpoints) and their
    attributes; links carry ``index`` (the link id), ``bandwidth`` (bytes/s), ``latency``
    (s), ``plane``, ``dim``, ``sign`` and ``wrap``; the graph carries ``name``, ``family`` and ``params`` (JSON).
    :func:`read_graphml` (or ``from_networkx(networkx.read_graphml(path))``) reads it back.
    """
    import networkx as nx

    graph = nx.MultiDiGraph()
    graph.graph.update(name=topology.name, family=topology.family,
                       params=_graphml_value(dict(topology.params)))
    rank = {int(node): r for r, node in enumerate(topology.endpoints)}
    for i, node in enumerate(topology.node_names):
        attrs = {k: _graphml_value(v) for k, v in topology.node_attrs[i].items()
                 if v is not None}
        attrs["kind"] = "switch" if topology.is_switch[i] else "endpoint"
        if topology.coords[i] is not None:
            attrs["coord"] = ",".join(repr(float(c)) for c in topology.coords[i])
        if i in rank:
            attrs["rank"] = rank[i]
        graph.add_node(node, **attrs)
    for lid, link in enumerate(topology.link_names):
        graph.add_edge(topology.node_names[topology.link_src[lid]],
                       topology.node_names[topology.link_dst[lid]], key=link,
                       bandwidth=float(topology.bandwidth[lid]),
                       latency=float(topology.latency[lid]), index=lid,
                       plane=int(topology.plane[lid]),
                       dim=int(topology.dim[lid]), sign=int(topology.sign[lid]),
                       wrap=bool(topology.wrap[lid]))
    buffer = io.BytesIO()
    nx.write_graphml(graph, buffer)
    write_atomic(path, buffer.getvalue(), overwrite=True)


def read_graphml(path: str | Path, name: str | None = None) -> Topology:
    """Read a GraphML file written by :func:`to_graphml` (or any GraphML with bandwidths)."""
    from xml.etree.ElementTree import ParseError

    import networkx as nx

    try:
        graph = nx.read_graphml(str(path), force_multigraph=True)
    except (OSError, nx.NetworkXError, ParseError) as err:
        raise InputError(f"{path}: cannot read GraphML: {err}") from None
    try:
        return from_networkx(graph, name=name)
    except TopologyError as err:
        raise TopologyError(f"{path}: {err}") from None
