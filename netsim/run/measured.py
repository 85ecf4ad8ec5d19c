"""Measured curves (CSV, nccl-tests output or tt-metal CCL result tables) beside simulated
ones: ``netsim coll ... --measured FILE`` and ``netsim validate``.

A measured file is read whole: its rows and what it says about the run that produced
them (:class:`MeasuredRun`: the op, the rank count, nccl-tests' ``-g``, the data type and
reduction, the machine). Three formats are recognised by their content:

* **nccl-tests output** (``all_reduce_perf`` and friends; the ``#  size  count  type ...``
  header): the out-of-place ``time`` (us) and ``busbw`` (GB/s) of each size row (or the
  in-place ones, ``place="in-place"``). The header says the rest: ``# Collective test
  starting: all_gather_perf`` the op, ``# nThread 1 nGpus 8`` the GPUs one thread drives
  (``-g``, whose host time bounds small sizes), the ``#  Rank ...`` lines the rank count and
  the device. Older logs without the ``Collective test starting`` line are known by their
  rows: the ``redop`` and ``root`` columns and ``count`` x the type's size against ``size``
  (``none`` with a count per rank is an all-gather or an all-to-all). A log of several
  runs (one per op) gives the run of the op asked for.
* **tt-metal CCL result tables** (the Markdown of tt-metal's
  ``tech_reports/CCLs/results/*.md``: ``## all_gather`` sections of ``| n | ... | size (B)
  | ... | time (us) | ... | busbw (GB/s) |`` rows): the rows of one op and one device count
  ``n``; where a file has several configurations of them (``ring, DRAM`` then ``line,
  DRAM``) the first, as tt-metal's SUMMARY tables choose. The code block's ``arch`` and
  ``dtype`` are kept.
* **CSV** with a header row and one row per message size: ``size_bytes`` (bytes,
  nccl-tests' size: all-reduce buffer, all-gather output ...) and ``busbw_GBps`` (GB/s,
  GB = 1e9 B) and/or ``time_s`` (s) or ``time_us`` (us; a busbw of 0, as printed below
  0.005 GB/s, is then allowed); other columns are ignored and lines starting with ``#``
  are comments. Sizes may carry units (``1MiB``).

Any of them may carry an annotation comment saying what the file measured, as ``key=value``
words (values without spaces)::

    # netsim-validate: topo=dgx-h100 op=allreduce ranks=8 gpus_per_thread=8

``topo`` (the machine, as ``--topo``), ``op``, ``ranks``, ``axis`` (``--axis``),
``gpus_per_thread`` (nccl-tests' ``-g``), ``algo`` (when the run asked for an algorithm by
name; else the machine's default), ``family`` (the summary group of ``netsim validate``;
default: the machine's preset name), ``summary=no`` (rows shown but kept out of the
summary: an erratic run) and, for an nccl-tests log, ``place=in-place`` (read the in-place
columns); ``nccl_algorithm=ring`` / ``nccl_protocol=LL`` for a run made with NCCL_ALGO /
NCCL_PROTO set (``netsim validate`` forces the same choice on NCCL's model) and
``nvls_chunksize=524288`` for one made with NCCL_NVLS_CHUNKSIZE set; ``nccl_version=2.26.2``
for the NCCL release the run used, where the file says it in words (an nccl-tests log's
``nccl-library=22602`` header, or NCCL_DEBUG's ``NCCL version 2.26.2``, quoted in a CSV's
comments too, is read without it): NCCL's model then picks with that release's tuner. Lines
``# note: TEXT`` say why the run differs from the model for a reason outside it (a shared
box, a framework's own loop); ``netsim validate`` prints them per file. A file without
that line may quote the command that reproduces it instead,
``# default command: netsim coll OP --topo T [--axis A] [--algo X] ... --measured FILE``:
its op, ``--topo``, ``--axis``, ``--algo``, ``--ranks`` and ``--gpus-per-thread`` are read
the same way. What the annotation and the file both say must agree. Every error
is one line naming the file (and the line and column where there is one).

>>> import tempfile, pathlib
>>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
>>> _ = p.write_text("# netsim-validate: op=allreduce ranks=8\\nsize_bytes,busbw_GBps\\n1048576,10\\n")
>>> read_measured(p)
[{'size_bytes': 1048576.0, 'busbw_GBps': 10.0}]
>>> run = read_measured_run(p)
>>> run.op, run.ranks
('allreduce', 8)
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from .._inputs.yamlio import read_text
from ..errors import InputError, NetsimError
from ..units import parse_size

__all__ = ["read_measured", "read_measured_run", "read_measured_runs", "read_nccl_tests",
           "read_tt_metal", "compare_measured", "measured_run_options",
           "measured_gpus_per_thread", "measured_nccl_version", "MeasuredRun",
           "MEASURED_COLUMNS"]

_VALUES = ("busbw_GBps", "time_s")
#: Table columns added by :func:`compare_measured`: (record key, header, formatter).
MEASURED_COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("measured_busbw_GBps", "measured busbw (GB/s)", lambda v: f"{v:.2f}"),
    ("measured_time_s", "measured time (us)", lambda v: f"{v * 1e6:.2f}"),
    ("error_pct", "sim vs measured", lambda v: f"{v:+.1f}%"),
]
#: netsim's op names (netsim.algorithms.OPS, spelled out: reading a file needs no engine).
OPS = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce")
#: Bytes per element of nccl-tests' and tt-metal's data types (``-d``), for the
#: count-per-rank test that tells an all-reduce from a reduce-scatter in an old log.
_TYPE_BYTES = {"int8": 1, "uint8": 1, "char": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "f8e4m3": 1,
               "f8e5m2": 1, "half": 2, "float16": 2, "bfloat16": 2, "bf16": 2, "int32": 4,
               "uint32": 4, "int": 4, "float": 4, "float32": 4, "int64": 8, "uint64": 8,
               "double": 8, "float64": 8}
_ANNOTATION = re.compile(r"^\s*#\s*netsim-validate:(.*)$")
_ANNOTATION_KEYS = ("topo", "op", "ranks", "axis", "gpus_per_thread", "algo", "family",
                    "summary", "place", "nccl_algorithm", "nccl_protocol", "nvls_chunksize",
                    "nccl_version")
#: Annotation keys that are NCCL's model's options (AlgoOptions.extra): a run made with
#: NCCL_ALGO / NCCL_PROTO (NCCL_NVLS_CHUNKSIZE) set is simulated with the same choice forced
#: (the same chunk size).
NCCL_FORCED = ("nccl_algorithm", "nccl_protocol", "nvls_chunksize")


@dataclass(frozen=True)
class MeasuredRun:
    """A measured file read whole: ``rows`` (``{'size_bytes', 'time_s', 'busbw_GBps'}``,
    the value columns present) and what the file says about its run; None where it says
    nothing. ``ops`` lists the ops the file may hold when its rows leave a choice (an old
    nccl-tests log of ``none`` rows: all-gather or all-to-all)."""

    path: Path
    format: str                                  # "nccl-tests", "tt-metal" or "csv"
    rows: list[dict[str, float]]
    ops: tuple[str, ...] = ()
    ranks: int | None = None
    gpus_per_thread: int | None = None
    dtype: str | None = None
    redop: str | None = None
    place: str | None = None                     # nccl-tests: "out-of-place" / "in-place"
    device: str | None = None
    topo: str | None = None
    axis: int | None = None
    algo: str | None = None
    family: str | None = None
    summary: bool = True
    #: The file's ``# note:`` lines, joined: why a run differs from the model for a reason
    #: outside it (a shared box, a framework's loop), which ``netsim validate`` prints.
    note: str | None = None
    config: str | None = None                    # tt-metal: "ring dram" ...
    #: The NCCL release the run used ("2.26.2"), as the log prints it or the annotation's
    #: ``nccl_version`` says; None where the file does not say.
    nccl_version: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def op(self) -> str | None:
        """The op, when the file names one (or its rows allow only one)."""
        return self.ops[0] if len(self.ops) == 1 else None

    def check(self, op: str, ranks: int | None = None) -> None:
        """Refuse, in one line naming the file, a comparison with a run of another op or
        another rank count than the file measured."""
        if self.ops and op not in self.ops:
            said = self.ops[0] if len(self.ops) == 1 else " or ".join(self.ops)
            hint = (f": compare it with `netsim coll {self.ops[0]} ... --measured "
                    f"{self.path}`" if self.ops[0] in OPS else "")
            raise InputError(f"{self.path}: measures {said}, not {op}{hint}")
        if ranks is not None and self.ranks is not None and ranks != self.ranks:
            raise InputError(f"{self.path}: measured on {self.ranks} ranks, the simulation "
                             f"has {ranks}: give --ranks {self.ranks} (or leave --ranks out)")


def _lines(path: Path, text: str) -> list[tuple[int, str]]:
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


def _op_name(text: str) -> str:
    """``all_gather_perf`` / ``all_gather`` / ``AllGather`` -> ``allgather``."""
    name = text.strip().lower()
    name = name[:-5] if name.endswith("_perf") else name
    return name.replace("_", "").replace("-", "")


# -- annotations -----------------------------------------------------------------------

def _annotation(path: Path, text: str) -> dict[str, Any]:
    """The ``# netsim-validate:`` words of ``text`` (one such line at most)."""
    found: dict[str, Any] = {}
    where = None
    for number, line in enumerate(text.splitlines(), start=1):
        match = _ANNOTATION.match(line)
        if match is None:
            continue
        if where is not None:
            raise InputError(f"{path}:{number}: a second netsim-validate line (the first is "
                             f"line {where}): give one")
        where = number
        for word in match.group(1).split():
            key, eq, value = word.partition("=")
            if not eq or not value:
                raise InputError(f"{path}:{number}: netsim-validate: expected key=value, "
                                 f"got {word!r}")
            if key not in _ANNOTATION_KEYS:
                raise InputError(f"{path}:{number}: netsim-validate: unknown key {key!r} "
                                 f"(one of {', '.join(_ANNOTATION_KEYS)})")
            found[key] = _annotation_value(path, number, key, value)
    return found if where is not None else _default_command(path, text)


_DEFAULT_COMMAND = re.compile(r"^\s*#\s*default command\b.*?:\s*(netsim\s+coll\s.*)$")
#: The options of a ``# default command: netsim coll ...`` line and their annotation keys;
#: the others are what the comparison does anyway (sizes, the file itself).
_COMMAND_KEYS = {"--topo": "topo", "--axis": "axis", "--algo": "algo", "--ranks": "ranks",
                 "--gpus-per-thread": "gpus_per_thread"}
_COMMAND_IGNORED = ("--sizes", "--size", "--measured")


def _default_command(path: Path, text: str) -> dict[str, Any]:
    """The annotation said by a ``# default command: netsim coll OP --topo T [--axis A]
    [--algo X] ... --measured FILE`` comment (the form data files quote the command that
    reproduces them in), for a file without a netsim-validate line; {} without either."""
    import shlex

    for number, line in enumerate(text.splitlines(), start=1):
        match = _DEFAULT_COMMAND.match(line)
        if match is None:
            continue
        try:
            words = shlex.split(match.group(1))
        except ValueError as err:
            raise InputError(f"{path}:{number}: default command: {err}") from None
        found: dict[str, Any] = {}
        if len(words) > 2 and not words[2].startswith("-"):
            found["op"] = _annotation_value(path, number, "op", words[2])
        rest = words[3:]
        for option, value in zip(rest[::2], rest[1::2]):
            if option in _COMMAND_KEYS:
                key = _COMMAND_KEYS[option]
                found[key] = _annotation_value(path, number, key, value)
            elif option not in _COMMAND_IGNORED:
                raise InputError(f"{path}:{number}: default command: {option} is not an "
                                 f"option netsim validate reproduces (add a "
                                 f"'# netsim-validate: ...' line)")
        if found.get("algo") == "default":
            del found["algo"]
        return found
    return {}


_NOTE = re.compile(r"^\s*#\s*note:\s*(.*?)\s*$")


def _note(text: str) -> str | None:
    """The ``# note: ...`` lines of ``text``, joined by spaces (None without one)."""
    found = [m.group(1) for line in text.splitlines() if (m := _NOTE.match(line))]
    return " ".join(x for x in found if x) or None


def _annotation_value(path: Path, number: int, key: str, value: str) -> Any:
    if key == "op":
        if _op_name(value) not in OPS:
            raise InputError(f"{path}:{number}: netsim-validate: op {value!r} is not one of "
                             f"{', '.join(OPS)}")
        return _op_name(value)
    if key in ("ranks", "axis", "gpus_per_thread", "nvls_chunksize"):
        least = 1 if key == "ranks" else 0
        if not value.isdigit() or int(value) < least:
            raise InputError(f"{path}:{number}: netsim-validate: {key} must be a whole "
                             f"number >= {least}, got {value!r}")
        return int(value)
    if key == "nccl_version":
        from ..algorithms.nccl import parse_nccl_version, version_text

        try:
            return version_text(parse_nccl_version(value))
        except ValueError as err:
            raise InputError(f"{path}:{number}: netsim-validate: {err}") from None
    if key == "place":
        if value not in ("out-of-place", "in-place"):
            raise InputError(f"{path}:{number}: netsim-validate: place must be out-of-place "
                             f"or in-place, got {value!r}")
        return value
    if key == "summary":
        if value not in ("yes", "no"):
            raise InputError(f"{path}:{number}: netsim-validate: summary must be yes or no, "
                             f"got {value!r}")
        return value == "yes"
    return value


def _annotate(run: MeasuredRun, notes: dict[str, Any]) -> MeasuredRun:
    """``run`` with the annotation's words; a word that contradicts the file is refused."""
    if "op" in notes and run.ops and notes["op"] not in run.ops:
        raise InputError(f"{run.path}: netsim-validate says op={notes['op']} but the file "
                         f"measures {' or '.join(run.ops)}")
    if "ranks" in notes and run.ranks is not None and notes["ranks"] != run.ranks:
        raise InputError(f"{run.path}: netsim-validate says ranks={notes['ranks']} but the "
                         f"file has {run.ranks}")
    if ("gpus_per_thread" in notes and run.gpus_per_thread is not None
            and notes["gpus_per_thread"] != run.gpus_per_thread):
        raise InputError(f"{run.path}: netsim-validate says gpus_per_thread="
                         f"{notes['gpus_per_thread']} but the log has nGpus "
                         f"{run.gpus_per_thread}")
    if ("nccl_version" in notes and run.nccl_version is not None
            and notes["nccl_version"] != run.nccl_version):
        raise InputError(f"{run.path}: netsim-validate says nccl_version="
                         f"{notes['nccl_version']} but the file prints NCCL "
                         f"{run.nccl_version}")
    if "place" in notes and run.format != "nccl-tests":
        raise InputError(f"{run.path}: netsim-validate: place= applies to nccl-tests logs, "
                         f"not to a {run.format} file")
    changes = {k: v for k, v in notes.items() if k != "op" and k not in NCCL_FORCED}
    forced = {k: notes[k] for k in NCCL_FORCED if k in notes}
    if forced:
        changes["extra"] = {**run.extra, "nccl_options": forced}
    if "op" in notes:
        changes["ops"] = (notes["op"],)
    return replace(run, **changes)


# -- nccl-tests ------------------------------------------------------------------------

#: The NCCL release a log prints: nccl-tests' header (``# nccl-tests version 2.17.1
#: nccl-headers=22602 nccl-library=22602``) or NCCL_DEBUG=INFO's ``NCCL version 2.26.2+cuda12.8``.
_NCCL_LIBRARY = re.compile(r"\bnccl-library=(\d{5})\b")
_NCCL_DEBUG_VERSION = re.compile(r"\bNCCL version (\d+\.\d+\.\d+)")


def _printed_version(text: str, comments_only: bool) -> str | None:
    """The NCCL release ``text`` prints ("2.26.2"), in a CSV only on ``#`` lines; None
    where it prints none or one NCCL's model does not know (its tuner then stays 2.30's,
    which the records say)."""
    from ..algorithms.nccl import parse_nccl_version, version_text

    for line in text.splitlines():
        if comments_only and not line.lstrip().startswith("#"):
            continue
        match = _NCCL_LIBRARY.search(line) or _NCCL_DEBUG_VERSION.search(line)
        if match is not None:
            try:
                return version_text(parse_nccl_version(match.group(1)))
            except ValueError:
                return None
    return None


_NCCL_HEADER = re.compile(r"^#\s+size\s+count\s+type\b")
_NCCL_START = re.compile(r"^#\s*Collective test starting:\s*(\S+)")
_NCCL_THREADS = re.compile(r"^#\s*nThread\s+(\d+)\s+nGpus\s+(\d+)")
_NGPUS = re.compile(r"\bnGpus\s+(\d+)")           # quoted in a CSV's comments
_NCCL_RANK = re.compile(r"^#\s*Rank\s+(\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+\S+\s+device\s+"
                        r"\d+\s+\[[^\]]*\]\s*(.*)$")


def _nccl_sections(text: str) -> list[tuple[int, str | None, list[str]]]:
    """(first line number, program or None, lines) of each run in a log: a ``Collective
    test starting`` line opens a run; a log without one is one run."""
    sections: list[tuple[int, str | None, list[str]]] = []
    start, program, lines = 1, None, []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _NCCL_START.match(line)
        if match is not None:
            if program is not None or any(_NCCL_HEADER.match(x) for x in lines):
                sections.append((start, program, lines))
            start, program, lines = number, match.group(1), []
        lines.append(line)
    sections.append((start, program, lines))
    return sections


def _row_ops(redop: str | None, root: int | None, per_rank: bool | None) -> tuple[str, ...]:
    """The ops an nccl-tests row can belong to, from its redop (``none``: no reduction),
    root (-1: not rooted) and whether its count is per rank; None: not known."""
    reducing = None if redop is None else redop != "none"
    rooted = None if root is None else root >= 0
    said = (reducing, per_rank, rooted)
    return tuple(op for op, facts in _OP_FACTS.items()
                 if all(s is None or s == f for s, f in zip(said, facts)))


#: (reduces, count per rank, rooted) of each op's nccl-tests rows.
_OP_FACTS = {"allreduce": (True, False, False), "allgather": (False, True, False),
             "reducescatter": (True, True, False), "alltoall": (False, True, False),
             "broadcast": (False, False, True), "reduce": (True, False, True)}


def _nccl_runs(path: Path, text: str, place: str) -> list[MeasuredRun]:
    """Every run of an nccl-tests log, each with the NCCL release the log prints; one
    line if it has no size rows."""
    version = _printed_version(text, comments_only=False)
    runs = [replace(run, nccl_version=version)
            for start, program, lines in _nccl_sections(text)
            if (run := _nccl_section(path, start, program, lines, place))]
    if not runs:
        raise InputError(f"{path}: no nccl-tests size rows (expected a '#  size  count  "
                         f"type ...' header followed by rows)")
    return runs


def read_nccl_tests(path: str | Path, text: str | None = None, *, op: str | None = None,
                    place: str = "out-of-place") -> MeasuredRun:
    """An nccl-tests log read whole (:class:`MeasuredRun`): the size rows as
    ``{'size_bytes', 'time_s', 'busbw_GBps'}`` (``place`` columns, time from us to s) and
    the run's op, ranks, ``-g`` (``nGpus``), data type, reduction and device. A log of
    several runs gives the run of ``op``.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "ar.log"
    >>> _ = p.write_text("# Collective test starting: all_reduce_perf\\n"
    ...   "# nThread 1 nGpus 8 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5\\n"
    ...   "#       size    count   type  redop  root   time  algbw  busbw #wrong   time  algbw  busbw #wrong\\n"
    ...   "#        (B) (elements)                     (us) (GB/s) (GB/s)          (us) (GB/s) (GB/s)\\n"
    ...   "     1048576   262144  float    sum    -1  25.00  41.94  73.40      0  24.00  43.69  76.46      0\\n"
    ...   "# Avg bus bandwidth    : 74.93\\n")
    >>> run = read_nccl_tests(p)
    >>> run.rows, run.op, run.gpus_per_thread, run.dtype
    ([{'size_bytes': 1048576.0, 'time_s': 2.5e-05, 'busbw_GBps': 73.4}], 'allreduce', 8, 'float')
    >>> read_nccl_tests(p, place="in-place").rows[0]["time_s"]
    2.4e-05
    """
    path = Path(path)
    if place not in ("out-of-place", "in-place"):
        raise InputError(f"{path}: place must be out-of-place or in-place, got {place!r}")
    text = read_text(path, "nccl-tests log") if text is None else text
    runs = _nccl_runs(path, text, place)
    if len(runs) == 1:
        return runs[0]
    names = ", ".join(run.extra["program"] for run in runs)
    if op is None:
        raise InputError(f"{path}: holds {len(runs)} runs ({names}): say which op")
    chosen = [run for run in runs if op in run.ops]
    if len(chosen) != 1:
        how = "no" if not chosen else f"{len(chosen)}"
        raise InputError(f"{path}: {how} run of {op} among its {len(runs)} ({names})")
    return chosen[0]


def _nccl_section(path: Path, start: int, program: str | None, lines: list[str],
                  place: str) -> MeasuredRun | None:
    header: list[str] | None = None
    at: dict[str, int] = {}
    threads = gpus = None
    ranks: dict[int, str] = {}
    out: list[dict[str, float]] = []
    out_lines: list[int] = []
    seen: dict[str, set] = {"type": set(), "redop": set(), "ops": set()}
    ops_each: list[tuple[str, ...]] = []
    for number, line in enumerate(lines, start=start):
        match = _NCCL_THREADS.match(line)
        if match is not None:
            threads, gpus = int(match.group(1)), int(match.group(2))
            continue
        match = _NCCL_RANK.match(line)
        if match is not None:
            ranks[int(match.group(1))] = match.group(2).strip()
            continue
        if _NCCL_HEADER.match(line):
            header = line.lstrip("#").split()
            at = _nccl_columns(path, number, header, place)
            continue
        fields = line.split()
        if header is None or not fields or line.lstrip().startswith("#") \
                or not fields[0].isdigit():
            continue
        if len(fields) <= max(at.values()):
            raise InputError(f"{path}:{number}: expected {len(header)} columns like the "
                             f"header, got {len(fields)}")
        size, seconds, busbw = (fields[at[key]] for key in ("size", "time", "busbw"))
        if size == "0":
            continue            # nccl-tests' 0 B rows (one per -b 8 .. count of 0): no data
        row = {"size_bytes": _number(path, number, "size", size, True),
               "time_s": _number(path, number, "time", seconds, False) / 1e6,
               "busbw_GBps": _number(path, number, "busbw", busbw, False, zero_ok=True)}
        earlier = _find(out, row["size_bytes"])
        if earlier is not None:
            raise InputError(f"{path}:{number}: size {size!r} is also on line "
                             f"{out_lines[earlier]}: give one run per log")
        known = max(len(ranks), (threads or 0) * (gpus or 0)) or None
        ops_each.append(_nccl_row_ops(fields, at, row["size_bytes"], known, seen))
        out.append(row)
        out_lines.append(number)
    if header is None or not out:
        return None
    ops = _nccl_ops(path, start, program, ops_each)
    device = next(iter(ranks.values())) if ranks else None
    # One process prints a Rank line per GPU it drives, so nThread x nGpus is the count of
    # a single-process log and a lower bound for MPI runs (one line per rank of each
    # process): a shorter Rank list was cut when the log was copied.
    count = max(len(ranks), (threads or 0) * (gpus or 0)) or None
    types, redops = seen["type"], seen["redop"]
    return MeasuredRun(
        path=path, format="nccl-tests", rows=out, ops=ops, ranks=count,
        gpus_per_thread=gpus, dtype=next(iter(types)) if len(types) == 1 else None,
        redop=next(iter(redops)) if len(redops) == 1 else None, place=place, device=device,
        extra={"program": program or "nccl-tests", "threads": threads})


def _nccl_columns(path: Path, number: int, header: list[str], place: str) -> dict[str, int]:
    """Positions of the columns to read. The out-of-place time/algbw/busbw come first, the
    in-place ones after; later nccl-tests add columns at the end (#iters, timestamps), so
    positions count from the left."""
    time_key = "time" if "time" in header else "cputime"
    at = {key: header.index(key) for key in ("size", "count", "type", "redop", "root")
          if key in header}
    times = [i for i, key in enumerate(header) if key == time_key]
    busbws = [i for i, key in enumerate(header) if key == "busbw"]
    which = 0 if place == "out-of-place" else 1
    if "size" not in at or len(times) <= which or len(busbws) <= which:
        what = "size, time and busbw" if which == 0 else "in-place time and busbw"
        raise InputError(f"{path}:{number}: nccl-tests header without {what} columns")
    at["time"], at["busbw"] = times[which], busbws[which]
    return at


def _nccl_row_ops(fields: list[str], at: dict[str, int], size: float, ranks: int | None,
                  seen: dict[str, set]) -> tuple[str, ...]:
    dtype = fields[at["type"]] if "type" in at else None
    redop = fields[at["redop"]] if "redop" in at else None
    root = None
    if "root" in at and re.fullmatch(r"-?\d+", fields[at["root"]]):
        root = int(fields[at["root"]])
    if dtype is not None:
        seen["type"].add(dtype)
    if redop is not None:
        seen["redop"].add(redop)
    per_rank = None
    width = _TYPE_BYTES.get((dtype or "").lower())
    if width and "count" in at and fields[at["count"]].isdigit() and size > 0:
        whole = int(fields[at["count"]]) * width
        if whole == size:
            per_rank = False
        elif whole < size and (ranks is None or whole * ranks == size):
            per_rank = True
    return _row_ops(redop, root, per_rank)


def _nccl_ops(path: Path, start: int, program: str | None,
              ops_each: list[tuple[str, ...]]) -> tuple[str, ...]:
    """The op of a run: its program's name, else what every row allows."""
    if program is not None:
        return (_op_name(program),)
    ops = set(OPS)
    for row_ops in ops_each:
        ops &= set(row_ops)
    if not ops:
        raise InputError(f"{path}:{start}: rows of different ops in one run (their redop, "
                         f"root and count columns disagree)")
    return tuple(op for op in OPS if op in ops) if ops != set(OPS) else ()


# -- tt-metal CCL result tables ----------------------------------------------------------

_TT_OPS = {"all_reduce": "allreduce", "all_gather": "allgather",
           "reduce_scatter": "reducescatter", "all_to_all": "alltoall",
           "broadcast": "broadcast", "reduce": "reduce"}


def _looks_tt_metal(text: str) -> bool:
    return bool(re.search(r"^\|\s*n\s*\|.*\|\s*size \(B\)\s*\|.*\|\s*time \(us\)\s*\|", text,
                          re.MULTILINE))


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _tt_metal_tables(path: Path, text: str):
    """(arch, dtype, {(op, n): (configuration, [(line, row)])}) of a tt-metal table."""
    arch = dtype = None
    section_op = section_config = None
    header: list[str] | None = None
    found: dict[tuple[str, int], tuple[str | None, list[tuple[int, dict]]]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        match = re.match(r"^arch\s+(\S+)", stripped)
        if match and arch is None:
            arch = match.group(1)
        match = re.match(r"^dtype\s+(\S+)", stripped)
        if match and dtype is None:
            dtype = match.group(1)
        match = re.match(r"^(#+)\s+(.*?)\s*$", stripped)
        if match:
            title = match.group(2).strip().lower()
            if title in _TT_OPS:
                section_op = _TT_OPS[title]
            else:                                       # "## ring, DRAM": a configuration
                section_op, section_config = None, title.replace(",", "")
            header = None
            continue
        if not stripped.startswith("|"):
            continue
        cells = _cells(stripped)
        if "size (B)" in cells and "time (us)" in cells:
            header = cells
            continue
        if header is None or section_op is None or set("".join(cells)) <= set("-:"):
            continue
        if len(cells) != len(header):
            raise InputError(f"{path}:{number}: expected {len(header)} cells like the table "
                             f"header, got {len(cells)}")
        row = dict(zip(header, cells))
        if not row.get("size (B)") or not row.get("time (us)"):
            continue                                    # no shape at this size
        if not row.get("n", "").isdigit():
            raise InputError(f"{path}:{number}: column 'n': expected a device count, got "
                             f"{row.get('n')!r}")
        config = row.get("config") or section_config
        key = (section_op, int(row["n"]))
        if key in found and found[key][0] != config:
            continue                                    # a later configuration: not read
        values = {"size_bytes": _number(path, number, "size (B)", row["size (B)"], True),
                  "time_s": _number(path, number, "time (us)", row["time (us)"], False) / 1e6}
        if row.get("busbw (GB/s)"):
            values["busbw_GBps"] = _number(path, number, "busbw (GB/s)", row["busbw (GB/s)"],
                                           False, zero_ok=True)
        rows = found.setdefault(key, (config, []))[1]
        earlier = _find([r for _, r in rows], values["size_bytes"])
        if earlier is not None:
            raise InputError(f"{path}:{number}: size {row['size (B)']!r} is also on line "
                             f"{rows[earlier][0]}: give one row per size")
        rows.append((number, values))
    if not found:
        raise InputError(f"{path}: no tt-metal CCL result rows (expected '## all_gather' "
                         f"sections of '| n | ... | size (B) | ... | time (us) |' tables)")
    return arch, dtype, found


def read_tt_metal(path: str | Path, text: str | None = None, *, op: str | None = None,
                  ranks: int | None = None) -> MeasuredRun:
    """The rows of one op on one device count of a tt-metal CCL result table (Markdown, as
    tech_reports/CCLs/results/*.md): ``op`` may be left out when the file has one op,
    ``ranks`` (``n``) when it has one device count for it. The first configuration of
    (op, n) in the file is read (ring before line, DRAM before L1, as tt-metal's SUMMARY
    tables choose); empty rows (no shape at that size) are skipped.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "SUMMARY.md"
    >>> _ = p.write_text("```\\narch          blackhole  line rate 25.0 GB/s\\n"
    ...   "dtype         bfloat16  (2048 B pages)\\n```\\n## all_gather\\n"
    ...   "| n | config | target (B) | size (B) | count | pages | time (us) | algbw (GB/s) | busbw (GB/s) |\\n"
    ...   "|--:|--|--:|--:|--:|--:|--:|--:|--:|\\n"
    ...   "| 8 | ring dram | 8192 | | | | | | |\\n"
    ...   "| 8 | ring dram | 16384 | 16384 | 8192 | 8 | 12.19 | 1.34 | 1.18 |\\n")
    >>> run = read_tt_metal(p)
    >>> run.rows, run.op, run.ranks, run.device, run.config
    ([{'size_bytes': 16384.0, 'time_s': 1.219e-05, 'busbw_GBps': 1.18}], 'allgather', 8, 'blackhole', 'ring dram')
    """
    path = Path(path)
    text = read_text(path, "tt-metal result table") if text is None else text
    arch, dtype, found = _tt_metal_tables(path, text)
    ops = sorted({o for o, _ in found}, key=OPS.index)
    if op is None and len(ops) > 1:
        raise InputError(f"{path}: holds {', '.join(ops)}: say which op")
    op = op or ops[0]
    counts = sorted(n for o, n in found if o == op)
    if not counts:
        raise InputError(f"{path}: measures {', '.join(ops)}, not {op}: compare it with "
                         f"`netsim coll {ops[0]} ... --measured {path}`")
    if ranks is None and len(counts) > 1:
        raise InputError(f"{path}: {op} on {', '.join(map(str, counts))} devices: say how "
                         f"many ranks (--ranks)")
    n = counts[0] if ranks is None else ranks
    if n not in counts:
        raise InputError(f"{path}: {op} measured on {', '.join(map(str, counts))} devices, "
                         f"not {n}: give --ranks {counts[-1]}")
    config, rows = found[(op, n)]
    return MeasuredRun(path=path, format="tt-metal", rows=[r for _, r in rows], ops=(op,),
                       ranks=n, dtype=dtype, device=arch, config=config,
                       extra={"ops": tuple(ops), "counts": tuple(counts)})


# -- CSV and dispatch ------------------------------------------------------------------

def _read_csv(path: Path, text: str) -> MeasuredRun:
    lines = _lines(path, text)
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
    # a comment quoting the log's 'nThread 1 nGpus 8' (or saying 'nGpus 8') gives its -g
    quoted = next((m for line in text.splitlines() if line.lstrip().startswith("#")
                   and (m := _NGPUS.search(line))), None)
    return MeasuredRun(path=path, format="csv", rows=out,
                       gpus_per_thread=int(quoted.group(1)) if quoted else None,
                       nccl_version=_printed_version(text, comments_only=True))


def read_measured_run(path: str | Path, *, op: str | None = None,
                      ranks: int | None = None) -> MeasuredRun:
    """``path`` read whole (:class:`MeasuredRun`), whatever its format (nccl-tests log,
    tt-metal table or CSV), with its ``# netsim-validate:`` annotation applied. ``op`` and
    ``ranks`` choose the run of a file that holds several (a log of several nccl-tests
    runs, a tt-metal table of several ops and device counts); they are not checked here
    (:meth:`MeasuredRun.check` does)."""
    path = Path(path)
    text = read_text(path, "measured file")
    notes = _annotation(path, text)
    op = op or notes.get("op")
    ranks = ranks or notes.get("ranks")
    if any(_NCCL_HEADER.match(line) for line in text.splitlines()):
        run = read_nccl_tests(path, text, op=op, place=notes.get("place", "out-of-place"))
    elif _looks_tt_metal(text):
        run = read_tt_metal(path, text, op=op, ranks=ranks)
    else:
        run = _read_csv(path, text)
    return replace(_annotate(run, notes), note=_note(text))


def read_measured_runs(path: str | Path) -> list[MeasuredRun]:
    """Every run ``path`` holds, annotation applied: one, or one per nccl-tests run of a
    log, or one per (op, device count) of a tt-metal table (an annotation's op= and
    ranks= keep those only)."""
    path = Path(path)
    text = read_text(path, "measured file")
    notes = _annotation(path, text)
    if any(_NCCL_HEADER.match(line) for line in text.splitlines()):
        runs = _nccl_runs(path, text, notes.get("place", "out-of-place"))
    elif _looks_tt_metal(text):
        _, _, found = _tt_metal_tables(path, text)
        runs = [read_tt_metal(path, text, op=op, ranks=n)
                for op, n in sorted(found, key=lambda key: (OPS.index(key[0]), key[1]))]
    else:
        runs = [_read_csv(path, text)]
    if "op" in notes and len(runs) > 1:
        runs = [run for run in runs if notes["op"] in run.ops] or runs
    if "ranks" in notes and len(runs) > 1:
        runs = [run for run in runs if run.ranks == notes["ranks"]] or runs
    note = _note(text)
    return [replace(_annotate(run, notes), note=note) for run in runs]


def read_measured(path: str | Path, *, op: str | None = None,
                  ranks: int | None = None) -> list[dict[str, float]]:
    """Rows of ``path`` as ``{'size_bytes': .., 'busbw_GBps': .., 'time_s': ..}`` (the
    value columns present): :func:`read_measured_run`'s rows. One-line InputError naming
    file, line and column."""
    return read_measured_run(path, op=op, ranks=ranks).rows


def measured_gpus_per_thread(path: str | Path, op: str | None = None) -> int | None:
    """GPUs one nccl-tests thread drove in the run ``path`` measures (``-g N``): an
    nccl-tests log's ``# nThread 1 nGpus N`` line, a CSV comment quoting it (or saying
    ``nGpus N``), or the annotation's ``gpus_per_thread``; None if the file does not say.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
    >>> _ = p.write_text("# nThread 1 nGpus 8 minBytes 8\\nsize_bytes,time_us\\n8,40\\n")
    >>> measured_gpus_per_thread(p)
    8
    """
    return read_measured_run(path, op=op).gpus_per_thread


def measured_nccl_version(path: str | Path, op: str | None = None) -> str | None:
    """The NCCL release ("2.26.2") of the run ``path`` measures: the log's
    ``nccl-library=`` or ``NCCL version`` line (quoted in a CSV's comments too) or the
    annotation's ``nccl_version``; None where the file does not say.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "m.csv"
    >>> _ = p.write_text("# nccl-tests version 2.17.1 nccl-headers=22602 nccl-library=22602\\n"
    ...                  "size_bytes,time_us\\n8,40\\n")
    >>> measured_nccl_version(p)
    '2.26.2'
    """
    return read_measured_run(path, op=op).nccl_version


def measured_run_options(path: str | Path, op: str, *, ranks: int | None,
                         placed: bool, runs_as: Any, gpus_per_thread: int | None
                         ) -> tuple[int | None, int | None, str | None]:
    """``(ranks, gpus_per_thread, nccl_version)`` for a run compared with ``path``: the
    file's op must be ``op``; its rank count is used when the command gives none
    (``placed``: --axis or --nodes chose the ranks) and must match when it does; when the
    run is NCCL's model, its ``-g`` becomes NCCL's host floor (``gpus_per_thread``) if the
    command gives none, and the release it printed is returned (else None) for the model
    to tune as that release did."""
    if ranks is None:
        runs = [run for run in read_measured_runs(path) if op in run.ops]
        if len({run.ranks for run in runs}) > 1:
            # a tt-metal table of several device counts (no -g, no release): the run's own
            # rank count picks one, checked once the run has it (compare_measured)
            return None, gpus_per_thread, None
    run = read_measured_run(path, op=op, ranks=ranks)
    run.check(op, ranks)
    if ranks is None and not placed:
        ranks = run.ranks
    if runs_as != "nccl":
        return ranks, gpus_per_thread, None
    if gpus_per_thread is None:
        gpus_per_thread = run.gpus_per_thread
    return ranks, gpus_per_thread, run.nccl_version


def _find(rows: list[dict[str, float]], size: float) -> int | None:
    """Index of the row of ``size`` bytes (relative tolerance 1e-6), if any."""
    return next((i for i, row in enumerate(rows)
                 if math.isclose(row["size_bytes"], size, rel_tol=1e-6)), None)


def compare_measured(path: str | Path, records: Sequence[dict[str, Any]]
                     ) -> list[tuple[str, str, Callable[[Any], str]]]:
    """Add ``measured_busbw_GBps`` / ``measured_time_s`` and ``error_pct`` (simulated minus
    measured, in % of measured: time if measured, else busbw) to each simulated record of
    a size that ``path`` has; return the table columns to show. A file of another op or
    rank count than the records is refused (:meth:`MeasuredRun.check`)."""
    first = records[0] if records else {}
    op = first.get("op")
    ranks = int(first["ranks"]) if first.get("ranks") else None
    run = read_measured_run(path, op=op, ranks=ranks)
    if op is not None:
        run.check(op, ranks)
    for record in records:
        found = _find(run.rows, float(record["size_bytes"]))
        if found is None:
            continue
        row = run.rows[found]
        for key in _VALUES:
            if key in row:
                record[f"measured_{key}"] = row[key]
        key = "time_s" if "time_s" in row else "busbw_GBps"
        if record.get(key):
            record["error_pct"] = 100.0 * (record[key] - row[key]) / row[key]
    present = {k for r in records for k in r}
    return [c for c in MEASURED_COLUMNS if c[0] in present or c[0] == "error_pct"]
