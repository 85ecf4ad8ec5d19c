"""A schedule file used where an algorithm name goes (``--algo ring.xml``).

:func:`file_algorithm` wraps a file as an :class:`~netsim.algorithms.Algorithm`, so the
collective runner, ``netsim coll`` and scenarios run it like a registered algorithm. The
suffix says the format: ``.xml`` is an MSCCL algorithm (:mod:`.msccl`), ``.json`` a netsim
schedule file (:func:`netsim.algorithms.load_collective`). Every build is checked to
perform the collective (:func:`netsim.algorithms.verify.check_import`).

>>> is_schedule_file("collectives/msccl-ring-allreduce-8.xml"), is_schedule_file("ring")
(True, False)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..algorithms import Algorithm, load_collective
from ..algorithms.verify import check_import
from ..errors import InputError
from .msccl import COLL_OPS, load_msccl, parse_msccl

__all__ = ["SUFFIXES", "is_schedule_file", "file_algorithm"]

SUFFIXES = (".xml", ".json")


def is_schedule_file(name) -> bool:
    """Does ``name`` (an ``--algo`` value) name a schedule file rather than an algorithm?"""
    return isinstance(name, (str, Path)) and Path(name).suffix.lower() in SUFFIXES


def _find(path: Path) -> Path:
    if path.is_file():
        return path
    from ..topology.catalogue_paths import search_dirs

    for folder in search_dirs("collectives"):     # a catalogue name such as ring.xml
        if (folder / path.name).is_file():
            return folder / path.name
    raise InputError(f"schedule file {str(path)!r} does not exist")


def file_algorithm(op: str, path: str | Path) -> Algorithm:
    """The algorithm of ``op`` that runs the schedule in ``path`` (MSCCL XML or JSON)."""
    path = _find(Path(path))
    if path.suffix.lower() == ".xml":
        from .._inputs.yamlio import read_text

        algo = parse_msccl(read_text(path, "MSCCL XML file"), str(path))
        coll = COLL_OPS.get(algo.coll, algo.coll)
        if coll != op:
            raise InputError(f"{path}: coll={algo.coll!r} is not a {op} algorithm")
        ranks = algo.ngpus

        def build(num_ranks, size, options):
            return load_msccl(path, size, gamma=options.gamma)
    else:
        ranks = None

        def build(num_ranks, size, options):
            return load_collective(path, num_ranks, size)

    def check(num_ranks, options):
        if ranks is not None and num_ranks != ranks:
            return f"is written for {ranks} GPUs, not {num_ranks} (use --ranks {ranks})"
        return None

    def build_with_meta(num_ranks, size, options):
        schedule = build(num_ranks, size, options)
        meta = dict(schedule.meta)
        meta.update(op=op, algorithm=path.name, size=float(size), ranks=num_ranks)
        schedule = replace(schedule, meta=meta)
        # An imported file is checked like a built-in algorithm's tests check it: one that
        # does not perform the collective would print an impossible time as an answer.
        check_import(schedule, op, num_ranks, source=str(path), root=options.root)
        return schedule

    return Algorithm(op, path.name, f"schedule file {path}", build_with_meta, check=check)
