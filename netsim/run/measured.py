"""Measured curves (CSV, or nccl-tests output) beside simulated ones:
``netsim coll ... --measured FILE``.

An nccl-tests log (the output of ``all_reduce_perf`` and friends, recognised by its
``#  size  count  type ...`` header) is read as it is: the out-of-place ``time`` (us) and
``busbw`` (GB/s) of each size row; other lines (devices, averages) are skipped.

A measured file is CSV with a header row and one row per message size: ``size_bytes``
(bytes, nccl-tests' size: all-reduce buffer, all-gather output ...) and ``busbw_GBps``
(GB/s, GB = 1e9 B) and/or ``time_s`` (s) or ``time_us`` (us; a busbw of 0, as printed
below 0.005 GB/s, is then allowed); other columns are ignored and lines starting
with ``#`` are comments. Sizes may carry units (``1MiB``). Every error is one line naming
the file, the line and the column.

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
>>> _ = p.write_text("size_bytes,busbw_GBps\\n1048576,10\\n")
>>> read_measured(p)
[{'size_bytes': 1048576.0, 'busbw_GBps': 10.0}]
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import Any, Callable

from .._inputs.yamlio import read_text
from ..errors import InputError, NetsimError
from ..units import parse_size

__all__ = ["read_measured", "read_nccl_tests", "compare_measured", "measured_gpus_per_thread",
           "MEASURED_COLUMNS"]

_VALUES = ("busbw_GBps", "time_s")
#: Table columns added by :func:`compare_measured`: (record key, header, formatter).
MEASURED_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("measured_busbw_GBps", "measured busbw (GB/s)", lambda v: f"{v:.2f}"),
    ("measured_time_s", "measured time (us)", lambda v: f"{v * 1e6:.2f}"),
    ("error_pct", "sim vs measured", lambda v: f"{v:+.1f}%"),
]


def _lines(path: Path) -> list[tuple[int, str]]:
    text = read_text(path, "measured CSV")
    return [(i, line) for i, line in enumerate(text.splitlines(), start=1)
            if line.strip() and not line.lstrip().startswith("#")]


def _number(path: Path, line: int, column: str, text: str, size: bool,
            zero_ok: bool = False) -> float:
    """A positive number (``zero_ok``: or 0, as nccl-tests prints a busbw below 0.005 GB/s
    beside the time that measures the row)."""
    try:
        value = parse_size(text, column) if size else float(text)
    except (ValueError, NetsimError):
        value = math.nan
    if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
        raise InputError(f"{path}:{line}: column {column!r}: expected a positive number, "
                         f"got {text!r}")
    return value


_NCCL_HEADER = re.compile(r"^#\s+size\s+count\s+type\b")


def read_nccl_tests(path: str | Path, text: str | None = None) -> list[dict[str, float]]:
    """The size rows of an nccl-tests log as ``{'size_bytes', 'time_s', 'busbw_GBps'}``
    (out-of-place columns; time converted from us to s).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ar.log"
    >>> _ = p.write_text("# nThread 1 nGpus 8\\n"
    ...   "#       size    count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong\\n"
    ...   "#        (B) (elements)                     (us) (GB/s) (GB/s)          (us) (GB/s) (GB/s)\\n"
    ...   "     1048576   262144  float    sum    -1  25.00  41.94  73.40      0  24.00  43.69  76.46      0\\n"
    ...   "# Avg bus bandwidth    : 74.93\\n")
    >>> read_nccl_tests(p)
    [{'size_bytes': 1048576.0, 'time_s': 2.5e-05, 'busbw_GBps': 73.4}]
    """
    path = Path(path)
    text = read_text(path, "nccl-tests log") if text is None else text
    header: list[str] | None = None
    at: dict[str, int] = {}
    time_key = "time"
    out: list[dict[str, float]] = []
    out_lines: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if _NCCL_HEADER.match(line):
            header = line.lstrip("#").split()
            time_key = "time" if "time" in header else "cputime"
            # The first (out-of-place) columns; later nccl-tests add columns at the end
            # (#iters, timestamps), so positions count from the left.
            at = {key: header.index(key) for key in ("size", time_key, "busbw")
                  if key in header}
            if len(at) != 3:
                raise InputError(f"{path}:{number}: nccl-tests header without size, time "
                                 f"and busbw columns")
            continue
        fields = line.split()
        if header is None or not fields or line.lstrip().startswith("#") \
                or not fields[0].isdigit():
            continue
        if len(fields) <= max(at.values()):
            raise InputError(f"{path}:{number}: expected {len(header)} columns like the "
                             f"header, got {len(fields)}")
        size, seconds, busbw = (fields[at[key]] for key in ("size", time_key, "busbw"))
        row = {"size_bytes": _number(path, number, "size", size, True),
               "time_s": _number(path, number, "time", seconds, False) / 1e6,
               "busbw_GBps": _number(path, number, "busbw", busbw, False, zero_ok=True)}
        earlier = _find(out, row["size_bytes"])
        if earlier is not None:
            raise InputError(f"{path}:{number}: size {size!r} is also on line "
                             f"{out_lines[earlier]}: give one run per log")
        out.append(row)
        out_lines.append(number)
    if header is None or not out:
        raise InputError(f"{path}: no nccl-tests size rows (expected a '#  size  count  "
                         f"type ...' header followed by rows)")
    return out


def read_measured(path: str | Path) -> list[dict[str, float]]:
    """Rows of ``path`` as ``{'size_bytes': .., 'busbw_GBps': .., 'time_s': ..}`` (the
    value columns present); one-line InputError naming file, line and column. An
    nccl-tests log is read with :func:`read_nccl_tests`."""
    path = Path(path)
    text = read_text(path, "measured CSV")
    if any(_NCCL_HEADER.match(line) for line in text.splitlines()):
        return read_nccl_tests(path, text)
    lines = _lines(path)
    if not lines:
        raise InputError(f"{path}:1: empty measured CSV (need a header row and data rows)")
    numbers, texts = zip(*lines)
    rows = list(csv.reader(texts))
    header = [h.strip() for h in rows[0]]
    values = [c for c in (*_VALUES, "time_us") if c in header]
    timed = "time_s" in header or "time_us" in header
    if "size_bytes" not in header or not values:
        raise InputError(f"{path}:{numbers[0]}: header needs 'size_bytes' and 'busbw_GBps' "
                         f"or 'time_s' or 'time_us' (found: {', '.join(header) or 'nothing'})")
    out, out_lines = [], []
    for line, row in zip(numbers[1:], rows[1:]):
        if len(row) != len(header):
            raise InputError(f"{path}:{line}: expected {len(header)} columns, got {len(row)}")
        cells = dict(zip(header, (c.strip() for c in row)))
        parsed = {c: _number(path, line, c, cells[c], c == "size_bytes",
                             zero_ok=timed and c == "busbw_GBps")
                  for c in ("size_bytes", *values)}
        if "time_us" in parsed:                 # as nccl-tests prints it; time_s wins
            micro = parsed.pop("time_us") / 1e6
            parsed.setdefault("time_s", micro)
        # One row per size: a second one is either a copy or a contradiction, and which
        # of them the comparison used would be an accident of the order.
        earlier = _find(out, parsed["size_bytes"])
        if earlier is not None:
            how = "repeats" if out[earlier] == parsed else "contradicts"
            raise InputError(f"{path}:{line}: size {cells['size_bytes']!r} {how} line "
                             f"{out_lines[earlier]}: give one row per size")
        out.append(parsed)
        out_lines.append(line)
    if not out:
        raise InputError(f"{path}:{numbers[0]}: no data rows after the header")
    return out


_NGPUS = re.compile(r"\bnGpus\s+(\d+)")


def measured_gpus_per_thread(path: str | Path) -> int | None:
    """GPUs one nccl-tests thread drove in the run ``path`` measures (``-g N``), from its
    ``# nThread 1 nGpus N ...`` line (nccl-tests' header, or a CSV comment quoting it);
    None if the file does not say.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
    >>> _ = p.write_text("# nThread 1 nGpus 8 minBytes 8\\nsize_bytes,time_us\\n8,40\\n")
    >>> measured_gpus_per_thread(p)
    8
    """
    text = read_text(Path(path), "measured CSV")
    found = next((_NGPUS.search(line) for line in text.splitlines()
                  if line.lstrip().startswith("#") and _NGPUS.search(line)), None)
    return int(found.group(1)) if found else None


def _find(rows: list[dict[str, float]], size: float) -> int | None:
    """Index of the row of ``size`` bytes (relative tolerance 1e-6), if any."""
    return next((i for i, row in enumerate(rows)
                 if math.isclose(row["size_bytes"], size, rel_tol=1e-6)), None)


def compare_measured(path: str | Path, records: list[dict[str, Any]]
                     ) -> list[tuple[str, str, Callable[[Any], str]]]:
    """Add ``measured_busbw_GBps`` / ``measured_time_s`` and ``error_pct`` (simulated minus
    measured, in % of measured: time if measured, else busbw) to each simulated record of
    a size that ``path`` has; return the table columns to show."""
    rows = read_measured(path)
    for record in records:
        found = _find(rows, float(record["size_bytes"]))
        if found is None:
            continue
        row = rows[found]
        for key in _VALUES:
            if key in row:
                record[f"measured_{key}"] = row[key]
        key = "time_s" if "time_s" in row else "busbw_GBps"
        if record.get(key):
            record["error_pct"] = 100.0 * (record[key] - row[key]) / row[key]
    present = {k for r in records for k in r}
    return [c for c in MEASURED_COLUMNS if c[0] in present or c[0] == "error_pct"]
