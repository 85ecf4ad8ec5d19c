"""The Schedule IR: the contract between a collective algorithm and a machine.

A schedule is a DAG of operations over logical ranks ``0..num_ranks-1``:

* ``send(src, dst, nbytes)``: move ``nbytes`` bytes from rank ``src`` to rank ``dst``;
* ``compute(rank, seconds)``: local work (a reduction, a matmul) taking ``seconds``;
* ``barrier()``: a no-op that completes when its dependencies do (joins phases cheaply).

Each op lists the ops it depends on. Ops are stored column-wise in numpy arrays, so a
schedule of a million sends costs a few arrays, not a million objects. Build one with
:class:`ScheduleBuilder`; compose with :func:`concurrent`, :func:`sequential` and
:meth:`Schedule.relabel`.

An op may carry a ``tag`` (a phase or group name, used for per-phase timings) and an
explicit path (link ids) that overrides routing. Algorithms may attach ``data``: what
chunks the send carries, used to check symbolically that a schedule delivers what the
collective promises.

>>> b = ScheduleBuilder(2)
>>> s = b.send(0, 1, 1e6)
>>> _ = b.compute(1, 1e-6, deps=[s])
>>> b.build().num_ops
2
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import ScheduleError, refuse_unknown_keys

__all__ = ["SEND", "COMPUTE", "BARRIER", "MAX_SENDS", "Schedule", "ScheduleBuilder",
           "concurrent", "sequential", "sends_from_arrays", "schedule_from_dict",
           "load_schedule", "save_schedule", "read_json"]

SEND, COMPUTE, BARRIER = 0, 1, 2
#: The most sends netsim builds from a count given by a user (a pattern on n ranks, a
#: collective in c chunks), whatever the memory budget: a cap on typos (a billion chunks)
#: for runs that ``--max-memory`` would let through. The gate is the memory estimate
#: (:func:`netsim.budget.require_sends`: ~450 B per send measured, so 2^31 sends need
#: ~1 TB); a 4,096-rank ring has 33.5M.
MAX_SENDS = 2**31 - 1
_KIND_NAMES = {SEND: "send", COMPUTE: "compute", BARRIER: "barrier"}
_KIND_CODES = {v: k for k, v in _KIND_NAMES.items()}


@dataclass(frozen=True, eq=False)
class Schedule:
    """An immutable DAG of ops; see the module docstring.

    Arrays (one entry per op): ``kind`` (SEND/COMPUTE/BARRIER), ``src`` (rank; the rank of a
    compute; -1 for a barrier), ``dst`` (rank; -1 unless a send), ``nbytes`` (bytes, sends),
    ``seconds`` (s, computes), ``tag`` (index into ``tags``, -1 for none). Dependencies are
    CSR: op i waits for ``dep_idx[dep_ptr[i]:dep_ptr[i+1]]``.

    ``extra_nodes`` places ranks the algorithm adds beyond the job's own (switches that
    reduce in-network): the last ``len(extra_nodes)`` ranks sit on those topology nodes,
    in order, and runners append them to the job's placement.
    """

    num_ranks: int
    kind: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    seconds: np.ndarray
    dep_ptr: np.ndarray
    dep_idx: np.ndarray
    tag: np.ndarray
    tags: tuple[str, ...] = ()
    paths: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    data: Mapping[int, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    extra_nodes: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "extra_nodes", tuple(int(n) for n in self.extra_nodes))

    @property
    def num_ops(self) -> int:
        return len(self.kind)

    @property
    def num_sends(self) -> int:
        return int(np.count_nonzero(self.kind == SEND))

    @property
    def total_bytes(self) -> float:
        """Bytes moved by all sends together."""
        return float(self.nbytes[self.kind == SEND].sum())

    def deps(self, op: int) -> np.ndarray:
        return self.dep_idx[self.dep_ptr[op]:self.dep_ptr[op + 1]]

    def tag_of(self, op: int) -> str | None:
        t = int(self.tag[op])
        return self.tags[t] if t >= 0 else None

    def relabel(self, mapping: Sequence[int] | np.ndarray, num_ranks: int | None = None
                ) -> "Schedule":
        """Rename ranks: rank r becomes ``mapping[r]`` (e.g. a sub-group into a bigger job)."""
        mapping = np.asarray(mapping, dtype=np.int64)
        if mapping.shape != (self.num_ranks,):
            raise ScheduleError(f"relabel: mapping has {mapping.size} entries for "
                                f"{self.num_ranks} ranks")
        n = int(num_ranks if num_ranks is not None else mapping.max() + 1)
        src = np.where(self.src >= 0, mapping[np.maximum(self.src, 0)], -1)
        dst = np.where(self.dst >= 0, mapping[np.maximum(self.dst, 0)], -1)
        return replace(self, num_ranks=n, src=src, dst=dst)

    def scaled(self, factor: float) -> "Schedule":
        """The same schedule with every send's bytes multiplied by ``factor``."""
        return replace(self, nbytes=self.nbytes * float(factor))

    def with_tag(self, tag: str) -> "Schedule":
        """Every op tagged ``tag`` (e.g. the phase a collective belongs to)."""
        return replace(self, tag=np.zeros(self.num_ops, dtype=np.int64), tags=(tag,))

    def to_dict(self, message_size: float | None = None) -> dict:
        """The JSON form. With ``message_size``, bytes are written as fractions of it."""
        ops = []
        for i in range(self.num_ops):
            kind = _KIND_NAMES[int(self.kind[i])]
            op: dict[str, Any] = {"id": i, "op": kind}
            if kind == "send":
                op.update(src=int(self.src[i]), dst=int(self.dst[i]))
                if message_size:
                    op["fraction"] = float(self.nbytes[i]) / message_size
                else:
                    op["bytes"] = float(self.nbytes[i])
            elif kind == "compute":
                op.update(rank=int(self.src[i]), seconds=float(self.seconds[i]))
            deps = self.deps(i)
            if deps.size:
                op["deps"] = deps.tolist()
            if self.tag[i] >= 0:
                op["tag"] = self.tags[int(self.tag[i])]
            ops.append(op)
        out = {"format": "netsim-schedule", "version": 1, "ranks": self.num_ranks,
               "relative": bool(message_size), "ops": ops}
        if self.extra_nodes:
            out["extra_nodes"] = list(self.extra_nodes)
        meta = {k: v for k, v in self.meta.items() if _jsonable(v)}
        if meta:
            out["meta"] = meta
        return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except TypeError:
        return False


class ScheduleBuilder:
    """Appends ops one at a time; :meth:`build` checks them and freezes the arrays.

    Dependencies may only name ops already added, which keeps every built schedule acyclic.
    """

    def __init__(self, num_ranks: int, meta: dict[str, Any] | None = None, *,
                 extra_nodes: Sequence[int] = ()) -> None:
        if int(num_ranks) < 1:
            raise ScheduleError(f"a schedule needs at least one rank, got {num_ranks}")
        self.num_ranks = int(num_ranks)
        self.meta = dict(meta or {})
        self.extra_nodes = tuple(int(n) for n in extra_nodes)
        self._kind: list[int] = []
        self._src: list[int] = []
        self._dst: list[int] = []
        self._bytes: list[float] = []
        self._seconds: list[float] = []
        self._tag: list[int] = []
        self._deps: list[Sequence[int]] = []
        self._tags: dict[str, int] = {}
        self._paths: dict[int, tuple[int, ...]] = {}
        self._data: dict[int, Any] = {}

    def __len__(self) -> int:
        return len(self._kind)

    def _rank(self, rank: int, what: str) -> int:
        rank = int(rank)
        if not 0 <= rank < self.num_ranks:
            raise ScheduleError(f"op {len(self._kind)}: {what} rank {rank} is not in "
                                f"0..{self.num_ranks - 1}")
        return rank

    def _add(self, kind: int, src: int, dst: int, nbytes: float, seconds: float,
             deps: Iterable[int], tag: str | None) -> int:
        op = len(self._kind)
        deps = [int(d) for d in deps]
        for d in deps:
            if not 0 <= d < op:
                raise ScheduleError(f"op {op}: dependency {d} is not an earlier op")
        self._kind.append(kind)
        self._src.append(src)
        self._dst.append(dst)
        self._bytes.append(nbytes)
        self._seconds.append(seconds)
        self._deps.append(deps)
        self._tag.append(-1 if tag is None else self._tags.setdefault(tag, len(self._tags)))
        return op

    def send(self, src: int, dst: int, nbytes: float, deps: Iterable[int] = (), *,
             tag: str | None = None, path: Sequence[int] | None = None, data: Any = None) -> int:
        """Add a send of ``nbytes`` bytes from rank ``src`` to rank ``dst``; returns its op id."""
        nbytes = float(nbytes)
        if not np.isfinite(nbytes) or nbytes < 0:
            raise ScheduleError(f"op {len(self._kind)}: send bytes must be a finite number >= 0, "
                                f"got {nbytes!r}")
        op = self._add(SEND, self._rank(src, "source"), self._rank(dst, "destination"), nbytes,
                       0.0, deps, tag)
        if path is not None:
            self._paths[op] = tuple(int(x) for x in path)
        if data is not None:
            self._data[op] = data
        return op

    def compute(self, rank: int, seconds: float, deps: Iterable[int] = (), *,
                tag: str | None = None) -> int:
        """Add ``seconds`` of local work on ``rank``; returns its op id."""
        seconds = float(seconds)
        if not np.isfinite(seconds) or seconds < 0:
            raise ScheduleError(f"op {len(self._kind)}: compute seconds must be a finite number "
                                f">= 0, got {seconds!r}")
        return self._add(COMPUTE, self._rank(rank, "compute"), -1, 0.0, seconds, deps, tag)

    def barrier(self, deps: Iterable[int] = (), *, tag: str | None = None) -> int:
        """A no-op that completes as soon as all of ``deps`` have."""
        return self._add(BARRIER, -1, -1, 0.0, 0.0, deps, tag)

    def build(self) -> Schedule:
        counts = np.fromiter((len(d) for d in self._deps), dtype=np.int64, count=len(self._deps))
        dep_ptr = np.zeros(len(self._deps) + 1, dtype=np.int64)
        np.cumsum(counts, out=dep_ptr[1:])
        dep_idx = np.fromiter((d for deps in self._deps for d in deps), dtype=np.int64,
                              count=int(dep_ptr[-1]))
        return Schedule(
            num_ranks=self.num_ranks, kind=np.asarray(self._kind, dtype=np.int8),
            src=np.asarray(self._src, dtype=np.int64), dst=np.asarray(self._dst, dtype=np.int64),
            nbytes=np.asarray(self._bytes, dtype=np.float64),
            seconds=np.asarray(self._seconds, dtype=np.float64), dep_ptr=dep_ptr, dep_idx=dep_idx,
            tag=np.asarray(self._tag, dtype=np.int64), tags=tuple(self._tags),
            paths=dict(self._paths), data=dict(self._data), meta=dict(self.meta),
            extra_nodes=self.extra_nodes)


def sends_from_arrays(num_ranks: int, src, dst, nbytes, *, tag: str | None = None,
                      meta: dict[str, Any] | None = None) -> Schedule:
    """Independent sends given as arrays (no dependencies), built without a Python loop."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    nbytes = np.broadcast_to(np.asarray(nbytes, dtype=np.float64), src.shape).copy()
    n = src.size
    if dst.shape != src.shape:
        raise ScheduleError(f"sends: {src.size} sources but {dst.size} destinations")
    for name, ranks in (("source", src), ("destination", dst)):
        bad = (ranks < 0) | (ranks >= num_ranks)
        if bad.any():
            raise ScheduleError(f"op {int(np.flatnonzero(bad)[0])}: {name} rank "
                                f"{int(ranks[bad][0])} is not in 0..{num_ranks - 1}")
    bad = ~np.isfinite(nbytes) | (nbytes < 0)
    if bad.any():
        raise ScheduleError(f"op {int(np.flatnonzero(bad)[0])}: send bytes must be a finite "
                            f"number >= 0, got {nbytes[bad][0]!r}")
    return Schedule(num_ranks=int(num_ranks), kind=np.zeros(n, dtype=np.int8), src=src, dst=dst,
                    nbytes=nbytes, seconds=np.zeros(n), dep_ptr=np.zeros(n + 1, dtype=np.int64),
                    dep_idx=np.zeros(0, dtype=np.int64),
                    tag=np.full(n, 0 if tag else -1, dtype=np.int64),
                    tags=(tag,) if tag else (), meta=dict(meta or {}))


def roots_wait_for(counts: np.ndarray, deps: np.ndarray, op: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Dependencies in CSR form (per-op ``counts``, flat ``deps``) with every op that has
    none made to wait for ``op``: a part appended after a barrier. Array code, no per-op loop.

    >>> c, d = roots_wait_for(np.array([0, 1, 0]), np.array([5]), 9)
    >>> c.tolist(), d.tolist()
    ([1, 1, 1], [9, 5, 9])
    """
    empty = counts == 0
    if not empty.any():
        return counts, deps
    counts = np.where(empty, 1, counts)
    starts = np.cumsum(counts) - counts
    joined = np.empty(int(counts.sum()), dtype=np.int64)
    joined[starts[empty]] = op
    kept = np.ones(joined.size, dtype=bool)
    kept[starts[empty]] = False
    joined[kept] = deps
    return counts, joined


def _merge(schedules: Sequence[Schedule], barrier_between: bool) -> Schedule:
    """Stack schedules; with ``barrier_between`` each starts after the previous one ends."""
    if not schedules:
        raise ScheduleError("nothing to compose: no schedules given")
    num_ranks = max(s.num_ranks for s in schedules)
    parts: dict[str, list] = {k: [] for k in ("kind", "src", "dst", "nbytes", "seconds", "tag",
                                              "counts", "deps")}
    tags: dict[str, int] = {}
    paths: dict[int, tuple[int, ...]] = {}
    data: dict[int, Any] = {}
    offset = 0
    previous_end: int | None = None
    for s in schedules:
        tag_map = np.array([tags.setdefault(t, len(tags)) for t in s.tags] + [-1], dtype=np.int64)
        counts, deps = np.diff(s.dep_ptr), s.dep_idx + offset     # as CSR, no per-op loop
        if previous_end is not None:
            # an op with no dependencies waits for the previous part's barrier
            counts, deps = roots_wait_for(counts, deps, previous_end)
        for key in ("kind", "src", "dst", "nbytes", "seconds"):
            parts[key].append(getattr(s, key))
        parts["tag"].append(tag_map[s.tag])
        parts["counts"].append(counts)
        parts["deps"].append(deps)
        paths.update({op + offset: p for op, p in s.paths.items()})
        data.update({op + offset: d for op, d in s.data.items()})
        offset += s.num_ops
        if barrier_between:
            # A barrier after every part: cheaper than linking each sink to each next source.
            sinks = _sinks(s) + (offset - s.num_ops)
            parts["kind"].append(np.array([BARRIER], dtype=np.int8))
            for key in ("src", "dst"):
                parts[key].append(np.array([-1]))
            for key in ("nbytes", "seconds"):
                parts[key].append(np.array([0.0]))
            parts["tag"].append(np.array([-1]))
            parts["counts"].append(np.array([sinks.size]))
            parts["deps"].append(sinks)
            previous_end = offset
            offset += 1
    # concatenations are new arrays: astype copies only a part of another dtype
    counts = np.concatenate(parts["counts"]).astype(np.int64, copy=False)
    dep_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64, copy=False)
    dep_idx = (np.concatenate(parts["deps"]).astype(np.int64, copy=False) if dep_ptr[-1]
               else np.zeros(0, dtype=np.int64))
    return Schedule(
        num_ranks=num_ranks, kind=np.concatenate(parts["kind"]).astype(np.int8, copy=False),
        src=np.concatenate(parts["src"]).astype(np.int64, copy=False),
        dst=np.concatenate(parts["dst"]).astype(np.int64, copy=False),
        nbytes=np.concatenate(parts["nbytes"]).astype(np.float64, copy=False),
        seconds=np.concatenate(parts["seconds"]).astype(np.float64, copy=False),
        dep_ptr=dep_ptr, dep_idx=dep_idx,
        tag=np.concatenate(parts["tag"]).astype(np.int64, copy=False),
        tags=tuple(tags), paths=paths, data=data, meta=dict(schedules[0].meta),
        extra_nodes=tuple(n for s in schedules for n in s.extra_nodes))


def _sinks(s: Schedule) -> np.ndarray:
    """Ops no other op depends on."""
    has_dependant = np.zeros(s.num_ops, dtype=bool)
    has_dependant[s.dep_idx] = True
    return np.flatnonzero(~has_dependant)


def concurrent(*schedules: Schedule) -> Schedule:
    """Run schedules at the same time (their ops share the network)."""
    return _merge(schedules, barrier_between=False)


def sequential(*schedules: Schedule) -> Schedule:
    """Run schedules one after another: each starts when the previous one has finished."""
    return _merge(schedules, barrier_between=True)


def _field(op: Mapping, key: str, where: str, kinds=(int, float)):
    if key not in op:
        raise ScheduleError(f"{where}: missing field {key!r}")
    value = op[key]
    if isinstance(value, bool) or not isinstance(value, kinds):
        what = "an integer" if kinds == (int,) else "a number"
        raise ScheduleError(f"{where}.{key}: expected {what}, got {value!r}")
    return value


_DOC_KEYS = ("format", "version", "ranks", "relative", "ops", "meta", "extra_nodes")
_OP_KEYS = {"send": ("id", "op", "src", "dst", "bytes", "fraction", "deps", "tag"),
            "compute": ("id", "op", "rank", "seconds", "deps", "tag"),
            "barrier": ("id", "op", "deps", "tag")}


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def read_json(path: str | Path, error: type[Exception] = ScheduleError) -> Any:
    """Parse a JSON file with the package's one JSON reader (:mod:`netsim._inputs.jsonio`):
    an unreadable file, bad JSON and a key given twice in one object are one-line errors
    naming the file."""
    from .._inputs.jsonio import read_json as _read

    return _read(path, "JSON file", error)


def schedule_from_dict(doc: Mapping, message_size: float | None = None,
                       source: str = "schedule") -> Schedule:
    """Build a schedule from its JSON form; relative files need ``message_size`` (bytes)."""
    from .._inputs.schema import validate as _validate
    from ..units import MAX_SIZE
    from .filemodels import OP_MODELS

    if not isinstance(doc, Mapping) or "ops" not in doc or "ranks" not in doc:
        raise ScheduleError(f"{source}: expected an object with 'ranks' and 'ops'")
    refuse_unknown_keys(doc, _DOC_KEYS, source, ScheduleError)
    relative = doc.get("relative", False)
    if not isinstance(relative, bool):
        raise ScheduleError(f"{source}: relative: expected true or false, got {relative!r}")
    if relative and message_size is None:
        raise ScheduleError(f"{source}: sizes are fractions of the message: give a message size")
    if not isinstance(doc.get("meta", {}), Mapping):
        raise ScheduleError(f"{source}: meta: expected an object, got {doc['meta']!r}")
    if not isinstance(doc["ops"], list):
        raise ScheduleError(f"{source}: ops: expected a list of ops, got {doc['ops']!r}")
    try:
        builder = ScheduleBuilder(_field(doc, "ranks", source, (int,)), meta=doc.get("meta"))
    except ScheduleError as err:
        raise ScheduleError(f"{source}: ranks: {err}") from None
    ids: dict[Any, int] = {}
    for n, op in enumerate(doc["ops"]):
        where = f"{source}: ops[{n}]"
        if not isinstance(op, Mapping):
            raise ScheduleError(f"{where}: expected an object, got {op!r}")
        kind = op.get("op", "send")
        if not isinstance(kind, str) or kind not in _OP_KEYS:
            raise ScheduleError(f"{where}.op: unknown op {kind!r} (send, compute, barrier)")
        refuse_unknown_keys(op, _OP_KEYS[kind], where, ScheduleError)
        model = _validate(OP_MODELS[kind], op, source, prefix=f"ops.{n}")
        op_id = op.get("id", n)
        if not _is_id(op_id) or op_id in ids:
            what = "is given to two ops" if _is_id(op_id) else "must be a string or an integer"
            raise ScheduleError(f"{where}.id: {op_id!r} {what}")
        deps = []
        for d in model.deps:
            if d not in ids:
                raise ScheduleError(f"{where}.deps: {d!r} is not the id of an earlier op")
            deps.append(ids[d])
        try:
            if kind == "send":
                if model.fraction is not None:
                    nbytes = model.fraction * (message_size or 0.0)
                    if nbytes > MAX_SIZE:
                        raise ScheduleError(f"{where}.fraction: {op['fraction']!r} of the "
                                            f"message is {nbytes:.3g} bytes, more than the "
                                            f"limit of 1 EiB")
                else:
                    nbytes = model.bytes
                new = builder.send(model.src, model.dst, nbytes, deps, tag=model.tag)
            elif kind == "compute":
                new = builder.compute(model.rank, model.seconds, deps, tag=model.tag)
            else:
                new = builder.barrier(deps, tag=model.tag)
        except ScheduleError as err:
            msg = str(err).removeprefix(f"op {len(builder)}: ")
            raise ScheduleError(msg if msg.startswith(source) else f"{where}: {msg}") from None
        ids[op_id] = new
    schedule = builder.build()
    extra = doc.get("extra_nodes", [])
    if not isinstance(extra, list) or not all(_is_id(n) and isinstance(n, int) and n >= 0
                                              for n in extra):
        raise ScheduleError(f"{source}: extra_nodes: expected a list of node indices, "
                            f"got {extra!r}")
    if len(extra) >= schedule.num_ranks:
        raise ScheduleError(f"{source}: extra_nodes: {len(extra)} extra ranks but only "
                            f"{schedule.num_ranks} ranks")
    return replace(schedule, extra_nodes=tuple(extra)) if extra else schedule


def load_schedule(path: str | Path, message_size: float | None = None) -> Schedule:
    """Read a schedule JSON file (see :meth:`Schedule.to_dict` for the format)."""
    return schedule_from_dict(read_json(path), message_size, source=str(path))


def save_schedule(schedule: Schedule, path: str | Path, message_size: float | None = None) -> None:
    """Write ``schedule`` as JSON (fractions of ``message_size`` when it is given)."""
    Path(path).write_text(json.dumps(schedule.to_dict(message_size), indent=1))
