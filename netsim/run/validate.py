"""Every published measurement against the command a user would type: ``netsim validate``.

Each measured file of a folder (``benchmarks/data`` by default: CSVs, nccl-tests logs,
tt-metal CCL result tables; see :mod:`netsim.run.measured`) is one
:class:`ValidationCase`: the machine, op and ranks its ``# netsim-validate:`` line (or its
header: an nccl-tests log's GPU name, a tt-metal table's ``arch``) names, run as ``netsim
coll OP --topo MACHINE --measured FILE`` runs it: algorithm ``default`` (the machine's own
library, :mod:`netsim.run.library`) unless the file names the algorithm its run asked
for, the file's rank count, and nccl-tests' ``-g`` as NCCL's host floor. Every size of the
file is simulated; the error is on time, ``simulated / measured - 1`` (a file of busbw
only is converted with the op's busbw factor).

:func:`summarize_validation` gives, per machine family (the annotation's ``family``, else
the preset's name), the median and worst error and the share of sizes within tolerance:
15% from 1 MiB up, 30% below (:func:`tolerance`). :func:`file_notes` lists the files whose
``# note:`` says why they differ for a reason outside the model, or that are kept out of
the summary (``summary=no``), with how many of their sizes are outside tolerance.

>>> tolerance(1 << 20), tolerance(64 << 10)
(0.15, 0.3)
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..errors import InputError
from .measured import OPS, MeasuredRun, read_measured_runs

__all__ = ["ValidationCase", "validation_cases", "run_validation", "summarize_validation",
           "file_notes", "tolerance", "MEASURED_SUFFIXES", "LARGE"]

#: Files looked at in a folder; others (README, scripts) are not measurements.
MEASURED_SUFFIXES = (".csv", ".log", ".txt", ".out", ".md")
#: From this size up the tolerance is 15%, below it 30% (the fidelity goal: docs/fidelity.md).
LARGE = 1 << 20
#: Machines of un-annotated files, from an nccl-tests log's GPU name or a tt-metal
#: table's arch (first match wins; a file needing another machine says topo=).
_MACHINES = [(r"GB200", "gb200-nvl72"), (r"B200", "dgx-b200"), (r"H100|H200|H800", "dgx-h100"),
             (r"A100|A800", "dgx-a100"), (r"^blackhole", "galaxy-bh"),
             (r"^wormhole", "t3000")]


def tolerance(size_bytes: float) -> float:
    """The error a size may have: 0.15 from 1 MiB up, 0.30 below."""
    return 0.15 if size_bytes >= LARGE else 0.30


@dataclass(frozen=True)
class ValidationCase:
    """One measured run and how it is simulated: ``netsim coll OP --topo TOPO [--axis A]
    [--algo ALGORITHM] --measured PATH`` (the ranks and ``-g`` come from the file)."""

    path: Path
    measured: MeasuredRun
    topo: str
    op: str
    ranks: int | None
    axis: int | None
    algorithm: str
    family: str
    summary: bool

    def rows(self, quick: bool = False) -> list[dict[str, float]]:
        """The measured rows simulated: all, or three spread over the file (``quick``)."""
        return _quick(self.measured.rows) if quick else self.measured.rows

    def command(self) -> str:
        """The command a user types to compare this file."""
        words = ["netsim", "coll", self.op, "--topo", self.topo]
        if self.axis is not None:
            words += ["--axis", str(self.axis)]
        if self.algorithm != "default":
            words += ["--algo", self.algorithm]
        if self.measured.format == "tt-metal" and len(self.measured.extra["counts"]) > 1:
            words += ["--ranks", str(self.ranks)]
        forced = self.measured.extra.get("nccl_options", {})
        note = "".join(f" ({key}={value})" for key, value in forced.items())
        return " ".join(words + ["--measured", _shown(self.path)]) + note


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _machine(run: MeasuredRun) -> str | None:
    if run.topo:
        return run.topo
    for pattern, preset in _MACHINES:
        if run.device and re.search(pattern, run.device, re.IGNORECASE):
            return preset
    return None


def validation_cases(directory: str | Path, *, family: str | None = None,
                     skipped: list[str] | None = None) -> list[ValidationCase]:
    """The cases of the measured files in ``directory`` (sorted by name; not its
    sub-folders; READMEs and other files that are not measurements are passed over), or of
    the one file ``directory`` names, of ``family`` only when given. A file whose machine is not known (no
    ``topo=``, no recognised device) or whose op netsim does not simulate is left out, with
    the reason appended to ``skipped``; a malformed file is a one-line InputError."""
    folder = Path(directory)
    if folder.is_file():                                # one file: it is a measurement
        paths = [folder]
    elif folder.is_dir():
        paths = [path for path in sorted(folder.iterdir()) if path.is_file()
                 and path.suffix.lower() in MEASURED_SUFFIXES
                 and (path.suffix.lower() == ".csv"
                      or _measured_text(path.read_text(errors="replace")))]
    else:
        raise InputError(f"{folder}: no such folder or file of measurements")
    cases: list[ValidationCase] = []
    for path in paths:
        for run in read_measured_runs(path):
            case = _case(run, skipped)
            if case is not None and (family is None or case.family == family):
                cases.append(case)
    return cases


def _measured_text(text: str) -> bool:
    from .measured import _ANNOTATION, _NCCL_HEADER, _looks_tt_metal

    lines = text.splitlines()
    return (_looks_tt_metal(text) or any(_NCCL_HEADER.match(x) for x in lines)
            or any(_ANNOTATION.match(x) for x in lines))


def _case(run: MeasuredRun, skipped: list[str] | None) -> ValidationCase | None:
    def skip(why: str) -> None:
        if skipped is not None:
            skipped.append(f"{_shown(run.path)}: {why}")

    topo = _machine(run)
    if topo is None:
        skip("no machine (add a '# netsim-validate: topo=PRESET op=OP ranks=N' line)")
        return None
    if run.op is not None and run.op not in OPS:
        skip(f"op {run.op}: not a collective netsim simulates")
        return None
    if run.op is None:
        said = " or ".join(run.ops) if run.ops else "not said"
        skip(f"op {said} (add op= to its netsim-validate line)")
        return None
    family = run.family or re.split(r"[,:]", topo, maxsplit=1)[0]
    return ValidationCase(path=run.path, measured=run, topo=topo, op=run.op, ranks=run.ranks,
                          axis=run.axis, algorithm=run.algo or "default", family=family,
                          summary=run.summary)


def _quick(rows: list[dict[str, float]], keep: int = 3) -> list[dict[str, float]]:
    """``keep`` sizes spread over the file (smallest, middle, largest up to 1 GiB): enough
    to see the small-size floor and the bandwidth regime, at a fraction of the time."""
    rows = sorted(rows, key=lambda r: r["size_bytes"])
    small = [r for r in rows if r["size_bytes"] <= 1 << 30] or rows[:1]
    if len(small) <= keep:
        return small
    picks = {round(i * (len(small) - 1) / (keep - 1)) for i in range(keep)}
    return [small[i] for i in sorted(picks)]


def run_validation(cases: Sequence[ValidationCase], *, quick: bool = False,
                   each: Callable[[int], None] | None = None, progress=None,
                   failed: list[str] | None = None, engine=None) -> list[dict[str, Any]]:
    """One record per measured size of every case: ``file``, ``family``, ``command``,
    ``size_bytes``, ``measured_time_s``, ``time_s`` (simulated), ``error_pct`` (on time),
    ``within`` (of :func:`tolerance`), ``ran`` (the algorithm run; NCCL's pick) and
    ``counted`` (False: the file asked to be kept out of the summary). ``quick``: three
    sizes per file. ``each(n)`` is called after each case with its number of sizes.
    ``engine``: the :class:`~netsim.engine.EngineConfig` every run takes (None: defaults).

    A case netsim refuses to simulate (a machine without that many ranks, an option the
    algorithm does not take) is a finding, not a reason to stop the others: with
    ``failed`` given, its one-line reason is appended there and the next case runs;
    without, the error is raised."""
    from ..errors import NetsimError

    out: list[dict[str, Any]] = []
    for case in cases:
        rows = case.rows(quick)
        try:
            out += _run_case(case, rows, progress, engine)
        except NetsimError as err:
            if failed is None:
                raise
            failed.append(f"{_shown(case.path)}: {case.command()}: {err}")
        if each is not None:
            each(len(rows))
    return out


def _run_case(case: ValidationCase, rows: list[dict[str, float]], progress, engine
              ) -> list[dict[str, Any]]:
    from ..algorithms import AlgoOptions
    from ..topology import parse_topology
    from .collective import run_sweep
    from .library import resolve_default

    topology = parse_topology(case.topo)
    extra = {}
    if resolve_default(case.op, topology, case.algorithm).algorithm == "nccl":
        if case.measured.gpus_per_thread is not None:
            extra["gpus_per_thread"] = case.measured.gpus_per_thread
        extra.update(case.measured.extra.get("nccl_options", {}))   # NCCL_ALGO, _PROTO ...
        if case.measured.nccl_version is not None:       # the release the run used
            extra["nccl_version"] = case.measured.nccl_version
    runs = run_sweep(case.op, topology, case.algorithm, [r["size_bytes"] for r in rows],
                     ranks=None if case.axis is not None else case.ranks, axis=case.axis,
                     options=AlgoOptions(extra=extra), progress=progress, engine=engine)
    out = []
    for run, row in zip(runs, rows):
        record = run.record()
        if case.ranks is not None and int(record["ranks"]) != case.ranks:
            raise InputError(f"measured on {case.ranks} ranks, the command simulates "
                             f"{record['ranks']}")
        measured = _measured_time(row, record)
        error = record["time_s"] / measured - 1.0
        ran = str(record.get("algorithm"))
        ran += f" {record['nccl']}" if record.get("nccl") else ""
        out.append({"file": case.path.name, "family": case.family,
                    "command": case.command(), "size_bytes": row["size_bytes"],
                    "measured_time_s": measured, "time_s": record["time_s"],
                    "error_pct": 100.0 * error,
                    "within": abs(error) <= tolerance(row["size_bytes"]),
                    "ran": ran, "counted": case.summary, "note": case.measured.note})
    return out


def _measured_time(row: dict[str, float], record: dict[str, Any]) -> float:
    """The measured time of ``row``; from its busbw when it has no time (busbw / algbw is
    the op's factor, the same for simulation and measurement)."""
    if row.get("time_s"):
        return row["time_s"]
    factor = record["busbw_GBps"] / record["algbw_GBps"]
    return row["size_bytes"] * factor / (row["busbw_GBps"] * 1e9)


def summarize_validation(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per family (in order of appearance), over the records counted in the summary:
    ``files``, ``sizes``, ``median_abs_error_pct``, ``worst_error_pct`` (signed, largest in
    magnitude) and where (``worst_at``), ``within_pct`` (share within :func:`tolerance`),
    ``within_large_pct`` / ``within_small_pct`` (>= 1 MiB / below; None without such
    sizes), and ``left_out`` (sizes of files marked summary=no)."""
    families: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        families.setdefault(record["family"], []).append(record)
    out = []
    for family, rows in families.items():
        counted = [r for r in rows if r["counted"]]
        errors = [abs(r["error_pct"]) for r in counted]
        worst = max(counted, key=lambda r: abs(r["error_pct"]), default=None)
        large = [r for r in counted if r["size_bytes"] >= LARGE]
        small = [r for r in counted if r["size_bytes"] < LARGE]
        out.append({
            "family": family, "files": len({r["file"] for r in counted}), "sizes": len(counted),
            "median_abs_error_pct": statistics.median(errors) if errors else None,
            "worst_error_pct": worst["error_pct"] if worst else None,
            "worst_at": f"{worst['file']} {_size(worst['size_bytes'])}" if worst else None,
            "within_pct": _share(counted), "within_large_pct": _share(large),
            "within_small_pct": _share(small), "left_out": len(rows) - len(counted)})
    return out


def file_notes(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per file that carries a ``# note:`` or is kept out of the summary (in order
    of appearance): ``file``, ``family``, ``sizes``, ``outside`` (sizes not within
    :func:`tolerance`), ``counted`` and ``note`` (the file's words; for a file kept out
    without one, that it asked to be)."""
    files: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        files.setdefault(record["file"], []).append(record)
    out = []
    for name, rows in files.items():
        note, counted = rows[0].get("note"), rows[0]["counted"]
        if note is None and counted:
            continue
        out.append({"file": name, "family": rows[0]["family"], "sizes": len(rows),
                    "outside": sum(not r["within"] for r in rows), "counted": counted,
                    "note": note or "kept out of the summary (summary=no), no reason given"})
    return out


def _share(rows: list[dict[str, Any]]) -> float | None:
    return 100.0 * sum(r["within"] for r in rows) / len(rows) if rows else None


def _size(size: float) -> str:
    from ..units import format_size

    return format_size(size) if not math.isnan(size) else "?"
