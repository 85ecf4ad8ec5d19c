"""Schedules made of identical blocks of sends, kept as a recipe.

A ring all-reduce on n ranks is 2(n-1) steps of the same n sends (position i to position
i+1), each step waiting for the one before: 33.5 million sends on 4,096 ranks, 268 million
on 16,384, but only 2(n-1) distinct *steps*. A :class:`BlockSchedule` keeps that shape:
``blocks`` blocks of the m sends ``src[i] -> dst[i]`` of ``nbytes`` bytes each, send i of
block b being op ``b * m + i`` of the full schedule (:meth:`BlockSchedule.expand`).

Block b waits for the blocks ``dep_idx[dep_ptr[b]:dep_ptr[b+1]]``, member by member through
a permutation of the m sends: for the dependency whose ``dep_perm`` is p, send i of b waits
for send ``perms[p][i]`` of the other block. Permutations make the dependencies between two
blocks regular (every send of the earlier block is waited for by exactly one send of the
later one), which is what lets the engine simulate one send per block when the m sends of
one block cannot be told apart (:func:`netsim.engine.blocks.simulate_blocks`).

>>> import numpy as np
>>> ring = BlockSchedule(num_ranks=3, src=np.array([0, 1, 2]), dst=np.array([1, 2, 0]),
...                      nbytes=1e6, blocks=2, dep_ptr=np.array([0, 0, 1]),
...                      dep_idx=np.array([0]), dep_perm=np.array([0]),
...                      perms=(np.array([2, 0, 1]),))
>>> full = ring.expand()
>>> full.num_ops, full.dep_idx.tolist()     # send i of block 1 waits for send i-1 of block 0
(6, [2, 0, 1])
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..errors import ScheduleError
from .ir import SEND, Schedule

__all__ = ["BlockSchedule"]

#: Ops written per chunk of :meth:`BlockSchedule.expand` (bounds its temporaries).
_CHUNK = 1 << 20


@dataclass(frozen=True, eq=False)
class BlockSchedule:
    """``blocks`` blocks of the sends ``src[i] -> dst[i]`` (ranks) of ``nbytes`` bytes each;
    block dependencies as CSR (``dep_ptr``, ``dep_idx``) with one permutation index per
    dependency (``dep_perm`` into ``perms``); see the module docstring. ``tag`` is the
    index into ``tags`` of every op (-1: none); ``meta`` is the full schedule's."""

    num_ranks: int
    src: np.ndarray
    dst: np.ndarray
    nbytes: float
    blocks: int
    dep_ptr: np.ndarray
    dep_idx: np.ndarray
    dep_perm: np.ndarray
    perms: tuple[np.ndarray, ...]
    tag: int = -1
    tags: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = len(self.src)
        if len(self.dst) != m or m == 0:
            raise ScheduleError(f"a block needs as many destinations as sources (>= 1), got "
                                f"{m} and {len(self.dst)}")
        if len(self.dep_ptr) != self.blocks + 1 or len(self.dep_perm) != len(self.dep_idx):
            raise ScheduleError("block dependencies: dep_ptr needs blocks + 1 entries and "
                                "dep_perm one per dependency")
        owner = np.repeat(np.arange(self.blocks), np.diff(self.dep_ptr))
        if np.any(self.dep_idx >= owner) or np.any(self.dep_idx < 0):
            raise ScheduleError("a block may only wait for earlier blocks")
        for p in self.perms:
            if p.shape != (m,) or not np.array_equal(np.sort(p), np.arange(m)):
                raise ScheduleError(f"block dependencies go through permutations of the "
                                    f"{m} sends of a block")

    @property
    def sends_per_block(self) -> int:
        return len(self.src)

    @property
    def num_ops(self) -> int:
        """Ops of the full schedule: every send of every block."""
        return self.blocks * len(self.src)

    num_sends = num_ops

    def scaled(self, factor: float) -> "BlockSchedule":
        """Every send's bytes multiplied by ``factor`` (as :meth:`Schedule.scaled`)."""
        return replace(self, nbytes=self.nbytes * float(factor))

    def block(self) -> Schedule:
        """One block alone: its m sends, no dependencies."""
        m = len(self.src)
        return Schedule(num_ranks=self.num_ranks, kind=np.full(m, SEND, np.int8),
                        src=np.asarray(self.src, np.int64), dst=np.asarray(self.dst, np.int64),
                        nbytes=np.full(m, float(self.nbytes)), seconds=np.zeros(m),
                        dep_ptr=np.zeros(m + 1, np.int64), dep_idx=np.zeros(0, np.int64),
                        tag=np.full(m, self.tag, np.int64), tags=self.tags)

    def expand(self) -> Schedule:
        """The full schedule, op for op: send i of block b is op ``b * m + i``; its
        dependencies are those of its block, in order, through their permutations."""
        m, n_blocks = len(self.src), self.blocks
        n_ops = n_blocks * m
        degree = np.diff(self.dep_ptr)
        dep_ptr = np.zeros(n_ops + 1, np.int64)
        np.cumsum(np.repeat(degree, m), out=dep_ptr[1:])
        idx = np.empty(int(dep_ptr[-1]), np.int64)
        perms = np.stack(self.perms) if self.perms else np.zeros((0, m), np.int64)
        for d in np.unique(degree[degree > 0]).tolist():
            which = np.flatnonzero(degree == d)
            per = max(1, _CHUNK // (m * d))
            for lo in range(0, which.size, per):
                b = which[lo:lo + per]
                edges = self.dep_ptr[b][:, None] + np.arange(d)          # (blocks, d)
                # values[k, i, j]: dependency j of send i of block b[k]
                values = (self.dep_idx[edges][:, None, :] * m
                          + perms[self.dep_perm[edges]].transpose(0, 2, 1))
                start = dep_ptr[b * m]
                idx[(start[:, None] + np.arange(m * d)).ravel()] = values.reshape(-1)
        return Schedule(num_ranks=self.num_ranks, kind=np.full(n_ops, SEND, np.int8),
                        src=np.tile(np.asarray(self.src, np.int64), n_blocks),
                        dst=np.tile(np.asarray(self.dst, np.int64), n_blocks),
                        nbytes=np.full(n_ops, float(self.nbytes)), seconds=np.zeros(n_ops),
                        dep_ptr=dep_ptr, dep_idx=idx, tag=np.full(n_ops, self.tag, np.int64),
                        tags=self.tags, meta=dict(self.meta))
