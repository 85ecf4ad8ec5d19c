"""Collectives as data: schedule files in ``collectives/`` loaded by name or path.

A file is the netsim schedule JSON (:meth:`netsim.schedule.Schedule.to_dict`) with
``"relative": true``: send sizes are fractions of the message, so one file serves every
message size. Its ``meta`` names the op and algorithm it implements. Files are looked up
in ``NETSIM_PATH`` folders first, then in the built-in ``collectives/`` folder.

>>> s = load_collective("allreduce-ring-8", 8, 8e6)
>>> s.num_sends, s.total_bytes        # 14 steps of 8 sends of 1 MB
(112, 112000000.0)
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..topology.catalogue_paths import search_dirs
from ..errors import InputError, unknown_name
from ..schedule import Schedule, load_schedule, save_schedule

__all__ = ["load_collective", "collective_names", "save_collective"]


def collective_names() -> list[str]:
    """Names (file stems) of the schedule files found in the catalogue folders."""
    names = {p.stem for d in search_dirs("collectives") for p in d.glob("*.json")}
    return sorted(names)


def _find(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".json" or path.is_file():
        if not path.is_file():
            raise InputError(f"collective file {str(path)!r} does not exist")
        return path
    for folder in search_dirs("collectives"):
        candidate = folder / f"{name_or_path}.json"
        if candidate.is_file():
            return candidate
    raise unknown_name("collective", str(name_or_path), collective_names())


def load_collective(name_or_path: str | Path, num_ranks: int, size: float) -> Schedule:
    """The schedule in ``collectives/<name>.json`` (or at a path) for a message of ``size``
    bytes; the file must be written for ``num_ranks`` ranks (plus any switch ranks)."""
    path = _find(name_or_path)
    schedule = load_schedule(path, message_size=float(size))
    extra = len(schedule.extra_nodes)
    if schedule.num_ranks - extra != num_ranks:
        raise InputError(f"collective {path.stem!r} is written for "
                         f"{schedule.num_ranks - extra} ranks, got {num_ranks}")
    meta = dict(schedule.meta)
    meta.update(size=float(size), ranks=num_ranks, source=str(path))
    return replace(schedule, meta=meta)


def save_collective(schedule: Schedule, path: str | Path) -> None:
    """Write ``schedule`` as a size-independent file (bytes as fractions of meta['size'])."""
    size = float(schedule.meta.get("size") or 0)
    if size <= 0:
        raise InputError("save_collective needs a schedule whose meta has a positive 'size'")
    meta = {k: v for k, v in schedule.meta.items() if k not in ("size", "source")}
    save_schedule(replace(schedule, meta=meta), path, message_size=size)
