"""The network of a flow document: its ``links`` (an explicit machine) or its ``topology``
(a spec string), checked before its flows are. Flow files in JSON and flow tables (npz,
Parquet: their header) both read it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError, NetsimError, refuse_unknown_keys
from ..units import parse_rate, parse_time
from ..topology.model import Topology, TopologyBuilder

__all__ = ["network_of", "require"]

_TOP_KEYS = ("links", "topology", "flows", "description")
_LINK_KEYS = ("id", "src", "dst", "bandwidth", "latency")
_LINK_SET = frozenset(_LINK_KEYS)
_ID = (str, int)                  # exact types: a bool is neither an id nor a number
_NUMBER = (int, float, str)


def require(obj: Mapping, key: str, where: str):
    if key not in obj:
        raise InputError(f"{where}: missing field {key!r}")
    return obj[key]


def _checked_links(links: list) -> list[tuple] | None:
    """(src, dst, bandwidth, latency, name) of every link, or None if any link is not
    plainly valid: then the models check them one by one and word the error. The same
    rules as :class:`~.filemodels.LinkModel` without pydantic (about 0.1 s to import and
    validate a machine's thousand links record by record)."""
    out = []
    try:
        for n, link in enumerate(links):
            if type(link) is not dict or not link.keys() <= _LINK_SET:
                return None
            src, dst, bandwidth = link["src"], link["dst"], link["bandwidth"]
            latency, name = link.get("latency", 0.0), link.get("id")
            if (type(src) not in _ID or type(dst) not in _ID
                    or type(bandwidth) not in _NUMBER or type(latency) not in _NUMBER
                    or (name is not None and type(name) not in _ID)):
                return None
            bandwidth, latency = parse_rate(bandwidth), parse_time(latency)
            if not (bandwidth > 0 and latency >= 0):
                return None
            out.append((str(src), str(dst), bandwidth, latency,
                        str(name) if name is not None else f"l{n}"))
    except (KeyError, NetsimError):
        return None
    return out


def _links_topology(links: Any, source: str) -> Topology:
    if not isinstance(links, list) or not links:
        raise InputError(f"{source}: 'links' must be a non-empty list")
    checked = _checked_links(links)
    if checked is None:
        return _links_by_record(links, source)
    builder = TopologyBuilder(Path(source).stem or "flows", family="custom")
    for n, (src, dst, bandwidth, latency, name) in enumerate(checked):
        for end in (src, dst):
            if end not in builder._index:
                builder.add_node(end)
        if src == dst:
            raise InputError(f"{source}: links[{n}]: self-loop on node {links[n]['src']!r}")
        _add_link(builder, src, dst, bandwidth, latency, name, f"{source}: links[{n}]")
    return _built(builder, source)


def _add_link(builder, src: str, dst: str, bandwidth: float, latency: float, name: str,
              where: str) -> None:
    try:
        builder.add_link(src, dst, bandwidth, latency, name=name)
    except NetsimError as err:
        raise InputError(f"{where}: {err}") from None


def _built(builder, source: str) -> Topology:
    try:
        return builder.build()
    except NetsimError as err:
        raise InputError(f"{source}: links: {err}") from None


def _links_by_record(links: list, source: str) -> Topology:
    """The links checked one record at a time with the models (errors in their words)."""
    from .._inputs.schema import validate          # pydantic: loaded when a file is read
    from .filemodels import LinkModel

    builder = TopologyBuilder(Path(source).stem or "flows", family="custom")
    for n, link in enumerate(links):
        where = f"{source}: links[{n}]"
        if not isinstance(link, Mapping):
            raise InputError(f"{where}: expected an object, got {link!r}")
        refuse_unknown_keys(link, _LINK_KEYS, where)
        model = validate(LinkModel, link, source, prefix=f"links.{n}")
        for end in ("src", "dst"):
            if str(getattr(model, end)) not in builder._index:
                builder.add_node(str(getattr(model, end)))
        bandwidth, latency = model.bandwidth, model.latency
        if str(link["src"]) == str(link["dst"]):
            raise InputError(f"{where}: self-loop on node {link['src']!r}")
        _add_link(builder, str(link["src"]), str(link["dst"]), bandwidth, latency,
                  str(link["id"] if model.id is not None else f"l{n}"), where)
    return _built(builder, source)


def network_of(doc: Any, source: str) -> tuple[Topology, list]:
    """The network of a flow document and its list of flows (not yet checked)."""
    if not isinstance(doc, Mapping):
        raise InputError(f"{source}: expected a JSON object with 'flows', got a "
                         f"{type(doc).__name__}")
    refuse_unknown_keys(doc, _TOP_KEYS, source)
    if "topology" in doc and "links" in doc:
        raise InputError(f"{source}: give either 'links' or 'topology', not both")
    if not isinstance(doc.get("description", ""), str):
        raise InputError(f"{source}: description: expected a string, got "
                         f"{doc['description']!r}")
    if "topology" in doc:
        from ..topology import parse_topology   # a spec or file: the reader of machines

        if not isinstance(doc["topology"], str):
            raise InputError(f"{source}: topology: expected a spec string such as "
                             f"'mesh:4x4', got {doc['topology']!r}")
        try:
            topology = parse_topology(doc["topology"])
        except NetsimError as err:
            raise type(err)(f"{source}: topology: {err}") from None
    else:
        topology = _links_topology(require(doc, "links", source), source)
    flows = require(doc, "flows", source)
    if not isinstance(flows, list):
        raise InputError(f"{source}: 'flows' must be a list")
    if not flows:
        raise InputError(f"{source}: 'flows' is empty: nothing to simulate")
    return topology, flows
