"""Trees for broadcast and reduce: chains, binomial trees and NCCL-style double binary
trees, and the pipelined reduce-up / broadcast-down steps over them.

A :class:`Tree` is a parent array plus ordered children. Data is pipelined in chunks:
on every edge the chunks travel in order (chunk c waits for chunk c-1 on the same edge,
one channel per direction), so a chain of p ranks moves k chunks in p - 2 + k steps.
With ``serial=True`` a node sends one message at a time over all of its edges (the
one-port model of MPICH's binomial tree: children in rounds, largest subtree first).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..schedule import COMPUTE, SEND
from .plan import Plan, _dedupe_rows, chain_by_key, join

__all__ = ["Tree", "chain_tree", "binomial_tree", "double_binary_trees", "reduce_up",
           "broadcast_down"]


@dataclass(frozen=True)
class Tree:
    """A rooted tree over ranks: ``parent[r]`` (-1 at the root), ordered ``children[r]``."""

    root: int
    parent: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]

    def top_down(self) -> list[int]:
        """Ranks in breadth-first order from the root."""
        order, i = [self.root], 0
        while i < len(order):
            order.extend(self.children[order[i]])
            i += 1
        return order


def _tree(root: int, parent: list[int]) -> Tree:
    children: list[list[int]] = [[] for _ in parent]
    for r, p in enumerate(parent):
        if p >= 0:
            children[p].append(r)
    return Tree(root, tuple(parent), tuple(tuple(c) for c in children))


def chain_tree(sequence) -> Tree:
    """The chain sequence[0] -> sequence[1] -> ... (sequence[0] is the root)."""
    sequence = [int(r) for r in sequence]
    parent = [-1] * len(sequence)
    for a, b in zip(sequence, sequence[1:]):
        parent[b] = a
    return _tree(sequence[0], parent)


def binomial_tree(sequence) -> Tree:
    """Binomial tree over ``sequence`` (root first): position v's parent is v minus its
    highest bit; its children are v + 2^j for 2^j > v, in increasing j, which puts the
    largest subtree first (v + 1 heads ranks v + 1, v + 3, ...)."""
    sequence = [int(r) for r in sequence]
    n = len(sequence)
    parent = [-1] * n
    children: list[list[int]] = [[] for _ in range(n)]
    for v in range(1, n):
        parent[sequence[v]] = sequence[v - (1 << (v.bit_length() - 1))]
    for v in range(n):
        j = v.bit_length()
        kids = [v + (1 << i) for i in range(j, n.bit_length()) if v + (1 << i) < n]
        children[sequence[v]] = [sequence[c] for c in kids]
    return Tree(sequence[0], tuple(parent), tuple(tuple(c) for c in children))


def _inorder_parents(lo: int, hi: int, parent: list[int], up: int) -> None:
    """In-order binary tree over roles [lo, hi): the root is the role with the most trailing
    zero bits, so odd roles are leaves and even roles are inner nodes."""
    if lo >= hi:
        return
    top = max(range(lo, hi), key=lambda r: (r & -r, -r))
    parent[top] = up
    _inorder_parents(lo, top, parent, top)
    _inorder_parents(top + 1, hi, parent, top)


def double_binary_trees(n: int) -> tuple[Tree, Tree]:
    """Two binary trees over ranks 0..n-1 in which no rank is an inner node twice.

    Tree A: rank 0 is the root, with one child, the in-order tree over 1..n-1 (odd ranks are
    leaves). Tree B is tree A mirrored (rank r plays role n-1-r) when n is even, shifted
    (rank r plays role r-1) when n is odd, so A's leaves are B's inner nodes. This is the
    two-tree construction of Sanders, Speck & Traeff (2009) that NCCL uses for all-reduce.
    """
    roles = [-1] * n
    _inorder_parents(1, n, roles, 0)
    roles[0] = -1
    a = _tree(0, roles)
    rank_of_role = [n - 1 - v for v in range(n)] if n % 2 == 0 else [(v + 1) % n
                                                                      for v in range(n)]
    parent_b = [-1] * n
    for v, p in enumerate(roles):
        if p >= 0:
            parent_b[rank_of_role[v]] = rank_of_role[p]
    return a, _tree(rank_of_role[0], parent_b)


def _rows(deps: np.ndarray) -> list[list[int]]:
    """Per-rank dependency lists (without the -1 padding)."""
    return [[d for d in row if d >= 0] for row in deps.tolist()]


def _padded(rows: list[list[int]]) -> np.ndarray:
    """Lists of op ids as an (m, width) array, -1 padded."""
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def reduce_up(plan: Plan, trees: list[tuple[Tree, list[np.ndarray]]], ready: np.ndarray,
              tag: str | None = None) -> list[list[list[int]]]:
    """Pipelined reduction of every chunk to each tree's root.

    ``trees`` pairs a tree with its chunks (piece-id arrays); the trees are interleaved
    chunk by chunk. Returns, per tree and chunk, the op ids after which its root holds the
    chunk complete.
    """
    if not plan.annotate:
        return _reduce_up_blocks(plan, trees, ready, tag)
    waits = _rows(ready)
    bottom_up = [list(reversed(t.top_down())) for t, _ in trees]
    last_up: list[dict[int, int]] = [{} for _ in trees]   # rank -> its last send upward
    at_root: list[list[list[int]]] = [[] for _ in trees]
    for c in range(max(len(chunks) for _, chunks in trees)):
        for t, ((tree, chunks), order) in enumerate(zip(trees, bottom_up)):
            if c >= len(chunks):
                continue
            pieces = chunks[c].tolist()
            nbytes = len(pieces) * plan.piece_bytes
            got: dict[int, list[int]] = {}
            for rank in order:
                mine = waits[rank] + got.get(rank, [])
                if rank == tree.root:
                    at_root[t].append(mine)
                    continue
                up = tree.parent[rank]
                sent = plan.send1(rank, up, pieces, mine + [last_up[t].get(rank, -1)], tag)
                last_up[t][rank] = sent
                got.setdefault(up, []).append(plan.reduce1(up, sent, nbytes, tag))
    return at_root


def broadcast_down(plan: Plan, trees: list[tuple[Tree, list[np.ndarray]]],
                   root_has: list[list[list[int]]] | None, ready: np.ndarray, *,
                   serial: bool = False, tag: str | None = None) -> np.ndarray:
    """Pipelined broadcast of every chunk from each tree's root to all its ranks.

    ``root_has[t][c]`` (op ids) says when the root of tree t holds chunk c (None: at
    ``ready``). Returns per-rank deps after which the rank holds every chunk.
    """
    if not plan.annotate:
        return _broadcast_down_blocks(plan, trees, root_has, ready, serial, tag)
    waits = _rows(ready)
    received: list[list[int]] = [[] for _ in range(ready.shape[0])]
    last: dict[tuple, int] = {}      # channel -> last send on it
    orders = [tree.top_down() for tree, _ in trees]
    for c in range(max(len(chunks) for _, chunks in trees)):
        for t, ((tree, chunks), order) in enumerate(zip(trees, orders)):
            if c >= len(chunks):
                continue
            pieces = chunks[c].tolist()
            has = {tree.root: waits[tree.root] + (root_has[t][c] if root_has else [])}
            for rank in order:
                for child in tree.children[rank]:
                    channel = (rank,) if serial else (t, rank, child)
                    sent = plan.send1(rank, child, pieces, has[rank] + [last.get(channel, -1)],
                                      tag)
                    last[channel] = sent
                    has[child] = [sent]
                    received[child].append(sent)
    return join(ready, _padded(received))


# -- the same ops in blocks ----------------------------------------------------------------
# Without annotation (every collective run: what a send carries is for verify and export)
# each tree and chunk is one block of the same ops in the same order, with the same
# dependencies: one op at a time costs about 4 us in Python (dbtree on 4,096 ranks, 1M
# sends: 7.6 s). With annotation the loops above run, and the tests compare the two.

def _reduce_up_blocks(plan: Plan, trees, ready: np.ndarray, tag):
    waits = _rows(ready)
    k = 1 if plan.gamma is None else 2           # a send, and its reduction with gamma
    shapes = []
    for tree, _ in trees:
        senders = [r for r in reversed(tree.top_down()) if r != tree.root]
        parents = [tree.parent[r] for r in senders]
        kids: dict[int, list[int]] = {}
        for i, p in enumerate(parents):
            kids.setdefault(p, []).append(i)      # in the order the loop reaches them
        shapes.append((np.array(senders, np.int64), np.array(parents, np.int64),
                       _padded([kids.get(r, []) for r in senders]),
                       _padded([waits[r] for r in senders]), kids.get(tree.root, [])))
    at_root: list[list[list[int]]] = [[] for _ in trees]
    prev: list[int | None] = [None] * len(trees)
    for c in range(max(len(chunks) for _, chunks in trees)):
        for t, (tree, chunks) in enumerate(trees):
            if c >= len(chunks):
                continue
            senders, parents, kid_pos, wait, root_kids = shapes[t]
            m = senders.size
            nbytes = len(chunks[c]) * plan.piece_bytes
            base = len(plan)
            pos = np.arange(m, dtype=np.int64)
            res = base + pos * k + (k - 1)       # what the parent waits for
            got = np.where(kid_pos >= 0, res[np.maximum(kid_pos, 0)], -1)
            back = np.full((m, 1), -1, dtype=np.int64)
            if prev[t] is not None:              # the same rank's send of the last chunk
                back[:, 0] = prev[t] + pos * k
            send_deps = np.hstack([wait, got, back])
            if k == 1:
                kind, src, dst = SEND, senders, parents
                size, seconds, deps = nbytes, 0.0, send_deps
            else:
                comp = base + pos * 2 + 1
                before = chain_by_key(parents, comp, plan._last_reduce)
                width = max(send_deps.shape[1], 2)
                deps = np.full((2 * m, width), -1, dtype=np.int64)
                deps[0::2, :send_deps.shape[1]] = send_deps
                deps[1::2, 0], deps[1::2, 1] = base + pos * 2, before
                kind = np.tile(np.array([SEND, COMPUTE], np.int8), m)
                src = np.stack([senders, parents], axis=1).ravel()
                dst = np.stack([parents, np.full(m, -1, np.int64)], axis=1).ravel()
                size = np.tile([nbytes, 0.0], m)
                seconds = np.tile([0.0, nbytes / plan.gamma], m)
            plan._add_block(kind, src, dst, size, seconds, _dedupe_rows(np.sort(deps, axis=1)), tag,
                            chained=True, m=m * k)
            prev[t] = base
            at_root[t].append(waits[tree.root] + [int(res[i]) for i in root_kids])
    return at_root


def _broadcast_down_blocks(plan: Plan, trees, root_has, ready: np.ndarray, serial: bool,
                           tag) -> np.ndarray:
    waits = _rows(ready)
    n = ready.shape[0]
    shapes = []
    for tree, _ in trees:
        src, dst = [], []
        for rank in tree.top_down():
            for child in tree.children[rank]:
                src.append(rank)
                dst.append(child)
        src_a, dst_a = np.array(src, np.int64), np.array(dst, np.int64)
        delivered = np.full(n, -1, np.int64)       # the position of the send into a rank
        delivered[dst_a] = np.arange(dst_a.size)
        shapes.append((src_a, dst_a, delivered[src_a]))
    last_from = np.full(n, -1, dtype=np.int64)     # serial: per rank, its last send
    prev: list[int | None] = [None] * len(trees)
    got_rank, got_id = [], []
    for c in range(max(len(chunks) for _, chunks in trees)):
        for t, (tree, chunks) in enumerate(trees):
            if c >= len(chunks):
                continue
            src, dst, feed = shapes[t]
            m = src.size
            if not m:
                continue
            base = len(plan)
            ids = base + np.arange(m, dtype=np.int64)
            from_parent = np.where(feed >= 0, base + np.maximum(feed, 0), -1)[:, None]
            at_root = waits[tree.root] + (root_has[t][c] if root_has else [])
            root_cols = np.full((m, len(at_root)), -1, dtype=np.int64)
            root_cols[src == tree.root] = at_root
            if serial:
                channel = chain_by_key(src, ids, last_from)[:, None]
            elif prev[t] is None:
                channel = np.full((m, 1), -1, dtype=np.int64)
            else:
                channel = (prev[t] + np.arange(m, dtype=np.int64))[:, None]
            deps = np.hstack([from_parent, root_cols, channel])
            plan._add_block(SEND, src, dst, len(chunks[c]) * plan.piece_bytes, 0.0,
                            _dedupe_rows(np.sort(deps, axis=1)), tag, chained=True, m=m)
            prev[t] = base
            got_rank.append(dst)
            got_id.append(ids)
    rows = np.zeros((n, 0), dtype=np.int64)
    if got_rank:
        ranks, ids = np.concatenate(got_rank), np.concatenate(got_id)
        order = np.argsort(ranks, kind="stable")       # per rank, in the order sent
        counts = np.bincount(ranks, minlength=n)
        rows = np.full((n, int(counts.max())), -1, dtype=np.int64)
        col = np.arange(ranks.size) - np.repeat(np.cumsum(counts) - counts, counts)
        rows[ranks[order], col] = ids[order]
    return join(ready, rows)
