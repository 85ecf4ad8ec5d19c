"""Flow tables: flow files as columns, in ``.npz`` (numpy) or ``.parquet`` (pyarrow).

For 10^5 flows and more a table is smaller and faster to read than JSON, and tools that
make traffic (numpy, pandas, Arrow) write it directly. Columns, one row per flow:

* ``src``, ``dst`` (node names), ``bytes`` (numbers or unit strings); optional ``id``
  (default: the row), ``start`` (s, earliest release);
* optional explicit paths: in npz as CSR, ``path_ptr`` (rows + 1 offsets) and
  ``path_links`` (link names); in Parquet a list column ``path`` (null: routed);
* optional dependencies: npz ``dep_ptr`` and ``deps`` (flow ids), Parquet a list column
  ``deps``.

The network: npz ``topology`` (a spec string such as ``mesh:4x4``) or the link columns
``link_id``, ``link_src``, ``link_dst``, ``link_bandwidth``, ``link_latency``; Parquet
keeps the same as JSON in the schema metadata key ``netsim`` (``{"topology": ...}`` or
``{"links": [...]}``). Errors name the file, the row and the column.

>>> import tempfile, os
>>> doc = {"topology": "mesh:1x2", "flows": [{"src": "0_0", "dst": "0_1", "bytes": "1MB"}]}
>>> path = os.path.join(tempfile.mkdtemp(), "f.npz")
>>> write_flow_table(flows_to_table(doc), path)
>>> load_flow_table(path).schedule.nbytes.tolist()
[1000000.0]
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np

from .._inputs.jsonio import gc_paused, loads_json
from ..errors import InputError
from .flowcolumns import FLOW_KEYS, FlowColumns, Refused, flowset_from_columns

__all__ = ["TABLE_SUFFIXES", "load_flow_table", "flows_to_table", "write_flow_table",
           "require_pyarrow"]

TABLE_SUFFIXES = (".npz", ".parquet")
_LINK_COLUMNS = ("link_id", "link_src", "link_dst", "link_bandwidth", "link_latency")
_NPZ_KEYS = ("id", "src", "dst", "bytes", "start", "path_ptr", "path_links", "dep_ptr",
             "deps", "topology", "description", *_LINK_COLUMNS)


def require_pyarrow(path: str | Path, doing: str = "read"):
    """pyarrow, or a one-line error naming the optional extra that installs it."""
    try:
        import pyarrow
        import pyarrow.parquet  # noqa: F401
    except ImportError:
        raise InputError(f"{path}: to {doing} Parquet files install pyarrow: "
                         f"pip install 'netsim[parquet]'") from None
    return pyarrow


def _network(header: dict, source: str):
    """The topology a table names (spec) or lists (links), via the flow-file checks."""
    from .flownetwork import network_of

    doc = {k: v for k, v in header.items() if k in ("topology", "links", "description")}
    topology, _ = network_of({**doc, "flows": [None]}, source)
    return topology


def _npz(path: Path) -> tuple[dict, FlowColumns]:
    from .._inputs.yamlio import read_bytes

    data = read_bytes(path, "flow table")
    if not data.startswith(b"PK"):
        raise InputError(f"{path}: cannot read flow table: not an npz file (a zip of numpy "
                         f"arrays)")
    try:
        arrays = dict(np.load(io.BytesIO(data), allow_pickle=False))
    except Exception as err:            # not a zip, a pickled object array, ...
        raise InputError(f"{path}: cannot read flow table: not an npz file of plain "
                         f"arrays ({err})") from None
    unknown = sorted(set(arrays) - set(_NPZ_KEYS))
    if unknown:
        from ..errors import did_you_mean

        raise InputError(f"{path}: unknown column {unknown[0]!r}"
                         f"{did_you_mean(unknown[0], _NPZ_KEYS)}")
    for key in ("src", "dst", "bytes"):
        if key not in arrays:
            raise InputError(f"{path}: missing column {key!r}")
    header: dict[str, Any] = {}
    if "topology" in arrays:
        header["topology"] = arrays["topology"].item() if arrays["topology"].ndim == 0 \
            else arrays["topology"].tolist()
    if any(k in arrays for k in _LINK_COLUMNS):
        n = len(arrays.get("link_src", []))
        columns = {k.removeprefix("link_"): arrays[k].tolist() for k in _LINK_COLUMNS
                   if k in arrays}
        header["links"] = [{k: v[i] for k, v in columns.items()} for i in range(n)]
    n = len(arrays["src"])
    for key in ("dst", "bytes", "start", "id"):
        if key in arrays and len(arrays[key]) != n:
            raise InputError(f"{path}: column {key!r} has {len(arrays[key])} rows, 'src' "
                             f"has {n}")
    cols = FlowColumns.from_arrays(
        src=arrays["src"].tolist(), dst=arrays["dst"].tolist(), nbytes=arrays["bytes"].tolist(),
        start=arrays["start"].tolist() if "start" in arrays else None,
        ids=arrays["id"].tolist() if "id" in arrays else None,
        path_ptr=_ptr(arrays, "path_ptr", "path_links", n, path),
        path_links=arrays.get("path_links"),         # a numpy column: looked up as arrays
        dep_ptr=_ptr(arrays, "dep_ptr", "deps", n, path),
        dep_ids=arrays["deps"].tolist() if "deps" in arrays else None)
    return header, cols


def _ptr(arrays: dict, ptr: str, values: str, rows: int, path: Path) -> np.ndarray | None:
    """A CSR offsets column, checked: rows + 1 non-decreasing integers from 0 to the
    length of its values column."""
    if (ptr in arrays) != (values in arrays):
        raise InputError(f"{path}: columns {ptr!r} and {values!r} go together")
    if ptr not in arrays:
        return None
    offsets = arrays[ptr]
    if (offsets.dtype.kind not in "iu" or offsets.shape != (rows + 1,) or offsets[0] != 0
            or offsets[-1] != len(arrays[values]) or (np.diff(offsets) < 0).any()):
        raise InputError(f"{path}: column {ptr!r}: expected {rows + 1} non-decreasing "
                         f"integer offsets from 0 to {len(arrays[values])} (CSR)")
    return offsets.astype(np.int64)


def _parquet(path: Path) -> tuple[dict, FlowColumns]:
    require_pyarrow(path)
    import pyarrow.parquet as pq

    from .._inputs.yamlio import read_bytes

    data = read_bytes(path, "flow table")
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as err:
        raise InputError(f"{path}: cannot read flow table: not a Parquet file ({err})") \
            from None
    meta = (table.schema.metadata or {}).get(b"netsim", b"{}")
    header = loads_json(meta, f"{path}: metadata 'netsim'")
    if not isinstance(header, dict):
        raise InputError(f"{path}: metadata 'netsim': expected a JSON object")
    unknown = sorted(set(table.column_names) - set(FLOW_KEYS))
    if unknown:
        raise InputError(f"{path}: unknown column {unknown[0]!r} (allowed: "
                         f"{', '.join(FLOW_KEYS)})")
    for key in ("src", "dst", "bytes"):
        if key not in table.column_names:
            raise InputError(f"{path}: missing column {key!r}")
    column = {name: table.column(name) for name in table.column_names}
    cols = FlowColumns.from_arrays(
        src=column["src"].to_pylist(), dst=column["dst"].to_pylist(),
        nbytes=column["bytes"].to_pylist(),
        start=column["start"].to_pylist() if "start" in column else None,
        ids=column["id"].to_pylist() if "id" in column else None)
    for key, field in (("path", "path"), ("deps", "deps")):
        if key in column:
            ptr, flat = _list_column(column[key], path, key)
            if key == "path":
                cols.path_ptr, cols.path_links = ptr, flat
            else:
                cols.dep_ptr, cols.dep_ids = ptr, flat
    return header, cols


def _list_column(chunked, path: Path, name: str) -> tuple[np.ndarray, list | np.ndarray]:
    """CSR offsets and flat values of an Arrow list column (a null row has none); the
    link names of ``path`` as a numpy unicode column when they are plain strings."""
    import pyarrow as pa

    array = chunked.combine_chunks()
    if not pa.types.is_list(array.type) and not pa.types.is_large_list(array.type):
        raise InputError(f"{path}: column {name!r}: expected a list column, got {array.type}")
    lengths = array.value_lengths().fill_null(0).to_numpy(zero_copy_only=False)
    ptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=ptr[1:])
    flat = array.flatten()
    if name == "path" and pa.types.is_string(flat.type) and not flat.null_count and len(flat):
        # Link names as a numpy column (looked up as arrays), through the few distinct
        # names: no Python string per hop.
        coded = flat.dictionary_encode()
        return ptr, np.array(coded.dictionary.to_pylist())[coded.indices.to_numpy()]
    return ptr, flat.to_pylist()


def load_flow_table(path: str | Path):
    """Read and check a flow table (``.npz`` or ``.parquet``) as a :class:`FlowSet`."""
    path = Path(path)
    reader = {".npz": _npz, ".parquet": _parquet}.get(path.suffix.lower())
    if reader is None:
        raise InputError(f"{path}: a flow table ends in .npz or .parquet")
    cols = None
    with gc_paused():
        try:
            header, cols = reader(path)
            topology = _network(header, str(path))
            return flowset_from_columns(topology, cols)
        except Refused as refused:
            flow = f" (flow {cols.ids[refused.row]!r})" if cols is not None else ""
            column = f": column {refused.field!r}" if refused.field else ""
            raise InputError(f"{path}: row {refused.row}{flow}{column}: "
                             f"{refused.message}") from None


def flows_to_table(doc: dict) -> dict[str, Any]:
    """A flow document (as in a JSON flow file) as table columns; not checked (loading the
    table checks it)."""
    flows = doc["flows"]
    table: dict[str, Any] = {
        "id": [f.get("id", n) for n, f in enumerate(flows)],
        "src": [f["src"] for f in flows], "dst": [f["dst"] for f in flows],
        "bytes": [f["bytes"] for f in flows], "start": [f.get("start", 0.0) for f in flows]}
    if any("path" in f for f in flows):
        table["path"] = [f.get("path") for f in flows]
    if any(f.get("deps") for f in flows):
        table["deps"] = [f.get("deps", []) for f in flows]
    table["network"] = {k: doc[k] for k in ("topology", "links") if k in doc}
    return table


def _column(values: list) -> np.ndarray:
    """An npz-safe column: numbers stay numbers, anything with a string is text."""
    if all(type(v) in (int, float) for v in values):
        return np.asarray(values)
    return np.asarray([str(v) for v in values])


def write_flow_table(table: dict[str, Any], path: str | Path, overwrite: bool = False) -> None:
    """Write :func:`flows_to_table` columns as ``.npz`` or ``.parquet`` (by the suffix)."""
    from ..outputs import write_atomic

    path = Path(path)
    suffix = path.suffix.lower()
    network = table.get("network", {})
    rows = {k: v for k, v in table.items() if k != "network"}
    if suffix == ".npz":
        arrays: dict[str, np.ndarray] = {}
        for key, values in rows.items():
            if key in ("path", "deps"):
                lists = [v or [] for v in values]
                ptr = np.zeros(len(lists) + 1, dtype=np.int64)
                np.cumsum([len(v) for v in lists], out=ptr[1:])
                prefix = "path" if key == "path" else "dep"
                arrays[f"{prefix}_ptr"] = ptr
                arrays["path_links" if key == "path" else "deps"] = _column(
                    [x for v in lists for x in v])
            else:
                arrays[key] = _column(values)
        if "topology" in network:
            arrays["topology"] = np.asarray(network["topology"])
        for key in ("id", "src", "dst", "bandwidth", "latency"):
            if "links" in network:
                arrays[f"link_{key}"] = _column([link.get(key, 0.0 if key == "latency" else n)
                                                 for n, link in enumerate(network["links"])])
        out = io.BytesIO()
        np.savez(out, **arrays)
        write_atomic(path, out.getvalue(), overwrite)
    elif suffix == ".parquet":
        pa = require_pyarrow(path, "write")
        import orjson
        import pyarrow.parquet as pq

        columns = {}
        for key, values in rows.items():
            if key in ("path", "deps"):
                flat = [x for v in values if v for x in v]
                numeric = key == "deps" and all(type(x) is int for x in flat)
                columns[key] = pa.array(
                    [None if v is None else [x if numeric else str(x) for x in v]
                     for v in values], type=pa.list_(pa.int64() if numeric else pa.string()))
            else:
                columns[key] = pa.array(values if all(type(v) in (int, float) for v in values)
                                        else [str(v) for v in values])
        arrow = pa.table(columns).replace_schema_metadata({"netsim": orjson.dumps(network)})
        out = io.BytesIO()
        pq.write_table(arrow, out)
        write_atomic(path, out.getvalue(), overwrite)
    else:
        raise InputError(f"{path}: a flow table ends in .npz or .parquet")
