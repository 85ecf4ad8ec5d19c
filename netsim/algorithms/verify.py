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

>>> from netsim.algorithms import build_schedule
>>> verify(build_schedule("allreduce", "ring", 5, 1e6), "allreduce", 5)
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from ..errors import ScheduleError
from ..schedule import SEND, Schedule
from .pieces import complete_mask, initial_holdings, piece_bytes, promised_holdings

__all__ = ["verify", "problems"]


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
