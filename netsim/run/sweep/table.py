"""A sweep's outcomes as one table: rows, a pandas DataFrame, Parquet bytes.

A row is one record of one point: ``point`` (its index), the swept values under their
paths (``jobs[0].size``), ``seed``, ``error`` (None, or the point's one-line error; a failed
point has one row) and the record's own columns. A record column whose name is a swept
path is renamed ``result.<name>``. Columns come in first-seen order, rows in point order,
so the table depends only on the outcomes, never on which worker finished first.

>>> rows = sweep_rows([{"size": "1MB"}, {"size": "2MB"}],
...                   [{"seed": 1, "records": [{"size": 1e6, "time_s": 0.5}]},
...                    {"seed": 2, "error": "bad"}])
>>> [list(row) for row in rows][0]
['point', 'size', 'seed', 'error', 'result.size', 'time_s']
>>> columns(rows)[-1], rows[1]["error"]
('time_s', 'bad')
"""

from __future__ import annotations

import io
import json
from typing import Any, Sequence

from ..._inputs.extras import require

__all__ = ["sweep_rows", "columns", "flat_rows", "rows_to_pandas", "rows_to_parquet"]


def sweep_rows(points: Sequence[dict[str, Any]], outcomes: Sequence[dict[str, Any]]
               ) -> list[dict[str, Any]]:
    rows = []
    for index, (point, outcome) in enumerate(zip(points, outcomes)):
        head = {"point": index, **point, "seed": outcome.get("seed"),
                "error": outcome.get("error")}
        for record in outcome.get("records") or [{}]:
            row = dict(head)
            for key, value in record.items():
                row[f"result.{key}" if key in head else key] = value
            rows.append(row)
    return rows


def columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Every column of ``rows``, in first-seen order."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _cell(value: Any) -> Any:
    """Lists and mappings (fault lists, candidates) as JSON text: one type per column."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True)
    return value


def flat_rows(rows: Sequence[dict[str, Any]]) -> tuple[list[str], dict[str, list[Any]]]:
    """The table by column, each column of one type: bool, int, float (ints with floats
    become floats), or text (anything mixed is written as text); None where missing."""
    names = columns(rows)
    table: dict[str, list[Any]] = {}
    for name in names:
        values = [_cell(row.get(name)) for row in rows]
        kinds = {type(v) for v in values if v is not None}
        if kinds <= {int, float} and float in kinds:
            values = [None if v is None else float(v) for v in values]
        elif len(kinds) > 1:
            values = [None if v is None else (v if isinstance(v, str) else json.dumps(v))
                      for v in values]
        table[name] = values
    return names, table


def rows_to_pandas(rows: Sequence[dict[str, Any]]):
    """``rows`` as a DataFrame with one dtype per column (see :func:`flat_rows`)."""
    pd = require("pandas", "parquet", "a DataFrame")
    names, table = flat_rows(rows)
    return pd.DataFrame({name: pd.Series(table[name], dtype=_dtype(table[name]))
                         for name in names}, columns=names)


def _dtype(values: list[Any]) -> str:
    kinds = {type(v) for v in values if v is not None}
    if kinds == {bool}:
        return "boolean"
    if kinds == {int}:
        return "Int64"
    if kinds == {float}:
        return "float64"
    return "object"


def rows_to_parquet(rows: Sequence[dict[str, Any]]) -> bytes:
    """``rows`` as a Parquet file (bytes): the same rows give the same bytes."""
    pa = require("pyarrow", "parquet", "writing Parquet")
    pq = require("pyarrow.parquet", "parquet", "writing Parquet")
    names, table = flat_rows(rows)
    arrays = []
    for name in names:
        kinds = {type(v) for v in table[name] if v is not None}
        kind = {frozenset({bool}): pa.bool_(), frozenset({int}): pa.int64(),
                frozenset({float}): pa.float64()}.get(frozenset(kinds), pa.string())
        arrays.append(pa.array(table[name], type=kind))
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=names), buffer)
    return buffer.getvalue()
