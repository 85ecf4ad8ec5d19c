"""Per-flow results as files: JSON (orjson), CSV, npz or Parquet, chosen by the suffix.

A 65,280-flow run has 65,280 rows of (id, start, finish): as JSON through the standard
library that is about 0.6 s; orjson writes the same document in a fraction of it, and npz
and Parquet write the columns as they are. Columns: ``id`` (the flow file's ids),
``start`` and ``finish`` (s); npz adds the per-link arrays (``link_id``, ``link_bytes``,
``link_utilization``, ``link_busy_s``, ``link_peak_flows``) and the scalars ``makespan``
and ``events``; Parquet keeps those two in its schema metadata key ``netsim``.

>>> json_bytes({"a": np.arange(2.0)})
b'{\\n  "a": [\\n    0.0,\\n    1.0\\n  ]\\n}\\n'
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..outputs import to_jsonable, write_atomic

__all__ = ["RESULT_SUFFIXES", "json_bytes", "flow_result_columns", "flow_records_fast",
           "flow_result_csv", "write_flow_result"]

RESULT_SUFFIXES = (".json", ".csv", ".npz", ".parquet")


def json_bytes(doc: Any) -> bytes:
    """``doc`` as indented JSON (numpy arrays and scalars included), fast (orjson)."""
    import orjson

    options = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_APPEND_NEWLINE
    try:
        return orjson.dumps(doc, option=options)
    except TypeError:               # a value orjson does not know (e.g. a numpy object)
        return orjson.dumps(to_jsonable(doc), option=options, default=str)


def _ids(result) -> np.ndarray:
    ids = result.op_ids if result.op_ids is not None else range(len(result.op_finish))
    ids = list(ids)
    if all(type(i) is int for i in ids):
        return np.asarray(ids, dtype=np.int64)
    return np.asarray([str(i) for i in ids])


def flow_result_columns(result) -> dict[str, np.ndarray]:
    """``id``, ``start_s``, ``finish_s`` (s) per flow, as arrays."""
    return {"id": _ids(result), "start_s": np.asarray(result.op_start, dtype=np.float64),
            "finish_s": np.asarray(result.op_finish, dtype=np.float64)}


def flow_records_fast(result) -> list[dict[str, Any]]:
    """``Result.flow_records()`` built column-wise (the same rows, faster)."""
    ids = result.op_ids if result.op_ids is not None else range(len(result.op_finish))
    return [{"id": i, "start_s": s, "finish_s": f} for i, s, f in
            zip(ids, np.asarray(result.op_start, float).tolist(),
                np.asarray(result.op_finish, float).tolist())]


def flow_result_csv(result) -> str:
    """``Result.flows_csv()`` (id, start_s, finish_s; the csv module's quoting, CRLF) written
    from the columns by ``csv.writer``: no dict per row, which on large results costs three
times the writing.

    >>> from types import SimpleNamespace
    >>> flow_result_csv(SimpleNamespace(op_ids=["a,b", 7], op_start=np.zeros(2),
    ...                                 op_finish=np.array([0.5, 1e-7])))
    'id,start_s,finish_s\\r\\n"a,b",0.0,0.5\\r\\n7,0.0,1e-07\\r\\n'
    """
    ids = result.op_ids if result.op_ids is not None else range(len(result.op_finish))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(("id", "start_s", "finish_s"))
    writer.writerows(zip(ids, np.asarray(result.op_start, float).tolist(),
                         np.asarray(result.op_finish, float).tolist()))
    return out.getvalue()


def write_flow_result(result, path: str | Path, *, overwrite: bool = False,
                      document: bytes | None = None) -> Path:
    """Write the per-flow result to ``path`` in the format its suffix names (``.json``:
    ``document`` when given, else ``{"makespan", "events", "flows"}``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        data = document if document is not None else json_bytes(
            {"makespan": result.makespan, "events": result.events,
             "flows": flow_records_fast(result)})
    elif suffix == ".csv":
        data = flow_result_csv(result)
    elif suffix == ".npz":
        arrays = flow_result_columns(result)
        arrays.update(makespan=np.float64(result.makespan), events=np.int64(result.events),
                      link_id=np.asarray(result.link_names, dtype=str),
                      link_bytes=np.asarray(result.link_bytes, dtype=np.float64),
                      link_utilization=np.asarray(result.link_utilization, dtype=np.float64),
                      link_busy_s=np.asarray(result.link_busy, dtype=np.float64),
                      link_peak_flows=np.asarray(result.link_peak_flows, dtype=np.int64))
        out = io.BytesIO()
        np.savez(out, **arrays)
        data = out.getvalue()
    elif suffix == ".parquet":
        from ..schedule import require_pyarrow

        pa = require_pyarrow(path, "write")
        import orjson
        import pyarrow.parquet as pq

        table = pa.table(flow_result_columns(result)).replace_schema_metadata(
            {"netsim": orjson.dumps({"makespan": result.makespan, "events": result.events})})
        out = io.BytesIO()
        pq.write_table(table, out)
        data = out.getvalue()
    else:
        raise InputError(f"{path}: a result file ends in {', '.join(RESULT_SUFFIXES)}")
    return write_atomic(path, data, overwrite)
