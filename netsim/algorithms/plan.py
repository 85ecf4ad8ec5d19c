"""A schedule under construction, built in vectorised blocks of ops (:class:`Plan`).

Algorithms add whole steps at once: ``plan.sends(src, dst, pieces=..., deps=...)`` takes
arrays, one entry per send, so a ring all-reduce on 1024 ranks (2 million sends) is a few
thousand numpy calls, not two million Python calls. Dependencies are given as int arrays
of shape (m,) or (m, d), -1 meaning "none"; every dependency must be an op of an earlier
block, which keeps the schedule acyclic.

Data is described by piece ids (:mod:`.pieces`). Send bytes default to the number of
pieces carried times the piece size. When annotating, the plan also tracks, per rank, the
contributors it holds in every piece, and attaches ``data=((piece, contributors), ...)``
to every send: the receiver combines what it gets with what it holds (a union of
contributor sets; :mod:`.verify` then checks independently that nothing was counted twice
and that every claim is backed by DAG ancestors).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

import numpy as np

from ..schedule import BARRIER, COMPUTE, SEND, Schedule
from .options import AlgoOptions
from .pieces import initial_holdings, piece_bytes

__all__ = ["Plan", "Deps", "no_deps", "join", "set_rows", "settle", "blocks", "one_phase"]

#: Dependencies: None, an op id array of shape (m,) or (m, d) (-1 = none), or a list of those.
Deps = Union[None, np.ndarray, Sequence]
Pieces = Union[np.ndarray, Sequence[Sequence[int]], Callable[[], Any]]

#: Plan.reduce with repeated ranks: up to this many ops the rounds are found in Python.
_FEW = 64

#: Annotate schedules up to this many ranks unless ``options.extra["annotate"]`` says otherwise.
ANNOTATE_UP_TO = 64


def no_deps(rows: int) -> np.ndarray:
    """An (rows, 0) dependency array: nothing to wait for."""
    return np.zeros((rows, 0), dtype=np.int64)


def join(*deps: Deps, rows: int | None = None) -> np.ndarray:
    """Stack dependency arrays column-wise into one (m, d) array (-1 = none)."""
    parts = []
    for d in deps:
        if d is None or (isinstance(d, (list, tuple)) and len(d) == 0):
            continue
        if isinstance(d, (list, tuple)) and not _is_int_seq(d):
            parts.append(join(*d, rows=rows))
            continue
        a = np.asarray(d, dtype=np.int64)
        if a.ndim == 0:
            a = np.full((rows if rows is not None else 1, 1), int(a), dtype=np.int64)
        elif a.ndim == 1:
            a = a[:, None]
        parts.append(a)
    if not parts:
        return no_deps(rows or 0)
    m = max(p.shape[0] for p in parts)
    parts = [p if p.shape[0] == m else np.broadcast_to(p, (m, p.shape[1])) for p in parts]
    return parts[0] if len(parts) == 1 else np.hstack(parts)


def set_rows(deps: np.ndarray, ranks: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """A copy of the per-rank ``deps`` with the rows of ``ranks`` replaced by ``rows``."""
    out = np.full((deps.shape[0], max(deps.shape[1], rows.shape[1])), -1, dtype=np.int64)
    out[:, :deps.shape[1]] = deps
    out[ranks] = -1
    out[ranks, :rows.shape[1]] = rows
    return out


def _column(values, m: int, dtype) -> np.ndarray:
    """``values`` as an array of m entries (a scalar is repeated)."""
    a = np.asarray(values, dtype=dtype)
    if a.shape == (m,):
        return a
    return np.full(m, a, dtype=dtype) if a.ndim == 0 else np.broadcast_to(a, (m,))


def _value(values, m: int, dtype):
    """``values`` as one number when it is one (a block column written out by
    :meth:`Plan.build`), else as :func:`_column` makes it."""
    if isinstance(values, (int, float)):
        return dtype(values)
    return _column(values, m, dtype)


def _is_int_seq(seq) -> bool:
    return len(seq) > 0 and all(isinstance(x, (int, np.integer)) for x in seq)


def _dedupe_rows(deps: np.ndarray) -> np.ndarray:
    """Repeated ids in a row replaced by -1, so every dependency is listed once."""
    if deps.shape[1] < 2:
        return deps
    if deps.shape[1] == 2:                   # the common case, without a sort
        deps[deps[:, 1] == deps[:, 0], 1] = -1
        return deps
    deps = np.sort(deps, axis=1)
    repeat = np.zeros(deps.shape, dtype=bool)
    repeat[:, 1:] = deps[:, 1:] == deps[:, :-1]
    deps[repeat] = -1
    return deps


def chain_by_key(keys: np.ndarray, ids: np.ndarray, last: np.ndarray) -> np.ndarray:
    """For ops ``ids`` (listed in order) each on ``keys[i]`` (a rank, a channel): the op
    before each on the same key, from this list or else ``last[key]`` (-1: none); ``last``
    is moved on to each key's last op. One op at a time per key, in the order given."""
    before = last[keys].copy()
    order = np.argsort(keys, kind="stable")             # by key, then by position
    by_key = keys[order]
    same = by_key[1:] == by_key[:-1]                    # same key as the one before
    before[order[1:][same]] = ids[order[:-1][same]]
    end = np.append(~same, True)                        # each key's last op
    last[by_key[end]] = ids[order[end]]
    return before


class Plan:
    """Ops of one collective schedule, added in blocks; see the module docstring.

    ``op`` and ``pieces`` (K) fix the data layout; ``extra_ranks`` are ranks after the
    ``num_ranks`` real ones (switch ranks of in-network reduction), without input.
    """

    def __init__(self, op: str, num_ranks: int, size: float, pieces: int,
                 options: AlgoOptions, *, extra_ranks: int = 0) -> None:
        self.op, self.n, self.size, self.pieces = op, num_ranks, float(size), int(pieces)
        self.total_ranks = num_ranks + extra_ranks
        self.piece_bytes = piece_bytes(op, size, num_ranks, self.pieces)
        self.gamma = options.gamma
        self.annotate = bool(options.extra.get("annotate", num_ranks <= ANNOTATE_UP_TO))
        self.meta: dict[str, Any] = {"pieces": self.pieces}
        if op in ("broadcast", "reduce"):
            self.meta["root"] = int(options.root)
        self._blocks: list[tuple] = []
        self._single: list[tuple] = []      # ops added one at a time, not yet a block
        self._count = 0
        self._tags: dict[str, int] = {}
        self._data: dict[int, Any] = {}
        self._last_reduce = np.full(self.total_ranks, -1, dtype=np.int64)
        self._held: list[dict[int, int]] | None = None
        if self.annotate:
            self._held = initial_holdings(op, num_ranks, self.pieces, options.root)
            self._held += [{} for _ in range(extra_ranks)]

    def __len__(self) -> int:
        return self._count

    # -- adding ops ---------------------------------------------------------------------
    def _add(self, kind: int, src, dst, nbytes, seconds, deps: Deps, tag: str | None
             ) -> np.ndarray:
        m = max(np.size(src), np.size(dst), np.size(nbytes), np.size(seconds))
        deps = join(deps, rows=m)
        if deps.shape[0] != m:
            deps = np.broadcast_to(deps, (m, deps.shape[1]))
        deps = _dedupe_rows(np.array(deps, dtype=np.int64))
        return self._add_block(kind, src, dst, nbytes, seconds, deps, tag, m=m)

    def _add_block(self, kind: int, src, dst, nbytes, seconds, deps: np.ndarray,
                   tag: str | None, chained: bool = False, m: int | None = None
                   ) -> np.ndarray:
        """Append m ops with an (m, d) dependency array (-1 = none, no repeats in a row):
        on ops of earlier blocks, or with ``chained`` on any earlier op. Columns that are
        one value for every op are kept as that value (written out by :meth:`build`)."""
        if self._single:
            self._flush()
        if m is None:
            m = max(np.size(src), np.size(dst), np.size(nbytes), np.size(seconds))
        if deps.size:
            late = ((deps >= self._count + np.arange(m, dtype=np.int64)[:, None]).any()
                    if chained else deps.max() >= self._count)
            if late:
                raise ValueError("a dependency names an op that is not in an earlier block")
        valid = deps >= 0
        if valid.all():
            counts, idx = deps.shape[1], deps.ravel()
        else:
            counts, idx = valid.sum(axis=1), deps[valid]
        first = self._count
        t = -1 if tag is None else self._tags.setdefault(tag, len(self._tags))
        self._blocks.append((kind, _column(src, m, np.int64), _value(dst, m, np.int64),
                             _value(nbytes, m, np.float64), _value(seconds, m, np.float64),
                             counts, idx, t))
        self._count += m
        return np.arange(first, first + m, dtype=np.int64)

    def _add1(self, kind: int, src: int, dst: int, nbytes: float, seconds: float, deps,
              tag: str | None) -> int:
        """One op, kept in a Python list until the next block (cheap for tree loops)."""
        op = self._count
        deps = sorted({int(d) for d in deps if d >= 0})
        if deps and deps[-1] >= op:
            raise ValueError("a dependency names an op that is not an earlier op")
        t = -1 if tag is None else self._tags.setdefault(tag, len(self._tags))
        self._single.append((kind, src, dst, nbytes, seconds, deps, t))
        self._count += 1
        return op

    def _flush(self) -> None:
        if not self._single:
            return
        kind, src, dst, nbytes, seconds, deps, tags = zip(*self._single)
        self._blocks.append((np.array(kind, np.int8), np.array(src, np.int64),
                             np.array(dst, np.int64), np.array(nbytes, np.float64),
                             np.array(seconds, np.float64),
                             np.array([len(d) for d in deps], np.int64),
                             np.array([x for d in deps for x in d], np.int64),
                             np.array(tags, np.int64)))
        self._single = []

    def send1(self, src: int, dst: int, pieces, deps=(), tag: str | None = None) -> int:
        """One send of ``pieces`` (a sequence of piece ids) after ``deps`` (op ids, -1 =
        none); the scalar twin of :meth:`sends` for loops over trees."""
        op = self._add1(SEND, src, dst, len(pieces) * self.piece_bytes, 0.0, deps, tag)
        if self.annotate:
            self._track([op], [src], [dst], [pieces])
        return op

    def reduce1(self, rank: int, received: int, nbytes: float, tag: str | None = None) -> int:
        """The scalar twin of :meth:`reduce`."""
        if self.gamma is None:
            return received
        op = self._add1(COMPUTE, rank, -1, 0.0, nbytes / self.gamma,
                        (received, int(self._last_reduce[rank])), tag)
        self._last_reduce[rank] = op
        return op

    def compute1(self, rank: int, seconds: float, deps=(), tag: str | None = None) -> int:
        """One compute op of ``seconds`` s on ``rank`` after ``deps``."""
        return self._add1(COMPUTE, rank, -1, 0.0, seconds, deps, tag)

    def sends(self, src, dst, *, pieces: Pieces | None = None, nbytes=None, deps: Deps = None,
              tag: str | None = None) -> np.ndarray:
        """Sends ``src[i] -> dst[i]`` carrying ``pieces[i]``; returns their op ids.

        ``pieces`` is an (m, q) int array, a list of m piece-id sequences, or a function
        returning either (called only when needed). ``nbytes`` defaults to the number of
        pieces carried times the piece size (bytes).
        """
        if nbytes is None or self.annotate:
            pieces = pieces() if callable(pieces) else pieces
        if nbytes is None:
            nbytes = self._bytes_of(pieces)
        m = max(np.size(src), np.size(dst), np.size(nbytes))
        src_b, dst_b = _column(src, m, np.int64), _column(dst, m, np.int64)
        ids = self._add(SEND, src_b, dst_b, nbytes, 0.0, deps, tag)
        if self.annotate:
            self._track(ids, src_b, dst_b, pieces)
        return ids

    def _bytes_of(self, pieces) -> np.ndarray:
        if isinstance(pieces, np.ndarray) and pieces.ndim == 2:
            return np.full(pieces.shape[0], pieces.shape[1] * self.piece_bytes)
        return np.array([len(p) * self.piece_bytes for p in pieces], dtype=np.float64)

    def _track(self, ids, src, dst, pieces) -> None:
        """Attach what every send carries; then the receivers combine it (all reads first)."""
        held = self._held
        moves = []
        for op, s, d, ps in zip(list(ids), list(src), list(dst), pieces):
            op, s, d = int(op), int(s), int(d)
            carried = tuple((int(p), held[s].get(int(p), 0)) for p in ps)
            self._data[op] = tuple((p, _ranks_of(mask)) for p, mask in carried)
            moves.append((d, carried))
        for d, carried in moves:
            for p, mask in carried:
                held[d][p] = held[d].get(p, 0) | mask

    def computes(self, ranks, seconds, deps: Deps = None, tag: str | None = None) -> np.ndarray:
        """Local work of ``seconds`` s on each of ``ranks``; returns the op ids."""
        return self._add(COMPUTE, ranks, -1, 0.0, seconds, deps, tag)

    def barriers(self, deps: Deps, tag: str | None = None) -> np.ndarray:
        """One no-op per row of ``deps``, done when that row's ops are."""
        deps = join(deps)
        return self._add(BARRIER, np.full(deps.shape[0], -1), -1, 0.0, 0.0, deps, tag)

    def reduce(self, ranks, received: np.ndarray, nbytes, tag: str | None = None
               ) -> np.ndarray:
        """What a rank waits for before using reduced data: the receives, or with ``gamma``
        compute ops of ``nbytes / gamma`` s after them (one reduction at a time per rank)."""
        if self.gamma is None:
            return np.asarray(received, dtype=np.int64)
        ranks = np.asarray(ranks, dtype=np.int64)
        received = np.asarray(received, dtype=np.int64)
        seconds = np.broadcast_to(np.asarray(nbytes, np.float64) / self.gamma, ranks.shape)
        if np.unique(ranks).size != ranks.size:
            return self._reduce_rounds(ranks, received, seconds, tag)
        ids = self.computes(ranks, seconds, join(received, self._last_reduce[ranks]), tag)
        self._last_reduce[ranks] = ids
        return ids

    def _reduce_rounds(self, ranks: np.ndarray, received: np.ndarray, seconds: np.ndarray,
                       tag: str | None) -> np.ndarray:
        """:meth:`reduce` when ranks repeat. A rank reduces one block at a time, in the
        order given: round j holds every rank's j-th block (distinct ranks), each round
        after the one before. The ops are those of one :meth:`reduce` call per round (round
        by round, rows in order within a round, the same dependency columns and the same
        seconds), written as one block whose ops may wait for earlier ops of the block."""
        m = ranks.size
        if m <= _FEW:
            return self._reduce_rounds_few(ranks, received, seconds, tag)
        order = np.argsort(ranks, kind="stable")        # by rank, then by position
        by_rank = ranks[order]
        same = np.empty(m, dtype=bool)                  # same rank as the one before
        same[0] = False
        np.equal(by_rank[1:], by_rank[:-1], out=same[1:])
        position = np.arange(m, dtype=np.int64)
        nth = np.empty(m, dtype=np.int64)
        nth[order] = position - np.maximum.accumulate(np.where(same, 0, position))
        rounds = np.argsort(nth, kind="stable")         # op order: round, then position
        ids = np.empty(m, dtype=np.int64)
        ids[rounds] = position + self._count
        before = chain_by_key(ranks, ids, self._last_reduce)   # the previous reduction
        # a round's call got nbytes = seconds * gamma and divided by gamma again
        seconds = seconds * self.gamma / self.gamma
        deps = _dedupe_rows(np.concatenate([received.reshape(m, -1)[rounds],
                                            before[rounds, None]], axis=1))
        self._add_block(COMPUTE, ranks[rounds], -1, 0.0, seconds[rounds], deps, tag,
                        chained=True)
        return ids

    def _reduce_rounds_few(self, ranks: np.ndarray, received: np.ndarray,
                           seconds: np.ndarray, tag: str | None) -> np.ndarray:
        """:meth:`_reduce_rounds` for a few ops, in Python: numpy's fixed cost per call
        is larger there (a bidirectional ring on 8 ranks: 16 ops per step)."""
        m, first = ranks.size, self._count
        listed = ranks.tolist()
        seen: dict[int, int] = {}
        nth = []
        for r in listed:
            nth.append(seen.get(r, 0))
            seen[r] = nth[-1] + 1
        rounds = sorted(range(m), key=lambda i: (nth[i], i))
        last = {r: int(self._last_reduce[r]) for r in seen}
        ids = np.empty(m, dtype=np.int64)
        before = []
        for k, i in enumerate(rounds):
            r = listed[i]
            before.append(last[r])
            last[r] = ids[i] = first + k
        rounds = np.asarray(rounds, dtype=np.int64)
        seconds = seconds * self.gamma / self.gamma     # as _reduce_rounds
        deps = _dedupe_rows(np.concatenate([received.reshape(m, -1)[rounds],
                                            np.asarray(before, dtype=np.int64)[:, None]],
                                           axis=1))
        self._add_block(COMPUTE, ranks[rounds], -1, 0.0, seconds[rounds], deps, tag,
                        chained=True)
        for r, op in last.items():
            self._last_reduce[r] = op
        return ids

    def repeated_sends(self, src: np.ndarray, dst: np.ndarray, nbytes: float, blocks: int,
                       deps: Callable[[np.ndarray], tuple[np.ndarray, ...]],
                       tag: str | None = None) -> int:
        """``blocks`` blocks of the same sends ``src[i] -> dst[i]`` of ``nbytes`` bytes each,
        every op with the same number of dependencies; returns the first op id (block b,
        row i is op ``first + b * len(src) + i``).

        ``deps(ids)`` maps the op ids of some whole blocks (a flat array, blocks in order)
        to their dependency columns, each of the same shape: every dependency must be an
        earlier op. Nothing is materialised here: the ops are written straight into the
        schedule's arrays by :meth:`build`, block range by block range, so a ring of 33
        million sends needs its final arrays and little else.
        """
        self._flush()
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        first = self._count
        t = -1 if tag is None else self._tags.setdefault(tag, len(self._tags))
        self._blocks.append(_Repeated(first, src, dst, float(nbytes), int(blocks), deps, t,
                                      len(deps(np.array([first], np.int64)))))
        self._count += src.size * int(blocks)
        return first

    # -- result -------------------------------------------------------------------------
    def build(self, **meta: Any) -> Schedule:
        """Freeze the ops into a :class:`~netsim.schedule.Schedule` (meta: pieces + ``meta``)."""
        self._flush()
        # One pass into arrays of the final size (no concatenation of copies): the peak is
        # the schedule itself plus one block.
        sizes = [b.ops if isinstance(b, _Repeated) else b[1].size for b in self._blocks]
        edges = [b.edges if isinstance(b, _Repeated) else b[6].size for b in self._blocks]
        m, e = int(sum(sizes)), int(sum(edges))
        kind = np.empty(m, np.int8)
        src, dst, tag = (np.empty(m, np.int64) for _ in range(3))
        nbytes, seconds = np.empty(m), np.empty(m)
        dep_ptr, idx = np.zeros(m + 1, np.int64), np.empty(e, np.int64)
        at = edge = 0
        columns = (kind, src, dst, nbytes, seconds, dep_ptr[1:], idx, tag)
        for block, size, n_edges in zip(self._blocks, sizes, edges):
            views = [c[at:at + size] for c in columns]
            views[6] = idx[edge:edge + n_edges]
            if isinstance(block, _Repeated):
                block.fill(*views)
            else:
                for view, values in zip(views, block):
                    view[...] = values
            at, edge = at + size, edge + n_edges
        np.cumsum(dep_ptr, out=dep_ptr)          # counts -> CSR pointer, in place
        return Schedule(num_ranks=self.total_ranks, kind=kind, src=src, dst=dst,
                        nbytes=nbytes, seconds=seconds, dep_ptr=dep_ptr, dep_idx=idx,
                        tag=tag, tags=tuple(self._tags), data=self._data,
                        meta={**self.meta, **meta})


class _Repeated:
    """A run of identical blocks of sends kept as a recipe (:meth:`Plan.repeated_sends`)."""

    #: Ops written per chunk of :meth:`fill`: bounds the temporaries (bytes ~ 40 x this).
    CHUNK = 1 << 20

    def __init__(self, first: int, src: np.ndarray, dst: np.ndarray, nbytes: float,
                 blocks: int, deps, tag: int, width: int) -> None:
        self.first, self.src, self.dst, self.nbytes = first, src, dst, nbytes
        self.blocks, self.deps, self.tag, self.width = blocks, deps, tag, width
        self.ops = src.size * blocks
        self.edges = self.ops * width

    def fill(self, kind, src, dst, nbytes, seconds, counts, idx, tag) -> None:
        m = self.src.size
        kind[...] = SEND
        src.reshape(self.blocks, m)[...] = self.src
        dst.reshape(self.blocks, m)[...] = self.dst
        nbytes[...] = self.nbytes
        seconds[...] = 0.0
        counts[...] = self.width
        tag[...] = self.tag
        if not self.width:
            return
        per = max(1, self.CHUNK // m)              # whole blocks per chunk
        out = idx.reshape(self.ops, self.width)
        for b in range(0, self.blocks, per):
            stop = min(b + per, self.blocks)
            ids = np.arange(self.first + b * m, self.first + stop * m, dtype=np.int64)
            for c, column in enumerate(self.deps(ids)):
                out[b * m:stop * m, c] = column

def _ranks_of(mask: int) -> frozenset[int]:
    """The set bits of ``mask`` as a frozenset of ranks."""
    out, r = [], 0
    while mask:
        if mask & 1:
            out.append(r)
        mask >>= 1
        r += 1
    return frozenset(out)


def settle(plan: Plan, deps: np.ndarray) -> np.ndarray:
    """Per-rank deps squeezed to one column: a barrier per rank that waits for many ops.

    Keeps fan-in x fan-out edge counts linear when a phase with many receives per rank is
    followed by a phase with many sends per rank.
    """
    if deps.shape[1] <= 1:
        return deps
    busy = np.flatnonzero((deps >= 0).any(axis=1))
    out = np.full((deps.shape[0], 1), -1, dtype=np.int64)
    if busy.size:
        out[busy, 0] = plan.barriers(deps[busy])
    return out


def blocks(num_ranks: int, per_rank: int) -> np.ndarray:
    """Piece ids of every rank's block, shape (num_ranks, per_rank): rank r owns r*q..."""
    return np.arange(num_ranks * per_rank, dtype=np.int64).reshape(num_ranks, per_rank)


def one_phase(op: str, num_ranks: int, size: float, options, phase):
    """The schedule of an algorithm that is one ``phase(plan, owners, ready)`` over one
    block per rank, nothing before it (direct, recursive doubling or halving alone)."""
    plan = Plan(op, num_ranks, size, num_ranks, options)
    phase(plan, blocks(num_ranks, 1), no_deps(num_ranks))
    return plan.build()


def serial_computes(plan: Plan, rank, seconds, deps: np.ndarray, after=-1,
                    tag: str | None = None) -> np.ndarray:
    """One compute op of ``seconds`` s on ``rank`` per row of ``deps`` (m, d), each also
    after the one before (the first after op ``after``, -1 = none): one unit working
    through a queue, added as one block (a chain inside a block, which :meth:`Plan.computes`
    refuses). Returns the m op ids; the same ops as m calls of :meth:`Plan.compute1`.
    With ``rank`` (and optionally ``seconds`` and ``after``) an array of g units, ``deps``
    holds g queues of m / g rows one after another, each unit working through its own.

    >>> from netsim.algorithms import AlgoOptions
    >>> plan = Plan("allreduce", 2, 8.0, 2, AlgoOptions())
    >>> sent = plan.sends([0, 1], [1, 0], pieces=[[0], [1]])
    >>> serial_computes(plan, 1, 1e-6, sent[:, None]).tolist()
    [2, 3]
    >>> plan.build().deps(3).tolist()
    [1, 2]
    >>> serial_computes(plan, [0, 1], 1e-6, np.array([[0], [1], [0], [1]])).tolist()
    [4, 5, 6, 7]
    >>> [plan.build().deps(op).tolist() for op in (5, 6)]
    [[1, 4], [0]]
    """
    plan._flush()
    deps = np.asarray(deps, dtype=np.int64).reshape(len(deps), -1)
    ranks = np.atleast_1d(np.asarray(rank, dtype=np.int64))
    m, first, units = deps.shape[0], plan._count, ranks.size
    starts = np.broadcast_to(np.asarray(after, dtype=np.int64), (units,))
    if deps.size and deps.max() >= first or starts.max(initial=-1) >= first:
        raise ValueError("a dependency names an op that is not in an earlier block")
    if m == 0 or m % units:
        raise ValueError(f"{m} rows do not split into queues of {units} units")
    per_unit = m // units
    ids = np.arange(first, first + m, dtype=np.int64)
    previous = ids - 1
    previous[::per_unit] = starts                  # each queue after its own start
    both = np.sort(np.concatenate([deps, previous[:, None]], axis=1), axis=1)
    keep = both >= 0
    keep[:, 1:] &= both[:, 1:] != both[:, :-1]     # every dependency listed once
    t = -1 if tag is None else plan._tags.setdefault(tag, len(plan._tags))
    seconds = np.asarray(seconds, dtype=np.float64)
    plan._blocks.append((COMPUTE, np.repeat(ranks, per_unit), np.int64(-1), 0.0,
                         float(seconds) if seconds.ndim == 0 else
                         np.repeat(np.broadcast_to(seconds, (units,)), per_unit),
                         keep.sum(axis=1), both[keep], t))
    plan._count += m
    return ids
