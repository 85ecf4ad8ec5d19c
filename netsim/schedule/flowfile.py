"""Flow files: explicit traffic on an explicit or generated network, as JSON.

.. code-block:: json

    {"links": [{"id": "l0", "src": "a", "dst": "b", "bandwidth": 5e10, "latency": 1e-6}],
     "flows": [{"id": 0, "src": "a", "dst": "b", "bytes": 1048576, "start": 0.0,
                "path": ["l0"], "deps": []}]}

Numbers may be unit strings (``"50GB/s"``, ``"1us"``, ``"1MiB"``). ``path`` is optional
(the flow is then routed), ``deps`` lists flow ids that must finish first, ``start`` is the
earliest release time. Instead of ``links`` a ``"topology": "mesh:4x4,bw=50GB/s"`` key may
name a generated machine whose endpoints the flows name.

The format is :class:`~netsim.schedule.filemodels.FlowFileModel`. Flows are checked
column-wise (:mod:`.flowcolumns`, fast on 10^5 flows); when a check fails, the per-record
models run to word the error (file, ``flows[3].bytes``, value).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import numpy as np

from .._inputs.jsonio import gc_paused, loads_json
from ..errors import InputError, NetsimError, did_you_mean, refuse_unknown_keys
from .flowcolumns import FLOW_KEYS, FlowSet, Refused, columns_from_records, flowset_from_columns
from .flownetwork import network_of
from .ir import ScheduleBuilder
from ..topology.model import Topology

__all__ = ["FlowSet", "load_flow_file", "flows_from_dict"]


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)




def _topological_order(flows: list, ids: list, source: str) -> list[int]:
    """Flow positions ordered so that every flow comes after its deps; cycles are errors."""
    position, by_name = {}, {}
    for n, fid in enumerate(ids):
        if not _is_id(fid):
            raise InputError(f"{source}: flows[{n}].id: expected a string or an integer, "
                             f"got {fid!r}")
        if fid in position:
            raise InputError(f"{source}: flows[{n}].id: duplicate id {fid!r}")
        # 1 and "1" are different keys here but the same name in outputs and deps.
        twin = by_name.setdefault(str(fid), fid)
        if twin != fid:
            raise InputError(f"{source}: flows[{n}].id: {fid!r} and {twin!r} (flows"
                             f"[{position[twin]}]) differ only in type: ambiguous")
        position[fid] = n
    deps = []
    for n, flow in enumerate(flows):
        listed = flow.get("deps", [])
        if not isinstance(listed, list):
            raise InputError(f"{source}: flows[{n}].deps: expected a list, got {listed!r}")
        for d in listed:
            if not _is_id(d) or d not in position:
                raise InputError(f"{source}: flows[{n}].deps: no flow with id {d!r}")
        deps.append([position[d] for d in listed])
    indegree = [len(d) for d in deps]
    dependants: list[list[int]] = [[] for _ in flows]
    for n, ds in enumerate(deps):
        for d in ds:
            dependants[d].append(n)
    order = [n for n in range(len(flows)) if indegree[n] == 0]
    for n in order:
        for m in dependants[n]:
            indegree[m] -= 1
            if indegree[m] == 0:
                order.append(m)
    if len(order) < len(flows):
        stuck = next(n for n in range(len(flows)) if indegree[n] > 0)
        raise InputError(f"{source}: flows[{stuck}] (id {ids[stuck]!r}): dependency cycle "
                         f"among the flows' deps")
    return order


def flows_from_dict(doc: Any, source: str = "flows") -> FlowSet:
    """Validate a flow document and build its :class:`FlowSet`."""
    with gc_paused():                 # 10^5 records hold no cycles: nothing to collect
        topology, flows = network_of(doc, source)
        try:
            return flowset_from_columns(topology, columns_from_records(flows))
        except Refused as refused:
            # Word the error as the models do: the refused flow alone first (its fields,
            # nodes and path), then, for what spans flows (ids, deps), all of them.
            if 0 <= refused.row < len(flows) and refused.field not in ("id", "deps", ""):
                _flow_record(topology, flows[refused.row], refused.row, source)
            _flows_by_record(topology, flows, source)
            raise InputError(f"{source}: {refused}") from None


def _flows_by_record(topology: Topology, flows: list, source: str) -> FlowSet:
    """The flows checked one record at a time with :class:`FlowModel`: slow, but its
    errors name the flow, the field and the value in the words of the models."""
    for n, flow in enumerate(flows):
        if not isinstance(flow, Mapping):
            raise InputError(f"{source}: flows[{n}]: expected an object, got {flow!r}")
        refuse_unknown_keys(flow, FLOW_KEYS, f"{source}: flows[{n}]")
        if "deps" in flow and not isinstance(flow["deps"], list):
            raise InputError(f"{source}: flows[{n}].deps: expected a list, got "
                             f"{flow['deps']!r}")
    ids = [flow.get("id", n) for n, flow in enumerate(flows)]
    order = _topological_order(flows, ids, source)
    position = {fid: n for n, fid in enumerate(ids)}
    op_of = {n: k for k, n in enumerate(order)}
    builder = ScheduleBuilder(topology.num_nodes)
    not_before = np.zeros(len(flows))
    for k, n in enumerate(order):
        flow, src, dst, path = _flow_record(topology, flows[n], n, source)
        not_before[k] = flow.start
        deps = [op_of[position[d]] for d in flow.deps]
        builder.send(src, dst, flow.bytes, deps, path=path)
    return FlowSet(topology, builder.build(), tuple(ids[n] for n in order), not_before)


def _flow_record(topology: Topology, record: Any, n: int, source: str):
    """(model, source node, destination node, path links or None) of flow ``n`` alone."""
    from .._inputs.schema import validate
    from .filemodels import FlowModel

    where = f"{source}: flows[{n}]"
    if not isinstance(record, Mapping):
        raise InputError(f"{where}: expected an object, got {record!r}")
    refuse_unknown_keys(record, FLOW_KEYS, where)
    if "deps" in record and not isinstance(record["deps"], list):
        raise InputError(f"{where}.deps: expected a list, got {record['deps']!r}")
    flow = validate(FlowModel, record, source, prefix=f"flows.{n}")
    src = _node(topology, flow.src, f"{where}.src")
    dst = _node(topology, flow.dst, f"{where}.dst")
    path = None
    if flow.path is not None:
        path = [_link(topology, l, f"{where}.path") for l in flow.path]
        _check_path(topology, path, src, dst, f"{where}.path")
    return flow, src, dst, path


def _check_path(topology: Topology, path: list[int], src: int, dst: int, where: str) -> None:
    """An explicit path must lead from the flow's source to its destination, link by link."""
    names = topology.node_names
    at = src
    if len(set(path)) < len(path):
        again = next(lid for n, lid in enumerate(path) if lid in path[:n])
        raise InputError(f"{where}: link {topology.link_names[again]!r} is crossed twice: "
                         f"a path must not loop")
    for lid in path:
        if int(topology.link_src[lid]) != at:
            raise InputError(f"{where}: link {topology.link_names[lid]!r} starts at "
                             f"{names[int(topology.link_src[lid])]!r}, not at {names[at]!r}: "
                             f"not a path")
        at = int(topology.link_dst[lid])
    if at != dst:
        raise InputError(f"{where}: the path ends at {names[at]!r}, not at the flow's "
                         f"destination {names[dst]!r}")


def _node(topology: Topology, name: Any, where: str) -> int:
    if not _is_id(name) or str(name) not in topology.node_index:
        raise InputError(f"{where}: unknown node {name!r}{did_you_mean(name, topology.node_names)}")
    return topology.node_index[str(name)]


def _link(topology: Topology, name: Any, where: str) -> int:
    if not _is_id(name) or str(name) not in topology.link_index:
        raise InputError(f"{where}: unknown link {name!r}{did_you_mean(name, topology.link_names)}")
    return topology.link_index[str(name)]


def load_flow_file(path: str | Path) -> FlowSet:
    """Read and validate a flow file (see the module docstring), or a flow table
    (``.npz``, ``.parquet``: :mod:`.flowtable`)."""
    from .._inputs.yamlio import read_bytes     # (PyYAML: loaded when a file is read)
    from .flowtable import TABLE_SUFFIXES, load_flow_table

    path = Path(path)
    if path.suffix.lower() in TABLE_SUFFIXES:
        return load_flow_table(path)
    raw = read_bytes(path, "flow file")
    flowset = _fast_flowset(raw, str(path))
    if flowset is not None:
        return flowset
    return flows_from_dict(loads_json(raw, str(path), what="flow file"), str(path))


def _fast_flowset(raw: bytes, source: str) -> FlowSet | None:
    """The flow set of a plain flow file read straight into columns (:mod:`.flowjson`),
    or None: then the general reader reads it again and words any error."""
    from .flowjson import decode_flow_columns, path_link_ids

    with gc_paused():
        decoded = decode_flow_columns(raw)
        if decoded is None:
            return None
        header, cols, raw_paths = decoded
        try:
            topology, _ = network_of(header, source)
            if raw_paths is not None:
                found = path_link_ids(raw_paths, topology)
                if found is None:
                    return None
                cols.path_ptr, cols.path_ids = found
            return flowset_from_columns(topology, cols)
        except (Refused, NetsimError):
            return None
