"""The points of a sweep: a scenario's ``sweep:`` mapping expanded into scenario documents.

.. code-block:: yaml

    sweep:
      grid:                              # every combination of these lists
        topology: [galaxy-wh, dgx-h100]
        jobs[0].size: [1MiB, 64MiB]
      zip:                               # lists walked together (one axis per group)
        - {jobs[0].algorithm: [ring, dbtree], jobs[0].chunks: [1, 8]}

A key is a field path into the scenario: a header field (``topology``, ``seed``), or a job's
field (``jobs[0].size``; ``jobs[*].size`` sets it in every job). Points are ordered as the
grid is written: the first key varies slowest, the zip groups after the grid keys.

Each point runs with its own seed: the point's ``seed`` if the sweep sets it, else one
derived from the scenario's seed and the point's values (so adding values to a grid does not
change the seeds, nor the results, of the points already there).

>>> spec = SweepSpec(grid={"jobs[0].size": ["1MiB", "2MiB"]}, zip=[{"topology": ["a", "b"]}])
>>> [p for p in expand(spec)]
[{'jobs[0].size': '1MiB', 'topology': 'a'}, {'jobs[0].size': '1MiB', 'topology': 'b'}, {'jobs[0].size': '2MiB', 'topology': 'a'}, {'jobs[0].size': '2MiB', 'topology': 'b'}]
>>> apply_point({"jobs": [{"size": 1}, {"size": 2}]}, {"jobs[*].size": 9})
{'jobs': [{'size': 9}, {'size': 9}]}
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import Any

from pydantic import Field, field_validator

from ...errors import InputError
from ..._inputs.schema import Strict

__all__ = ["SweepSpec", "expand", "apply_point", "point_seed", "point_key", "parse_path",
           "check_paths", "file_digests", "MAX_POINTS"]

#: A sweep with more points than this is refused before anything runs (a typo such as a
#: range written as a long list would otherwise fill the disk with point files).
MAX_POINTS = 1_000_000

_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)((?:\[(?:\d+|\*)\])*)$")


class SweepSpec(Strict):
    """The ``sweep:`` mapping: ``grid`` (every combination) and ``zip`` groups."""

    grid: dict[str, list[Any]] = Field(default_factory=dict)
    zip: list[dict[str, list[Any]]] = Field(default_factory=list)

    @field_validator("zip", mode="before")
    @classmethod
    def _one_group(cls, value):
        return [value] if isinstance(value, dict) else value   # one group may skip the list

    @field_validator("grid")
    @classmethod
    def _non_empty(cls, grid):
        for key, values in grid.items():
            if not values:
                raise ValueError(f"{key}: an empty list gives no points")
        return grid

    @field_validator("zip")
    @classmethod
    def _same_lengths(cls, groups):
        for group in groups:
            lengths = {key: len(values) for key, values in group.items()}
            if len(set(lengths.values())) > 1:
                shown = ", ".join(f"{k} has {n}" for k, n in lengths.items())
                raise ValueError(f"lists of one zip group must have the same length ({shown})")
            if 0 in lengths.values():
                raise ValueError("an empty zip list gives no points")
        return groups

    def keys(self) -> list[str]:
        return [*self.grid, *(key for group in self.zip for key in group)]

    def size(self) -> int:
        n = 1
        for values in self.grid.values():
            n *= len(values)
        for group in self.zip:
            n *= len(next(iter(group.values()))) if group else 1
        return n


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """Every point of ``spec`` as ``{path: value}``, in a fixed order (see the module)."""
    keys = spec.keys()
    if len(set(keys)) != len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise InputError(f"sweep: {twice[0]!r} is swept twice")
    if spec.size() > MAX_POINTS:
        raise InputError(f"sweep: {spec.size()} points (more than the limit of {MAX_POINTS})")
    axes = [[{key: value} for value in values] for key, values in spec.grid.items()]
    axes += [[dict(zip(group, values)) for values in zip(*group.values())]
             for group in spec.zip if group]
    return [{k: v for part in combo for k, v in part.items()}
            for combo in itertools.product(*axes)]


def parse_path(path: str) -> list[str | int]:
    """``'jobs[0].size'`` -> ``['jobs', 0, 'size']`` (``'*'`` for every item)."""
    parts: list[str | int] = []
    for segment in path.split("."):
        match = _SEGMENT.match(segment)
        if not match:
            raise InputError(f"sweep: {path!r} is not a field path (e.g. 'topology', "
                             f"'jobs[0].size', 'jobs[*].algorithm')")
        parts.append(match.group(1))
        parts += [int(i) if i != "*" else "*" for i in re.findall(r"\[(\d+|\*)\]",
                                                                     match.group(2))]
    return parts


def _set(node: Any, parts: list, value: Any, path: str) -> None:
    head, rest = parts[0], parts[1:]
    if head == "*" or isinstance(head, int):
        if not isinstance(node, list):
            raise InputError(f"sweep: {path!r}: not a list at [{head}]")
        if head != "*" and not 0 <= head < len(node):
            raise InputError(f"sweep: {path!r}: index {head} out of range (the list has "
                             f"{len(node)} items)")
        items = range(len(node)) if head == "*" else [head]
    else:
        if not isinstance(node, dict):
            raise InputError(f"sweep: {path!r}: not a mapping at {head!r}")
        items = [head]
    for item in items:
        if rest:
            if isinstance(node, dict) and item not in node:
                raise InputError(f"sweep: {path!r}: the scenario has no {item!r}")
            _set(node[item], rest, value, path)
        else:
            node[item] = copy.deepcopy(value)


def apply_point(doc: dict, point: dict[str, Any]) -> dict:
    """A copy of the scenario document ``doc`` with the point's values set."""
    doc = copy.deepcopy(doc)
    for path, value in point.items():
        _set(doc, parse_path(path), value, path)
    return doc


def check_paths(doc: dict, spec: SweepSpec, header_fields, job_fields) -> None:
    """Refuse, before running, a path that does not lead to a field the scenario knows:
    ``header_fields`` (names) and ``job_fields(kind)`` (the names a job kind takes)."""
    for path in spec.keys():
        parts = parse_path(path)
        if len(parts) == 1:
            if parts[0] not in header_fields or parts[0] in ("jobs", "sweep"):
                raise InputError(f"sweep: {path!r} is not a scenario field; "
                                 f"sweepable: {', '.join(sorted(set(header_fields) - {'jobs', 'sweep'}))}"
                                 f", or a job's field such as 'jobs[0].size'")
            continue
        if parts[0] != "jobs" or len(parts) != 3 or not isinstance(parts[2], str):
            raise InputError(f"sweep: {path!r}: expected a header field or "
                             f"'jobs[N].FIELD' / 'jobs[*].FIELD'")
        jobs = doc.get("jobs") or []
        picked = range(len(jobs)) if parts[1] == "*" else [parts[1]]
        for n in picked:
            if not 0 <= n < len(jobs):
                raise InputError(f"sweep: {path!r}: the scenario has {len(jobs)} jobs")
            job = jobs[n] if isinstance(jobs[n], dict) else {}
            fields = job_fields(job.get("kind", "traffic"))
            if fields is not None and parts[2] not in fields and parts[2] != "faults":
                raise InputError(f"sweep: {path!r}: jobs[{n}] (kind "
                                 f"{job.get('kind', 'traffic')!r}) has no field "
                                 f"{parts[2]!r}; it has: {', '.join(fields)}")


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def point_seed(base_seed: int, point: dict[str, Any]) -> int:
    """The point's ``seed`` if it sets one, else a 31-bit seed from the scenario's seed
    and the point's values (independent of the point's position in the grid).

    >>> point_seed(0, {"seed": 7}), point_seed(0, {"x": 1}) == point_seed(0, {"x": 1})
    (7, True)
    """
    if "seed" in point:
        return point["seed"]
    digest = hashlib.sha256(f"{base_seed}|{_canonical(point)}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def point_key(version: str, base: dict, point: dict[str, Any],
              reads: dict[str, str] | None = None) -> str:
    """The name a point's result is stored under: a hash of the netsim version, the
    scenario without its sweep, the point, and ``reads`` ({path: content digest} of the
    files the point reads, :func:`file_digests`), so an edited scenario, or an edited
    topology, schedule or flow file, computes afresh. Without files the key is what it
    was before files counted (results stored then are still found).

    >>> point_key("1", {}, {"x": 1}) == point_key("1", {}, {"x": 1}, {})
    True
    >>> point_key("1", {}, {"x": 1}) == point_key("1", {}, {"x": 1}, {"t.yaml": "ab"})
    False
    """
    fields = {"netsim": version, "scenario": base, "point": point}
    if reads:
        fields["reads"] = reads
    return hashlib.sha256(_canonical(fields).encode()).hexdigest()[:24]


#: Files larger than this are keyed by size and modification time, not read through.
DIGEST_MAX_BYTES = 256 << 20


def file_digests(doc: Any, folder: Path, *, cache: dict | None = None) -> dict[str, str]:
    """{path: sha256 of its content} of every file a scenario document names: each string
    value that is the path of a regular file (relative to ``folder``, where the scenario
    is, as scenario paths are). A YAML or JSON file named so is read too, for the files it
    names in turn (a topology file's ``generator:``), relative to its own folder, and
    listed as ``'FILE > NAME'``. Preset names (``galaxy-wh``) are not files and count
    through the netsim version. ``cache`` (a dict kept by the caller) spares reading a file
    again for each point of a sweep.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (Path(d) / "t.yaml").write_text("ring: 4")
    ...     digests = file_digests({"jobs": [{"topology": "t.yaml", "op": "ring"}]}, Path(d))
    >>> list(digests), len(digests["t.yaml"])
    (['t.yaml'], 64)
    """
    found: dict[str, str] = {}
    _walk(doc, folder, "", found, set(), {} if cache is None else cache)
    return found


def _walk(doc: Any, folder: Path, via: str, found: dict, done: set, cache: dict) -> None:
    for text in _strings(doc):
        if len(text) > 4096 or "\n" in text or "\0" in text:
            continue
        key = (str(folder), text)
        if key not in cache:
            cache[key] = _file_of(folder / text)
        real = cache[key]
        if real is None or real in done:
            continue
        done.add(real)
        if ("digest", real) not in cache:
            cache[("digest", real)] = _digest(real)
        found[f"{via}{text}"] = cache[("digest", real)]
        if real.suffix.lower() in (".yaml", ".yml", ".json") and \
                real.stat().st_size <= DIGEST_MAX_BYTES:
            if ("doc", real) not in cache:
                try:
                    import yaml

                    cache[("doc", real)] = yaml.safe_load(real.read_text())
                except Exception:      # noqa: BLE001 (not a document: its bytes count)
                    cache[("doc", real)] = None
            _walk(cache[("doc", real)], real.parent, f"{via}{text} > ", found, done, cache)


def _file_of(path: Path) -> Path | None:
    try:
        return path.resolve() if path.is_file() else None
    except (OSError, ValueError):
        return None


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def _digest(path: Path) -> str:
    stat = path.stat()
    if stat.st_size > DIGEST_MAX_BYTES:
        return f"size={stat.st_size},mtime_ns={stat.st_mtime_ns}"
    sha = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()
