"""NCCL's schedules across nodes: one ring per channel, trees of chains, NVLS tree.

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
* **NVLS tree** (:func:`nvls_tree`): NVLS inside every node (the GPUs' copies reduced by
  the node's NVSwitches into the slice's head, results multicast back), the heads of a
  slice joined across nodes through their own NICs.

Ranks are grouped by node (``options.groups`` or the topology's ``meta['groups']``); all
nodes must hold the same number of ranks, as NCCL's multi-node graphs assume.

>>> import numpy as np
>>> ring_orders(np.arange(8).reshape(2, 4), 2)
array([[0, 1, 2, 3, 4, 5, 6, 7],
       [1, 2, 3, 0, 5, 6, 7, 4]])
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..options import AlgoOptions
from ..plan import Plan, blocks, no_deps, serial_computes
from ..trees import Tree, _tree, broadcast_down, chain_tree, double_binary_trees, reduce_up
from .tuning import _NVLS_MAX_ARITY, NVLS_CHANNELS, NVLS_FILL_STAGES, NcclView

__all__ = ["ring_orders", "node_trees", "multi_ring", "multi_tree", "multi_chain", "nvls_tree",
           "nvls_tree_chunk_size", "nvls_tree_iteration_bytes", "nvls_tree_fill_stages",
           "nvls_tree_fill"]

#: NVLS tree's largest chunk from 4 nodes on (bytes): enqueue.cc / transport/nvls.cc
#: (NCCL 2.26-2.30) cap NCCL_NVLS_CHUNKSIZE at ``nNodes >= 4 ? 65536 : chunkSize`` unless
#: NCCL_NVLS_TREE_MAXCHUNKSIZE is set (Blackwell's own multi-node tuning aside).
NVLS_TREE_MAX_CHUNK_4_NODES = 64 * 1024
#: Loop iterations each network hop of NVLS tree adds to the loop's fill, beyond the
#: one-node NVLS loop's :data:`.tuning.NVLS_FILL_STAGES`. A hop is one of NCCL's
#: ``2 log2(nodes)`` network steps of NVLS tree (tuning.cc's latency: up and down the tree
#: of nodes): the heads send a chunk across only once the node's switches have reduced it,
#: and multicast it only once it came back, so every hop holds the pipeline for part of an
#: iteration. FITTED on the nccl-tests curves of NVIDIA/nccl-tests#309 (8 x H100 nodes on
#: IB 400G, benchmarks/data/nvidia_h100_*node*_nccl309_*.csv: two clusters on 2 nodes, two
#: on 4, one on 8): their time above netsim's without this fill, in iterations at NCCL's
#: NVLS tree rate, from 16 to 256 MiB is 1.8-2.7 on 2 nodes (median 2.6), 2.0-4.8 on 4
#: (3.2; one cluster's dip at 256 MiB left out) and 4.2-5.3 on 8 (4.4); with the one-node
#: 1.2 kept, least squares over the three medians gives 0.53 a hop (2.3, 3.3 and 4.4).
#: (0.63 before the tree's root waited for the reduction up the tree: 4 and 8 nodes then
#: ran their broadcast beside it, and the fill made up for it.)
NVLS_TREE_FILL_PER_HOP = 0.5


def nvls_tree_chunk_size(size: float, view: NcclView) -> int:
    """Bytes per NVLS tree chunk for an all-reduce of ``size`` bytes (enqueue.cc, NVLS_TREE
    branch): NCCL_NVLS_CHUNKSIZE (128 KiB), capped at 64 KiB from 4 nodes
    (:data:`NVLS_TREE_MAX_CHUNK_4_NODES`), then halved to 64 / 32 KiB while the size is under
    4 / 1 times channels x heads x chunk.

    >>> two = NcclView(ranks=16, nodes=2, nics=8, nic_bw=50.0, nvls=True)
    >>> [nvls_tree_chunk_size(s << 20, two) for s in (4, 8, 32, 64, 1024)]
    [32768, 65536, 65536, 131072, 131072]
    >>> nvls_tree_chunk_size(1 << 30, NcclView(ranks=64, nodes=8, nics=8, nic_bw=50.0))
    65536
    """
    concurrent = _nvls_tree_concurrent(view)
    chunk = view.nvls_chunk
    if view.nodes >= 4:
        chunk = min(chunk, NVLS_TREE_MAX_CHUNK_4_NODES)
    for factor, smaller in ((32, 262144), (16, 131072), (4, 65536), (1, 32768)):
        if size < factor * concurrent * chunk and chunk > smaller:
            chunk = smaller
    return chunk


def _nvls_tree_concurrent(view: NcclView) -> int:
    """Chunks in flight per loop iteration: NCCL launches NVLS tree on ``comm->nvlsChannels``
    (enqueue.cc; 16 on Hopper), each moving one chunk per head (the node's GPUs)."""
    heads = min(_NVLS_MAX_ARITY, max(1, view.ranks // max(view.nodes, 1)))
    return NVLS_CHANNELS[view.arch] * heads


def nvls_tree_iteration_bytes(size: float, view: NcclView) -> float:
    """Bytes of the op one iteration of NCCL's NVLS tree loop moves (channels x heads x
    chunk, enqueue.cc's ``loopSize``), at most ``size``.

    >>> two = NcclView(ranks=16, nodes=2, nics=8, nic_bw=50.0, nvls=True)
    >>> nvls_tree_iteration_bytes(1 << 30, two) / 2**20     # 16 channels x 8 heads x 128 KiB
    16.0
    """
    return min(float(size), _nvls_tree_concurrent(view) * nvls_tree_chunk_size(size, view))


def nvls_tree_fill_stages(view: NcclView) -> float:
    """Loop iterations NVLS tree's pipeline takes to fill and drain: the one-node NVLS
    loop's (:data:`.tuning.NVLS_FILL_STAGES`) plus :data:`NVLS_TREE_FILL_PER_HOP` for each
    of the ``2 log2(nodes)`` network hops NCCL's tuner counts (tuning.cc).

    >>> [round(nvls_tree_fill_stages(NcclView(ranks=8 * g, nodes=g)), 2) for g in (2, 4, 8)]
    [2.2, 3.2, 4.2]
    """
    hops = 2 * int(math.log2(max(view.nodes, 1)))
    return NVLS_FILL_STAGES + NVLS_TREE_FILL_PER_HOP * hops


def nvls_tree_fill(size: float, view: NcclView, rate_GBps: float) -> float:
    """Seconds NCCL's NVLS tree loop spends filling and draining its pipeline for an
    all-reduce of ``size`` bytes: :func:`nvls_tree_fill_stages` iterations of
    :func:`nvls_tree_iteration_bytes` at ``rate_GBps`` (GB/s of the op's size: NCCL's own
    NVLS tree bandwidth, within 12% of the measured plateaus of 2, 4 and 8 nodes). The
    engine's schedule pipelines far finer chunks than NCCL's loop, so it has almost no
    fill of its own; this adds the loop's.

    >>> two = NcclView(ranks=16, nodes=2, nics=8, nic_bw=50.0, nvls=True)
    >>> round(nvls_tree_fill(1 << 30, two, 246.2) * 1e6, 1)    # 2.2 x 16 MiB at 246.2 GB/s
    149.9
    """
    if rate_GBps <= 0:
        return 0.0
    return nvls_tree_fill_stages(view) * nvls_tree_iteration_bytes(size, view) / (rate_GBps * 1e9)


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


def nvls_tree(members: np.ndarray, size: float, switches: list[list[int]],
              options: AlgoOptions):
    """NVLS tree all-reduce: NVLS inside every node, a tree of the heads across nodes.

    The buffer is cut into L slices (one per local index c, the head that owns it), each
    in two halves, x P planes (the node's reducing switches, ``switches[k]``: node
    indices) x ``options.chunks`` pipelined chunks. For every chunk: every GPU of node k
    sends its copy of each slice to the plane's switch, which reduces them (one piece at a
    time at its ``reduce_bandwidth``) and sends the node's partial to head c
    (``multimem.ld_reduce``); the heads of slice c all-reduce across nodes through their
    NICs (2 nodes: they exchange partials, as NCCL's two trees do together; more: each half
    of a slice goes up and down one of NCCL's two binary trees of nodes, so every node is
    inner in one tree and a leaf in the other); then head c stores the result on the
    switch, which multicasts it to the node's GPUs (``multimem.st``). Chunk j of every
    stream follows chunk j-1."""
    G, L = members.shape
    P = len(switches[0])
    C = options.chunks or 1
    n = G * L
    plan = Plan("allreduce", n, size, L * P * C * 2, options, extra_ranks=G * P)
    topo = options.topology
    node_tree_pair = double_binary_trees(G) if G > 2 else None
    last: dict[tuple, np.ndarray | int] = {}

    def after(key, shape=()):
        return last.get(key, np.full(shape, -1, dtype=np.int64) if shape else -1)

    rates = np.array([[float(topo.node_attrs[sw].get("reduce_bandwidth") or 0.0)
                       for sw in row] for row in switches])          # (G, P) B/s, 0: none
    ranks = members.ravel()                                         # node by node
    for j in range(C):
        for s in range(P):
            # slice c of plane s, in two halves (one per tree of nodes): (L, 2) piece ids
            piece = ((np.arange(L) * P + s) * C + j)[:, None] * 2 + np.arange(2)
            sw = n + np.arange(G) * P + s                           # every node's switch
            # every GPU of every node sends its copy of each slice to its node's switch
            up = plan.sends(np.repeat(ranks, L), np.repeat(sw, L * L),
                            pieces=np.tile(piece, (G * L, 1)),
                            deps=after(("up", s), G * L * L))
            last[("up", s)] = up
            copies = up.reshape(G, L, L).transpose(0, 2, 1).reshape(G * L, L)  # row: slice
            reducing = rates[:, s] > 0
            if reducing.any():                  # the switch reduces one piece at a time
                rows = np.repeat(reducing, L)
                alu = after(("alu", s), G).copy()       # each switch's last reduction
                done = serial_computes(plan, sw[reducing],
                                       plan.piece_bytes / rates[reducing, s],
                                       copies[rows], alu[reducing])
                alu[reducing] = done.reshape(-1, L)[:, -1]
                last[("alu", s)] = alu
                reduced = np.full((G * L, L), -1, dtype=np.int64)
                reduced[rows, 0] = done
                reduced[~rows] = copies[~rows]
                copies = reduced
            down = plan.sends(np.repeat(sw, L), ranks, pieces=np.tile(piece, (G, 1)),
                              deps=[copies, after(("down", s), G * L)])
            last[("down", s)] = down
            partial = down.reshape(G, L)
            final = _across_nodes(plan, members, piece, partial, node_tree_pair, after, last, s)
            stored = plan.sends(ranks, np.repeat(sw, L), pieces=np.tile(piece, (G, 1)),
                                deps=[final.ravel(), down, after(("store", s), G * L)])
            last[("store", s)] = stored
            cast = plan.sends(np.repeat(sw, L * L), np.tile(members, L).ravel(),
                              pieces=np.tile(np.repeat(piece, L, axis=0), (G, 1)),
                              deps=[np.repeat(stored, L), after(("cast", s), G * L * L)])
            last[("cast", s)] = cast
    return replace(plan.build(), extra_nodes=tuple(int(sw) for row in switches for sw in row))


def _across_nodes(plan: Plan, members: np.ndarray, piece: np.ndarray, partial: np.ndarray,
                  trees, after, last, s: int) -> np.ndarray:
    """All-reduce of every slice among its heads (one per node); returns (G, L) op ids
    after which head c of node k holds slice c reduced over every node."""
    G, L = members.shape
    final = partial.copy()
    if G == 1:
        return final
    if G == 2:
        # both heads send their partial at once (one block: neither carries the other's)
        sent = plan.sends(members.ravel(), members[::-1].ravel(),
                          pieces=np.tile(piece, (2, 1)),
                          deps=[partial.ravel(), after(("net", s), 2 * L)])
        last[("net", s)] = sent
        return sent.reshape(2, L)[::-1].copy()
    halves = []
    for t, tree in enumerate(trees):            # each tree all-reduces one half of a slice
        # every slice c at once (its heads, members[:, c], form the same tree of nodes),
        # and every node of one depth at once: up from the deepest, then down from the root
        half = piece[:, t:t + 1]
        parent = np.asarray(tree.parent)
        depth = np.zeros(G, dtype=np.int64)
        for k in tree.top_down()[1:]:
            depth[k] = depth[parent[k]] + 1
        done = partial.copy()
        sent_up = np.full((G, L), -1, dtype=np.int64)
        for d in range(int(depth.max()), -1, -1):                  # reduce up
            ks = np.flatnonzero(depth == d)
            # per (node, slice): its own partial, then what each child sent up (-1: none)
            mine = np.full((ks.size, L, 1 + max(len(tree.children[k]) for k in ks)), -1,
                           dtype=np.int64)
            mine[:, :, 0] = partial[ks]
            for row, k in enumerate(ks):
                for i, child in enumerate(tree.children[k]):
                    mine[row, :, 1 + i] = sent_up[child]
            mine = mine.reshape(ks.size * L, -1)
            if d == 0:
                done[ks] = plan.barriers(mine).reshape(-1, L)
                continue
            sent = plan.sends(members[ks].ravel(), members[parent[ks]].ravel(),
                              pieces=np.tile(half, (ks.size, 1)),
                              deps=[mine, after(("net", t, d, s), ks.size * L)])
            last[("net", t, d, s)] = sent
            sent_up[ks] = sent.reshape(-1, L)
        for d in range(int(depth.max())):                          # broadcast down
            pairs = [(k, c) for k in np.flatnonzero(depth == d) for c in tree.children[k]]
            if not pairs:
                continue
            up, down = (np.array(x) for x in zip(*pairs))
            done[down] = plan.sends(members[up].ravel(), members[down].ravel(),
                                    pieces=np.tile(half, (up.size, 1)),
                                    deps=done[up].ravel()).reshape(-1, L)
        halves.append(done)
    final = plan.barriers(np.stack([halves[0].ravel(), halves[1].ravel()], axis=1))
    final = final.reshape(G, L)
    return final


def multi_chain(op: str, members: np.ndarray, size: float, channels: int,
                options: AlgoOptions):
    """Broadcast or reduce over ``channels`` chains side by side: channel h's ring
    (:func:`ring_orders`) cut at the root, carrying 1/channels of the buffer in
    ``options.chunks`` pipelined chunks (NCCL's ring broadcast/reduce, one per channel)."""
    n = members.size
    c = options.chunks or 1
    plan = Plan(op, n, size, channels * c, options)
    root = int(options.root)
    trees = []
    for h, ring in enumerate(ring_orders(members, channels)):
        order = np.roll(ring, -int(np.flatnonzero(ring == root)[0]))
        trees.append((chain_tree(order), [np.array([h * c + j]) for j in range(c)]))
    if op == "broadcast":
        broadcast_down(plan, trees, None, no_deps(n))
    else:
        reduce_up(plan, trees, no_deps(n))
    return plan.build()
