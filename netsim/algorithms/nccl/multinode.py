"""NCCL's schedules across nodes: one ring per channel, and trees of chains.

NCCL (``src/graph/search.cc``, ``connect.cc``) builds, on a machine of G nodes of L GPUs
each with NICs:

* **rings**: channel h is one ring through every GPU. Inside a node it enters at the GPU
  next to one NIC, visits the node's other GPUs over NVLink and leaves from the last one
  through that GPU's NIC to the next node. The channels start at different GPUs, so each
  node is entered and left exactly once per channel, and the channels spread over the
  NICs. Here channel h enters node k at local GPU ``h mod L`` and leaves it from local GPU
  ``(h - 1) mod L``: every NIC sends one channel and receives one channel out of each L.
* **trees**: two binary trees over the nodes (the double binary tree: no node is an inner
  node of both), and inside each node a chain from the GPU next to the channel's NIC
  through the node's other GPUs. Each tree all-reduces half of the channel's data: reduce
  up the chains and the node tree, broadcast back down.

Ranks are grouped by node (``options.groups`` or the topology's ``meta['groups']``); all
nodes must hold the same number of ranks, as NCCL's multi-node graphs assume.

>>> import numpy as np
>>> ring_orders(np.arange(8).reshape(2, 4), 2)
array([[0, 1, 2, 3, 4, 5, 6, 7],
       [1, 2, 3, 0, 5, 6, 7, 4]])
"""

from __future__ import annotations

import numpy as np

from ..options import AlgoOptions
from ..plan import Plan, blocks, no_deps
from ..trees import Tree, _tree, broadcast_down, double_binary_trees, reduce_up

__all__ = ["ring_orders", "node_trees", "multi_ring", "multi_tree"]


def ring_orders(members: np.ndarray, channels: int) -> np.ndarray:
    """(channels, G L) ring orders: channel h visits node k's ranks from local index
    ``h mod L`` on, node after node (``members``: (G, L) ranks of each node)."""
    G, L = members.shape
    local = (np.arange(L)[None, :] + np.arange(channels)[:, None]) % L      # (C, L)
    return members[:, local].transpose(1, 0, 2).reshape(channels, G * L)


def node_trees(members: np.ndarray, channel: int) -> tuple[Tree, Tree]:
    """The two trees of one channel: NCCL's double binary tree over the nodes, each node a
    chain hanging from its head (local index ``channel mod L``), heads joined node to
    node."""
    G, L = members.shape
    n = G * L
    chains = members[:, (np.arange(L) + channel) % L]                        # (G, L)
    out = []
    for node_tree in double_binary_trees(G) if G > 1 else (_tree(0, [-1]),) * 2:
        parent = [-1] * n
        for k in range(G):
            for i in range(1, L):
                parent[int(chains[k, i])] = int(chains[k, i - 1])
            up = node_tree.parent[k]
            if up >= 0:
                parent[int(chains[k, 0])] = int(chains[up, 0])
        out.append(_tree(int(chains[node_tree.root, 0]), parent))
    return out[0], out[1]


def multi_ring(op: str, members: np.ndarray, size: float, channels: int,
               options: AlgoOptions, *, reduce_scatter: bool, all_gather: bool):
    """``channels`` rings side by side (:func:`ring_orders`), each with 1/channels of every
    rank's block, ``options.chunks`` slices per chunk."""
    n = members.size
    c = options.chunks or 1
    plan = Plan(op, n, size, n * channels * c, options)
    rings = ring_orders(members, channels)
    owners = blocks(n, channels * c)
    pieces = np.stack([owners[rings[h], h * c:(h + 1) * c] for h in range(channels)])
    _pipelined_ring_steps(plan, rings, pieces, reduce_scatter=reduce_scatter,
                          all_gather=all_gather)
    return plan.build()


def _pipelined_ring_steps(plan: Plan, rings: np.ndarray, chunk_pieces: np.ndarray, *,
                          reduce_scatter: bool, all_gather: bool) -> None:
    """Ring steps as :func:`..rings.ring_steps` orders them (position i forwards chunk
    (i - s - 1) mod k while reducing, (i - s) mod k while gathering), each send waiting only
    for the data it forwards. A position does not wait for its previous send to land:
    NCCL keeps several steps of a channel in flight (``NCCL_STEPS`` buffers per peer), so
    a network hop's latency delays the data that crosses it, not every later step of the
    GPU that sends it."""
    R, k = rings.shape
    src = rings.ravel()
    dst = np.roll(rings, -1, axis=1).ravel()
    ring_of = np.repeat(np.arange(R), k)
    position = np.tile(np.arange(k), R)
    nbytes = chunk_pieces.shape[2] * plan.piece_bytes
    after = no_deps(R * k)
    phases = [True] * (k - 1) * reduce_scatter + [False] * (k - 1) * all_gather
    for step, reducing in enumerate(phases):
        s = step - (k - 1) if reduce_scatter and not reducing else step
        chunk = (position - s - 1) % k if reducing else (position - s) % k
        ids = plan.sends(src, dst, pieces=lambda chunk=chunk: chunk_pieces[ring_of, chunk],
                         nbytes=nbytes, deps=[after])
        got = plan.reduce(dst, ids, nbytes, None) if reducing else ids
        after = np.roll(got.reshape(R, k), 1, axis=1).ravel()


def multi_tree(members: np.ndarray, size: float, channels: int, options: AlgoOptions):
    """All-reduce over ``channels`` x 2 trees (:func:`node_trees`), each reducing up and
    broadcasting down its share of the buffer in ``options.chunks`` pipelined chunks."""
    n = members.size
    c = options.chunks or 1
    plan = Plan("allreduce", n, size, 2 * channels * c, options)
    trees = []
    for h in range(channels):
        for t, tree in enumerate(node_trees(members, h)):
            first = (2 * h + t) * c
            trees.append((tree, [np.array([first + j]) for j in range(c)]))
    ready = no_deps(n)
    at_root = reduce_up(plan, trees, ready)
    broadcast_down(plan, trees, at_root, ready)
    return plan.build()
