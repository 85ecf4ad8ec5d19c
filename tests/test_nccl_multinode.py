"""NCCL's model across nodes: the tuner's choice against tuning.cc's formulas worked by hand,
the rings and trees NCCL builds across nodes, and the one-line refusals."""

import numpy as np
import pytest

from netsim.algorithms import AlgoOptions, build_schedule
from netsim.algorithms.nccl import NcclView, candidates, choose, nccl_view
from netsim.algorithms.nccl.multinode import node_trees, ring_orders
from netsim.algorithms.nccl.tuning import net_graph
from netsim.algorithms.verify import flow_problems, verify
from netsim.errors import InputError
from netsim.run import run_collective
from netsim.topology import parse_topology

# 2 x DGX H100: 16 ranks, 8 NICs of 400 Gb/s (50 GB/s as NCCL reads them), 18 NVLinks of
# 20.6 GB/s (SM90_NVLINK_BW) per GPU, NVLink SHARP in each node.
TWO = NcclView(ranks=16, arch="hopper", gpu_bw=18 * 20.6, nvls=True, nodes=2, nics=8,
               nic_bw=50.0)
GiB = 1 << 30


def _time(view, op, algorithm, protocol, size):
    return next(c.time_us for c in candidates(op, view, size)
                if (c.algorithm, c.protocol) == (algorithm, protocol))


def test_graph_is_one_channel_per_nic_at_the_inter_node_speed_that_fits():
    # sm90SpeedArrayInter: 48 > 370.8 / 8, 45 fits; no doubling under 50 GB/s with > 4 ch
    assert net_graph(TWO) == (8, 45.0)
    # NVLS heads: 8 x 48 <= 370.8 x 8 / 7
    assert net_graph(TWO, "nvls_tree") == (8, 48.0)


def test_ring_simple_time_is_tuning_cc_worked_by_hand():
    # busBw 8 x 45 = 360, x nRanks / nSteps = 16 / 30; latency: base 8.4, 28 NVLink steps at
    # max(3.4, 3 x 1.0 net overhead), 2 network steps of 14 us, x 1.4 (ring plateau)
    lat = (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4
    assert _time(TWO, "allreduce", "ring", "Simple", GiB) == pytest.approx(
        lat + GiB / (1000 * 360 * 16 / 30))


def test_tree_times_are_tuning_cc_worked_by_hand():
    # Simple: min(360 x .92, 8 x 41.4) / 2; latency 8.4 + 2 (7 x 4.0 + log2(2) x 14)
    assert _time(TWO, "allreduce", "tree", "Simple", GiB) == pytest.approx(
        8.4 + 2 * (7 * 4.0 + 14.0) + GiB / (1000 * 331.2 / 2))
    # LL at 1 KiB: min(331.2 / 3.8, llMaxBw Intel 2 nodes 39.0) / 2, correction .9 (2^4 x 64 B)
    assert _time(TWO, "allreduce", "tree", "LL", 1024) == pytest.approx(
        6.8 + 2 * (7 * 0.6 + 5.0) + 1024 / (1000 * 39.0 / 2 * 0.9))


def test_nvls_tree_rating_uses_the_two_node_doubling_and_its_cap():
    # min(48 x .85 x 7/8 x 2, 48 x 2, perChMaxNVLSTreeBw 57.7) x 8 channels x 16 / 30
    bw = 8 * min(48 * 0.85 * 7 / 8 * 2, 96.0, 57.7) * 16 / 30
    assert _time(TWO, "allreduce", "nvls_tree", "Simple", GiB) == pytest.approx(
        25.0 + 2 * 20.9 + GiB / (1000 * bw))


def test_choice_by_size_follows_the_formulas():
    assert (choose("allreduce", TWO, 1024).algorithm, choose("allreduce", TWO, 1024).protocol) \
        == ("tree", "LL")
    assert choose("allreduce", TWO, GiB).algorithm == "nvls_tree"
    without_nvls = NcclView(**{**TWO.__dict__, "nvls": False})
    best = choose("allreduce", without_nvls, GiB)
    assert (best.algorithm, best.protocol, best.channels) == ("ring", "Simple", 8)
    # NVLS alone needs CollNet across nodes: never offered
    assert all(c.algorithm != "nvls" for c in candidates("allgather", TWO, GiB))


def test_view_of_the_preset_reads_nics_and_nvlink():
    options = AlgoOptions(topology=parse_topology("dgx-h100-cluster:nodes=2"))
    view = nccl_view(16, options)
    assert (view.nodes, view.nics, view.arch) == (2, 8, "hopper")
    assert view.nic_bw == pytest.approx(50.0)
    assert view.gpu_bw == pytest.approx(370.8)
    assert nccl_view(8, options).nodes == 1      # one node: the one-domain model


def test_ring_crosses_each_node_boundary_once_per_channel():
    members = np.arange(32).reshape(4, 8)
    rings = ring_orders(members, 8)
    node = rings // 8
    crossings = node != np.roll(node, -1, axis=1)
    assert crossings.sum(axis=1).tolist() == [4] * 8          # G boundaries, each once
    senders = rings[crossings]
    receivers = np.roll(rings, -1, axis=1)[crossings]
    # over the channels every GPU's NIC sends once and receives once
    assert sorted(senders.tolist()) == list(range(32))
    assert sorted(receivers.tolist()) == list(range(32))
    assert all(sorted(r.tolist()) == list(range(32)) for r in rings)


def test_tree_is_chains_under_a_double_binary_tree_of_nodes():
    members = np.arange(32).reshape(4, 8)
    for h in range(8):
        for tree in node_trees(members, h):
            depth = {tree.root: 0}
            for r in tree.top_down():
                for child in tree.children[r]:
                    depth[child] = depth[r] + 1
            assert len(depth) == 32
            # 7 chain hops plus the node tree's depth (in-order tree over 4 nodes: 2)
            assert max(depth.values()) == 7 + 2
            cross = [r for r in range(32) if tree.parent[r] >= 0
                     and tree.parent[r] // 8 != r // 8]
            assert len(cross) == 3 and all(r % 8 == h for r in cross)   # heads on NIC h


@pytest.mark.parametrize("op,algorithm", [("allreduce", "ring"), ("allreduce", "tree"),
                                          ("broadcast", "ring"), ("reduce", "ring"),
                                          ("allgather", "ring"), ("reducescatter", "ring")])
def test_multi_node_schedules_are_correct(op, algorithm):
    options = AlgoOptions(topology=parse_topology("dgx-h100-cluster:nodes=2"), root=3,
                          extra={"nccl_algorithm": algorithm})
    schedule = build_schedule(op, "nccl", 16, 1 << 20, options)
    verify(schedule, op, 16)
    assert schedule.meta["record"]["nccl_algorithm"] == algorithm


def _nvls_tree(nodes: int, *, annotate: bool):
    """NVLS tree all-reduce of 1 MiB in 2 chunks on ``nodes`` DGX H100."""
    options = AlgoOptions(topology=parse_topology(f"dgx-h100-cluster:nodes={nodes}"),
                          extra={"nccl_algorithm": "nvls_tree", "annotate": annotate},
                          chunks=2)
    schedule = build_schedule("allreduce", "nccl", 8 * nodes, 1 << 20, options)
    assert schedule.meta["record"]["nccl_algorithm"] == "nvls_tree"
    return schedule


@pytest.mark.parametrize("nodes", [2, 4])
def test_nvls_tree_delivers_every_rank_its_data(nodes):
    # NVLS's reduction replaces a head's copy with the switch's sum (ld_reduce reads the
    # head's own copy too), which the symbolic check counts twice: the flow check applies
    assert flow_problems(_nvls_tree(nodes, annotate=False), "allreduce", 8 * nodes) == []


@pytest.mark.parametrize("nodes", [3, 4])
def test_nvls_tree_broadcasts_a_half_only_after_the_whole_tree_reduced_it(nodes):
    # Across more than 2 nodes each half of a slice goes up one tree of nodes and back
    # down: every send down the tree must follow (in the DAG) every send up of its piece.
    # (Its root once waited for its own partial only, so the broadcast ran beside the
    # reduction: 1 MiB on 3 nodes simulated 17% fast.)
    from netsim.algorithms.trees import double_binary_trees

    n = 8 * nodes
    schedule = _nvls_tree(nodes, annotate=True)
    trees = double_binary_trees(nodes)
    ancestors = [0] * schedule.num_ops                  # bitsets of op ids
    for op in range(schedule.num_ops):                  # ops are in an order of the DAG
        for d in schedule.deps(op):
            ancestors[op] |= ancestors[d] | (1 << int(d))
    up: dict[int, list[int]] = {}
    down: dict[int, list[int]] = {}
    for op in np.flatnonzero((schedule.kind == 0) & (schedule.src < n) & (schedule.dst < n)
                             & (schedule.src // 8 != schedule.dst // 8)):
        (piece, _), = schedule.data[int(op)]
        a, b = int(schedule.src[op]) // 8, int(schedule.dst[op]) // 8
        tree = trees[piece % 2]                         # the half's tree of nodes
        (up if tree.parent[a] == b else down).setdefault(piece, []).append(int(op))
        assert tree.parent[a] == b or tree.parent[b] == a
    assert up and up.keys() == down.keys()
    for piece, sent_down in down.items():
        needed = sum(1 << op for op in up[piece])
        assert all(ancestors[op] & needed == needed for op in sent_down), piece


def test_ring_is_bound_by_the_nics_and_nvls_tree_goes_beyond():
    options = AlgoOptions(extra={"nccl_algorithm": "ring"})
    ring = run_collective("allreduce", "dgx-h100-cluster:nodes=2", "nccl", "256MiB",
                          options=options)
    assert ring.record()["nccl"].startswith("ring/")
    # every byte of the ring crosses one NIC per channel: busbw at most 8 x 47 GB/s payload
    assert 0.5 * 376 < ring.busbw_GBps <= 376 * 1.001
    # NVLS tree on 2 nodes sends S/8 per NIC and direction where the ring sends 2 (n-1)/n S/8;
    # at 256 MiB, where its loop's fill is small beside the transfer (NVIDIA/nccl-tests#309:
    # 388 GB/s busbw against 371 with the ring forced; at 64 MiB the ring was faster)
    nvls = run_collective("allreduce", "dgx-h100-cluster:nodes=2", "nccl", "256MiB")
    assert nvls.record()["nccl"].startswith("nvls_tree/")
    assert nvls.time_s < ring.time_s


@pytest.mark.parametrize("nodes", [2, 4])
def test_nvls_tree_crosses_nodes_with_one_slice_per_nic(nodes):
    n, size = 8 * nodes, float(1 << 24)
    options = AlgoOptions(topology=parse_topology(f"dgx-h100-cluster:nodes={nodes}"),
                          extra={"nccl_algorithm": "nvls_tree"}, chunks=2)
    schedule = build_schedule("allreduce", "nccl", n, size, options)
    sends = schedule.kind == 0
    src, dst = schedule.src[sends], schedule.dst[sends]
    across = (src < n) & (dst < n) & (src // 8 != dst // 8)
    # heads only talk to the heads of their own slice (same local index): their own NIC
    assert np.all(src[across] % 8 == dst[across] % 8)
    moved = schedule.nbytes[sends][across].sum()
    # each slice (S/8) goes up and down the node trees: 2 (G - 1) edges x S/8 per slice
    # (2 nodes: the two heads exchange, 2 x S/8 per slice)
    assert moved == pytest.approx(8 * 2 * (nodes - 1) * size / 8)
    # the switches of every node are extra ranks, reducing and multicasting
    assert len(schedule.extra_nodes) == nodes * 4


def test_refusals_are_one_line():
    with pytest.raises(InputError, match="same number of ranks per node"):
        run_collective("allreduce", "dgx-h100-cluster", "nccl", "1MiB", ranks=12)
    # NVLS alone needs CollNet (SHARP) across nodes
    options = AlgoOptions(topology=parse_topology("dgx-h100-cluster:nodes=2"),
                          extra={"nccl_algorithm": "nvls"})
    with pytest.raises(InputError, match="NCCL has no allreduce with algorithm=nvls "):
        build_schedule("allreduce", "nccl", 16, 1 << 20, options)


def test_one_node_of_the_cluster_is_a_dgx_h100():
    # the NICs do not count in NCCL's NVLink figure: one node runs as the one-node preset
    one = run_collective("allreduce", "dgx-h100-cluster", "nccl", "1MiB", ranks=8)
    alone = run_collective("allreduce", "dgx-h100", "nccl", "1MiB")
    assert one.record()["nccl"] == alone.record()["nccl"]
    assert one.time_s == pytest.approx(alone.time_s, rel=1e-12)


def test_nvls_tree_chunk_follows_nccls_rule():
    # enqueue.cc (NVLS_TREE): 128 KiB chunks (NCCL_NVLS_CHUNKSIZE), 64 KiB from 4 nodes
    # (treeMaxChunkSize), halved while the size is under 4 / 1 x channels x heads x chunk,
    # with 16 NVLS channels x 8 heads on DGX H100 nodes
    from netsim.algorithms.nccl.multinode import nvls_tree_chunk_size, nvls_tree_iteration_bytes
    from netsim.algorithms.nccl.tuning import NcclView

    def view(nodes):
        return NcclView(ranks=8 * nodes, nodes=nodes, nics=8, nic_bw=50.0, nvls=True)

    MiB = 1 << 20
    assert [nvls_tree_chunk_size(s * MiB, view(2)) for s in (4, 8, 63, 64, 8192)] == \
        [32768, 65536, 65536, 131072, 131072]
    assert {nvls_tree_chunk_size(s * MiB, view(g)) for s in (8, 64, 8192) for g in (4, 8)} \
        == {65536}
    assert nvls_tree_chunk_size(4 * MiB, view(8)) == 32768
    assert nvls_tree_iteration_bytes(1 << 30, view(2)) == 16 * 8 * 131072
    assert nvls_tree_iteration_bytes(1 << 20, view(2)) == 1 << 20


@pytest.mark.parametrize("nodes", [4, 8])
def test_default_curve_has_no_drop_where_nccl_switches_to_nvls_tree(nodes):
    # NVIDIA/nccl-tests#309 (4 and 8 x 8 H100): time grows with the size through 4-32 MiB,
    # where NCCL's tuner moves from tree LL128 to NVLS tree; NVLS tree's loop fills its
    # pipeline over iterations of 16 channels x 8 heads x 64 KiB, so it is not faster at
    # 16 MiB than tree at 8 MiB
    times = [run_collective("allreduce", f"dgx-h100-cluster:nodes={nodes}", "nccl",
                            f"{s}MiB").time_s for s in (8, 16)]
    assert times[1] > times[0]
