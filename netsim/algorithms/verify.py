"""Symbolic verification: does a schedule deliver what its collective promises?

Every send of an annotated schedule carries ``data = ((piece, contributors), ...)`` (see
:mod:`.pieces`). :func:`verify` replays the DAG and checks that

1. every send is annotated, names valid pieces, and moves ``len(data) x piece bytes``;
2. a send only carries what its sender holds: each claimed contributor set must be a
   *disjoint* union of the sender's own input and of what it received in sends that are
   DAG ancestors of this send (so a missing dependency, a fabricated contributor or a
   double count all fail);
3. no rank receives a contributor twice: the partial (incomplete) contributions a rank
   receives for a piece are pairwise disjoint and disjoint from its own input. Complete
   pieces (the final value) may arrive more than once: they overwrite;
4. at the end every rank can form exactly what the collective promises (all-reduce: every
   piece with all n contributors on every rank; reduce-scatter: rank r its block; ...).

Ranks from ``num_ranks`` on (switches of in-network reduction) have no input and no
promise. Ancestor sets are Python-int bitsets, fine for test sizes (thousands of ops).

Imported schedules (schedule files, MSCCL XML) are checked at load by
:func:`check_import`: the full check above when their sends are annotated, else
:func:`flow_problems`, which needs no annotation: every rank must be reached, through a
chain of sends that follow each other in the DAG, by the data of every rank whose input
it needs, and must receive at least the bytes the collective obliges it to receive.

>>> from netsim.algorithms import build_schedule
>>> verify(build_schedule("allreduce", "ring", 5, 1e6), "allreduce", 5)
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

import numpy as np

from ..errors import ScheduleError
from ..schedule import SEND, Schedule
from .pieces import complete_mask, initial_holdings, piece_bytes, promised_holdings

__all__ = ["verify", "problems", "check_import", "flow_problems"]


def verify(schedule: Schedule, op: str, num_ranks: int) -> None:
    """Raise :class:`~netsim.errors.ScheduleError` naming the first problem, if any."""
    found = problems(schedule, op, num_ranks, first_only=True)
    if found:
        raise ScheduleError(found[0])


def problems(schedule: Schedule, op: str, num_ranks: int, first_only: bool = False
             ) -> list[str]:
    """Every problem found (see the module docstring); an empty list means correct."""
    return _Check(schedule, op, num_ranks, first_only).run()


class _Stop(Exception):
    pass


class _Check:
    def __init__(self, schedule: Schedule, op: str, n: int, first_only: bool) -> None:
        self.s, self.op, self.n, self.first_only = schedule, op, n, first_only
        self.pieces = int(schedule.meta.get("pieces", 0))
        self.root = int(schedule.meta.get("root", 0))
        size = schedule.meta.get("size")
        self.piece_bytes = None if size is None else piece_bytes(op, size, n, self.pieces)
        self.found: list[str] = []

    def fail(self, message: str) -> None:
        self.found.append(message)
        if self.first_only:
            raise _Stop

    def run(self) -> list[str]:
        try:
            self._run()
        except _Stop:
            pass
        return self.found

    def _run(self) -> None:
        s = self.s
        if self.pieces <= 0:
            self.fail("schedule meta has no 'pieces': it is not annotated")
        self.own = initial_holdings(self.op, self.n, self.pieces, self.root)
        self.own += [{} for _ in range(s.num_ranks - self.n)]
        self.sends = [int(i) for i in range(s.num_ops) if s.kind[i] == SEND]
        self.carried = {op: self._carried(op) for op in self.sends}
        # receives[rank][piece] = [(op, mask)] in op order
        self.receives: list[dict[int, list]] = [defaultdict(list) for _ in range(s.num_ranks)]
        for op in self.sends:
            for piece, mask in self.carried[op]:
                self.receives[int(s.dst[op])][piece].append((op, mask))
        self._check_senders_hold()
        self._check_no_double_counts()
        self._check_promise()

    def _carried(self, op: int) -> list[tuple[int, int]]:
        data = self.s.data.get(op)
        where = f"send op {op} ({int(self.s.src[op])}->{int(self.s.dst[op])})"
        if data is None:
            self.fail(f"{where} carries no data annotation")
            return []
        out, seen = [], set()
        for piece, contributors in data:
            if not 0 <= piece < self.pieces:
                self.fail(f"{where} names piece {piece}, not in 0..{self.pieces - 1}")
                continue
            if piece in seen:
                self.fail(f"{where} carries piece {piece} twice")
            seen.add(piece)
            mask = _mask(contributors)
            if mask == 0:
                self.fail(f"{where} carries piece {piece} with no contributors")
            if mask >> self.n:
                self.fail(f"{where} piece {piece}: contributors {sorted(contributors)} are not "
                          f"all ranks of 0..{self.n - 1}")
            out.append((int(piece), mask))
        if self.piece_bytes is not None:
            expected = len(out) * self.piece_bytes
            if abs(float(self.s.nbytes[op]) - expected) > 1e-9 * max(expected, 1.0):
                self.fail(f"{where} moves {float(self.s.nbytes[op])!r} bytes but carries "
                          f"{len(out)} pieces of {self.piece_bytes!r} bytes")
        return out

    def _ancestors(self) -> list[int]:
        """Bitset of the DAG ancestors of every op (ops are in a topological order)."""
        s, anc = self.s, [0] * self.s.num_ops
        for i in range(s.num_ops):
            a = 0
            for d in s.deps(i).tolist():
                a |= anc[d] | (1 << d)
            anc[i] = a
        return anc

    def _check_senders_hold(self) -> None:
        anc = self._ancestors()
        for op in self.sends:
            rank = int(self.s.src[op])
            for piece, claim in self.carried[op]:
                sources = [mask for recv, mask in self.receives[rank].get(piece, ())
                           if anc[op] >> recv & 1]
                if piece in self.own[rank]:
                    sources.append(self.own[rank][piece])
                if not _disjoint_union(claim, sources):
                    self.fail(f"send op {op} ({rank}->{int(self.s.dst[op])}) claims piece "
                              f"{piece} with contributors {_show(claim)}, but rank {rank} "
                              f"only holds {', '.join(map(_show, sources)) or 'nothing'} "
                              f"from its input and earlier receives")

    def _check_no_double_counts(self) -> None:
        for rank, by_piece in enumerate(self.receives):
            for piece, got in by_piece.items():
                complete = complete_mask(self.op, piece, self.n, self.pieces, self.root)
                seen = self.own[rank].get(piece, 0)
                for op, mask in got:
                    if mask == complete:
                        continue
                    if mask & seen:
                        self.fail(f"rank {rank} counts contributors {_show(mask & seen)} of "
                                  f"piece {piece} twice (send op {op})")
                    seen |= mask

    def _check_promise(self) -> None:
        promised = promised_holdings(self.op, self.n, self.pieces, self.root)
        for rank in range(self.n):
            for piece, want in promised[rank].items():
                sources = [mask for _, mask in self.receives[rank].get(piece, ())]
                if piece in self.own[rank]:
                    sources.append(self.own[rank][piece])
                if not _disjoint_union(want, sources):
                    self.fail(f"rank {rank} ends without piece {piece} = {_show(want)} "
                              f"(it has {', '.join(map(_show, sources)) or 'nothing'})")


def _mask(contributors: Iterable[int] | int) -> int:
    if isinstance(contributors, int):
        return contributors
    mask = 0
    for r in contributors:
        mask |= 1 << int(r)
    return mask


def _show(mask: int) -> str:
    ranks = [r for r in range(mask.bit_length()) if mask >> r & 1]
    return "{" + ",".join(map(str, ranks)) + "}"


def _disjoint_union(target: int, sources: list[int]) -> bool:
    """Can ``target`` be written as a union of pairwise disjoint members of ``sources``?"""
    if target == 0:
        return True
    usable = sorted({m for m in sources if m and m & ~target == 0}, key=lambda m: -m.bit_count())
    return _cover(target, usable)


def _cover(remaining: int, usable: list[int]) -> bool:
    if remaining == 0:
        return True
    low = remaining & -remaining            # some member must cover the lowest missing rank
    return any(_cover(remaining & ~m, usable) for m in usable
               if m & low and m & ~remaining == 0)


# -- imported schedules ------------------------------------------------------------------

#: Above this many ops the full symbolic check (quadratic ancestor bitsets) is left to
#: :func:`flow_problems`, which is linear in the dependencies.
FULL_CHECK_OPS = 20_000


def check_import(schedule: Schedule, op: str, num_ranks: int, *, source: str,
                 root: int = 0) -> None:
    """Refuse an imported ``schedule`` that does not perform ``op`` on ``num_ranks`` ranks.

    Raises :class:`~netsim.errors.ScheduleError` with one line that starts with
    ``source`` (the file) and says which rank lacks which data. Annotated schedules (MSCCL
    XML of the collectives it annotates) get the full check of :func:`verify`, the others
    :func:`flow_problems`.

    >>> from netsim.schedule import ScheduleBuilder
    >>> b = ScheduleBuilder(3, meta={"size": 3e6})
    >>> _ = b.send(0, 1, 1e6)
    >>> check_import(b.build(), "allreduce", 3, source="one.json")
    Traceback (most recent call last):
    ...
    netsim.errors.ScheduleError: one.json: not an allreduce on 3 ranks: rank 0 never receives the data of ranks 1, 2 (no chain of sends brings it)
    """
    found: list[str] = []
    if schedule.data and int(schedule.meta.get("pieces", 0)) > 0 \
            and schedule.num_ops <= FULL_CHECK_OPS:
        found = problems(schedule, op, num_ranks, first_only=True)
    if not found:
        found = flow_problems(schedule, op, num_ranks, root=root, first_only=True)
    if found:
        raise ScheduleError(f"{source}: not a{'n' if op[0] in 'aeiou' else ''} {op} on "
                            f"{num_ranks} ranks: {found[0]}")


def _needs(op: str, n: int, root: int) -> list[tuple[int, int]]:
    """(rank, mask of the ranks whose input it must end up depending on) per rank."""
    everyone = (1 << n) - 1
    if op == "broadcast":
        return [(r, 1 << root) for r in range(n) if r != root]
    if op == "reduce":
        return [(root, everyone)]
    return [(r, everyone) for r in range(n)]


def _min_received(op: str, n: int, size: float, rank: int, root: int) -> float:
    """Bytes rank ``rank`` must receive at least (n ranks, size as nccl-tests means it).

    All-gather and all-to-all: the other ranks' blocks, S (n-1)/n. All-reduce (every rank)
    and reduce (the root): every element of the result depends on an input the rank does
    not hold, so the rank must receive S bytes (as many as it has elements), whoever sums
    them. Reduce-scatter: its block, S/n, likewise. Broadcast: every rank but the root
    receives the buffer, S."""
    if n < 2:
        return 0.0
    if op in ("broadcast", "reduce"):
        return size if (rank == root) == (op == "reduce") else 0.0
    if op == "allreduce":
        return size
    if op == "reducescatter":
        return size / n
    return size * (n - 1) / n


def flow_problems(schedule: Schedule, op: str, num_ranks: int, *, root: int = 0,
                  first_only: bool = False) -> list[str]:
    """What an unannotated schedule visibly fails to deliver as ``op`` (empty: nothing).

    Two necessary conditions, so a correct schedule is never refused:

    1. *reach*: the data of rank a can be in rank b's result only if a chain of sends
       a -> ... -> b exists in which every send is a DAG descendant of the one before.
       What an op may hold is over-approximated by its causal past (every rank whose
       input reached any of its DAG ancestors), which is exact for schedules whose
       dependencies are data dependencies and generous for others;
    2. *volume*: every rank receives at least :func:`_min_received` bytes (relative
       tolerance 1e-6: fractions written with few digits).

    >>> from netsim.algorithms import build_schedule
    >>> flow_problems(build_schedule("allgather", "ring", 4, 4e6), "allgather", 4)
    []
    """
    s, n = schedule, int(num_ranks)
    found: list[str] = []

    def fail(message: str) -> bool:
        found.append(message)
        return first_only

    size = float(schedule.meta.get("size") or 0.0)
    sends = s.kind == SEND
    src, dst = s.src.astype(np.int64), s.dst.astype(np.int64)
    width = max(int(s.num_ranks), n)
    received = np.bincount(dst[sends], weights=s.nbytes[sends].astype(float), minlength=width)
    # reach: known[i] = ranks whose input is in op i's causal past (Python-int bitsets)
    known = [0] * s.num_ops
    kind, ptr, idx = s.kind.tolist(), s.dep_ptr.tolist(), s.dep_idx.tolist()
    at_end = [1 << r if r < n else 0 for r in range(width)]
    for i in range(s.num_ops):
        r = int(src[i])
        k = (1 << r) if 0 <= r < n else 0
        for d in idx[ptr[i]:ptr[i + 1]]:
            k |= known[d]
        known[i] = k
        if kind[i] == SEND:
            at_end[int(dst[i])] |= k
    for rank, want in _needs(op, n, root):
        missing = want & ~at_end[rank]
        if missing:
            if fail(f"rank {rank} never receives the data of {_ranks_text(missing)} (no "
                    f"chain of sends brings it)"):
                return found
    for rank in range(n):
        need = _min_received(op, n, size, rank, root)
        got = float(received[rank])
        if need > 0 and got < need * (1 - 1e-6):
            if fail(f"rank {rank} receives {got:.6g} bytes, but an {op} of {size:.6g} bytes "
                    f"on {n} ranks must bring it at least {need:.6g}"):
                return found
    return found


def _ranks_text(mask: int, show: int = 4) -> str:
    """'rank 3', 'ranks 1, 2' or 'ranks 1, 2, 4, 5, ... (9 ranks)'."""
    ranks = [r for r in range(mask.bit_length()) if mask >> r & 1]
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    text = ", ".join(map(str, ranks[:show]))
    return f"ranks {text}" + (f", ... ({len(ranks)} ranks)" if len(ranks) > show else "")
