"""The network of a flow document: its ``links`` (an explicit machine) or its ``topology``
(a spec string), checked before its flows are. Flow files in JSON and flow tables (npz,
Parquet: their header) both read it here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from ..errors import InputError, NetsimError, refuse_unknown_keys
from ..topology.model import Topology, TopologyBuilder

__all__ = ["network_of", "require"]

_TOP_KEYS = ("links", "topology", "flows", "description")
_LINK_KEYS = ("id", "src", "dst", "bandwidth", "latency")


def require(obj: Mapping, key: str, where: str):
    if key not in obj:
        raise InputError(f"{where}: missing field {key!r}")
    return obj[key]


def _links_topology(links: Any, source: str) -> Topology:
    from .._inputs.schema import validate          # pydantic: loaded when a file is read
    from .filemodels import LinkModel

    if not isinstance(links, list) or not links:
        raise InputError(f"{source}: 'links' must be a non-empty list")
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
        try:
            builder.add_link(str(link["src"]), str(link["dst"]), bandwidth, latency,
                             name=str(link["id"] if model.id is not None else f"l{n}"))
        except NetsimError as err:
            raise InputError(f"{where}: {err}") from None
    try:
        return builder.build()
    except NetsimError as err:
        raise InputError(f"{source}: links: {err}") from None


def network_of(doc: Any, source: str) -> tuple[Topology, list]:
    """The network of a flow document and its list of flows (not yet checked)."""
    from ..topology import parse_topology

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
