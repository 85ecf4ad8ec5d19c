"""``--algo nccl``: pick as NCCL would, then run the pick through netsim's engine.

For a collective of S bytes the builder

1. describes the machine as NCCL's tuner sees it (:func:`nccl_view`: ranks, GPU
   generation, a GPU's NVLink bandwidth, whether a switch reduces in-network);
2. asks NCCL's cost model (:mod:`.tuning`) for the (algorithm, protocol) with the smallest
   predicted time and the channel count NCCL would launch;
3. builds the netsim algorithm that moves the same bytes over the same links (ring ->
   ``ring``, tree -> ``dbtree``, NVLS -> ``innetwork``; broadcast/reduce ring -> ``chain``)
   and applies the protocol: every send carries ``1 / efficiency`` bytes on the wire (LL
   moves 4 B of data per 8 B line, LL128 120 B per 128 B line), every message costs the
   protocol's per-step latency at the sender (``hwLat``) instead of the preset's alpha,
   and every rank first spends the algorithm's base latency (``baseLat``);
4. runs, beside the collective, the host time spent enqueuing one iteration
   (:mod:`.harness`: one launch per GPU a thread drives; by default one, a process per
   GPU as frameworks run NCCL; nccl-tests ``-g N`` drives N), so the time is the larger
   of the two, as nccl-tests measures it with back-to-back launches.

Across nodes (ranks in several of the topology's ``meta['groups']``, as many in each) the
tuner uses NCCL's multi-node rows and the schedules of :mod:`.multinode`: one ring per
NIC channel, trees of chains under a double binary tree of nodes, NVLS tree.

The network part (link rates, sharing, the NVSwitch reduction rate) stays the engine's;
only NCCL's software costs come from the tuner. The schedule's ``meta["record"]`` carries
what NCCL chose (``nccl_algorithm``, ``protocol``, ``channels``, ``nccl_model_s``: the
tuner's own prediction), which the collective runner copies into its records.

Options (``AlgoOptions.extra``): ``nccl_algorithm`` / ``nccl_protocol`` force a choice
(as ``NCCL_ALGO`` / ``NCCL_PROTO`` do), ``gpu_arch`` overrides the GPU generation that
is otherwise read from the preset's name (hopper when unknown), ``gpus_per_thread`` the
GPUs one host thread enqueues for (default 1, one process per GPU; N for nccl-tests
``-g N``, at most the GPUs of one host, :data:`GPUS_PER_HOST`; 0 for the device time
alone). ``options.chunks`` above 1 sets
the pipeline depth of an NVLS or tree pick; without it NVLS all-reduce on one node runs
NCCL's loop: chunks cut as NCCL cuts them (``enqueue.cc``: 16-128 KiB by size), each with
a fixed time at the switches (:func:`.tuning.nvls_reduce_factor`), and the loop's fill
(:data:`.tuning.NVLS_FILL_STAGES` iterations) beside a deep engine pipeline.
``nvls_rate`` says how the tuner rates NVLS all-reduce: "simulated" (default), at the
larger of NCCL's formula and the rate netsim's own in-switch reduction reaches (less its
pipeline fill), so the pick does not leave NVLS where the engine runs it faster; "tuner",
NCCL's formula alone (:data:`NVLS_RATES`). ``nccl_version`` ("2.26.2", or a version code
22602 as nccl-tests prints it) picks with that release's tuner where its NVLS and NVLS-tree
ratings differ from 2.30.7's (:func:`.tuning.parse_nccl_version`; releases 2.19 to 2.30):
older releases leave tree LL128 for NVLS tree at smaller sizes across nodes.

>>> from netsim.topology import parse_topology
>>> from netsim.algorithms import AlgoOptions, build_schedule
>>> topo = parse_topology("dgx-h100")
>>> s = build_schedule("allreduce", "nccl", 8, 1 << 30, AlgoOptions(topology=topo))
>>> s.meta["record"]["nccl_algorithm"], s.meta["record"]["protocol"]
('nvls', 'Simple')
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...errors import InputError
from ...schedule import Schedule, ScheduleBuilder, concurrent, sequential
from ...schedule.ir import COMPUTE
from ..options import AlgoOptions
from ..registry import default_chunks, get_algorithm, register
from .harness import host_time
from .multinode import multi_chain, multi_ring, multi_tree, nvls_tree, nvls_tree_fill
from .tuning import (ALGORITHMS, ARCHS, BASE_LATENCY_US, CPU_VENDORS, HW_LATENCY_US,
                     NVLS_CHANNELS, NVLS_CHUNK_SIZE, NVLS_FILL_STAGES, PROTOCOLS, Choice,
                     NCCL_VERSION, NcclView, candidates, nvls_copy_share, nvls_iteration_share,
                     nvls_pipeline_depth, parse_nccl_version, version_text,
                     nvls_reduce_factor, protocol_efficiency)

__all__ = ["nccl_view", "nccl_choice", "gpus_per_thread", "nvls_allreduce_rate",
           "NCCL_NVLINK_SHARE", "STEP_LATENCY_SCALE", "PROTOCOL_RATE_SCALE",
           "NETSIM_ALGORITHM", "GPU_ARCH_OF_PRESET", "GPUS_PER_HOST", "NVLS_RATES"]

#: GPU generation of each NVIDIA preset (the tuner's tables are per generation).
GPU_ARCH_OF_PRESET = {"dgx-a100": "ampere", "dgx-h100": "hopper", "dgx-h100-cluster": "hopper",
                      "dgx-b200": "blackwell", "gb200-nvl72": "blackwell"}
#: GPUs one host drives, per preset: the most one nccl-tests thread can enqueue for (DGX:
#: 8 GPUs per server; GB200 NVL72: 4 per compute tray, 2 GB200 superchips of 1 Grace and 2
#: Blackwell each). Other topologies: at most the ranks.
GPUS_PER_HOST = {"dgx-a100": 8, "dgx-h100": 8, "dgx-h100-cluster": 8, "dgx-b200": 8,
                 "gb200-nvl72": 4}
#: NCCL algorithm -> netsim algorithm with the same traffic, per op.
NETSIM_ALGORITHM = {
    "allreduce": {"ring": "ring", "tree": "dbtree", "nvls": "innetwork",
                  "nvls_tree": "innetwork"},
    "allgather": {"ring": "ring", "nvls": "innetwork"},
    "reducescatter": {"ring": "ring", "nvls": "innetwork"},
    "broadcast": {"ring": "chain"},
    "reduce": {"ring": "chain"},
}
_US = 1e-6
_MAX_NVLS_DEPTH = 64
#: Fewest engine pipeline chunks of a one-node NVLS all-reduce, whose loop fill is added
#: to the launch: with 16 the engine's own fill (the links before the first and after the
#: last reduction) is under a tenth of the reductions' time on DGX H100, and a sweep costs
#: a third more than with NCCL's own depth (64 would cost 2.8 times as much).
_MIN_NVLS_LOOP_DEPTH = 16
#: Pipeline chunks of NVLS tree across nodes (its op count grows with G x L^2 per chunk).
_MAX_NET_NVLS_DEPTH = 16


def _preset(options: AlgoOptions, table: dict):
    name = getattr(options.topology, "name", "") or ""
    return next((value for preset, value in table.items()
                 if name == preset or name.startswith(preset + ",")), None)


def _arch(options: AlgoOptions) -> str:
    arch = options.extra.get("gpu_arch")
    if arch is None:
        arch = _preset(options, GPU_ARCH_OF_PRESET) or "hopper"
    if arch not in ARCHS:
        raise InputError(f"gpu_arch {arch!r} is not one of {', '.join(ARCHS)}")
    return arch


def _nodes(num_ranks: int, options: AlgoOptions) -> int:
    """Machines the ranks span: groups of the topology's ``meta['groups']`` they touch."""
    groups = (options.topology.meta or {}).get("groups") if options.topology is not None \
        else None
    if not groups:
        return 1
    nodes = set(options.node_of_rank(num_ranks).tolist())
    endpoints = options.topology.endpoints
    touched = {g for g, members in enumerate(groups)
               if nodes & {int(endpoints[m]) for m in members}}
    return max(1, len(touched))


#: NCCL's bandwidth per NVLink (GB/s, ``SM70/SM80/SM90/SM100_NVLINK_BW`` in NCCL's
#: ``src/graph/topo.h``) as a fraction of the link's line rate per direction (NVLink2/3/4:
#: 25 GB/s, NVLink5: 50 GB/s): 20.0 / 25, 20.0 / 25, 20.6 / 25, 40.1 / 50. NCCL's search and
#: tuner see a GPU as its links times this figure, whatever the links deliver.
NCCL_NVLINK_SHARE = {"volta": 20.0 / 25.0, "ampere": 20.0 / 25.0, "hopper": 20.6 / 25.0,
                     "blackwell": 40.1 / 50.0}


#: Per-step latency a GPU generation runs at with a protocol, as a multiple of NCCL's
#: ``hwLat`` (one table for every generation in tuning.cc; the tuner keeps it for its
#: choice, the simulated steps take this). A100 LL and Simple: 3.0, fitted on the published
#: 8 x A100 all-reduce (benchmarks/data/nvidia_a100_8gpu_allreduce_nccltests_azure_
#: inplace.csv: 1-2 MiB LL, 32-128 MiB Simple, where the measured curve sits a constant ~18
#: and ~150 us above its bandwidth term) and checked on an independent A100 sweep,
#: NVIDIA/nccl-tests#123 (ring LL, one channel, 8-128 B, -g 2 .. 8: 10.0 .. 33.7 us;
#: 6.6 us + 2 (N-1) x 1.8 us gives 10.2 .. 31.8 us, within 6%). A100 LL128 keeps NCCL's
#: figure (:data:`PROTOCOL_RATE_SCALE`). H100 and later: NCCL's figures reproduce the
#: published curves (1.0).
STEP_LATENCY_SCALE = {("ampere", "LL"): 3.0, ("ampere", "Simple"): 3.0}

#: Rate a protocol runs at on a GPU generation, as a multiple of NCCL's figure for it
#: (:func:`.tuning.protocol_efficiency`; the tuner keeps NCCL's for its choice, the simulated
#: wire carries 1 / (efficiency x this) bytes per payload byte). Both FITTED, each on the one
#: published curve where the protocol sets the time on that generation:
#:
#: * Blackwell LL, 0.82: NCCL rates it at 2 x Hopper's (``llMaxBws`` 2 x 141 GB/s). The 4 x
#:   GB200 curve of an Azure ND GB200 v6 tray (benchmarks/data/nvidia_gb200_4gpu_allreduce_
#:   nccltests_azure_ring_inplace.csv) grows by 14.5 us from 2 to 4 MiB, busbw 217 GB/s,
#:   where NCCL's figure gives 266 GB/s on netsim's links (11.8 us). Per channel that is
#:   13.6 GB/s, close to H100's LL on its 12 channels (12.1 GB/s at NCCL's 141 GB/s, which
#:   the 4-GPU H100 curve follows within 2% at 2 MiB): LL grows with the channels, not with
#:   the links' doubling.
#: * Ampere LL128, 0.60: the 8 x A100 curve above, ring LL128 from 4 to 16 MiB (NCCL's
#:   choice), lies on a line of busbw 133 GB/s with an intercept of 50 us (102.8, 163.1,
#:   268.8 us; least squares, residuals within 2%), against NCCL's 220.8 GB/s
#:   (min(0.92 x 240, 12 x 20)) and 40.6 us. With 3 x NCCL's step latency, as LL and Simple
#:   take, LL128 would start at 94 us and miss 4 MiB by +25% at any rate.
PROTOCOL_RATE_SCALE = {("blackwell", "LL"): 0.82, ("ampere", "LL128"): 0.60}


def nccl_view(num_ranks: int, options: AlgoOptions) -> NcclView:
    """NCCL's view of the ranks on ``options.topology``: GPU NVLink rate as NCCL counts it,
    the line rate of rank 0's links (the calibrated injection bandwidth over the preset's
    ``efficiency``) times :data:`NCCL_NVLINK_SHARE` (DGX H100: 450 x 20.6 / 25 = 370.8
    GB/s, 18 x ``SM90_NVLINK_BW``; DGX A100: 12 x 20.0 = 240 GB/s), independent of the
    payload rate the engine's links run at.

    >>> from netsim.topology import parse_topology
    >>> view = nccl_view(8, AlgoOptions(topology=parse_topology("dgx-a100")))
    >>> round(view.gpu_bw, 1), view.arch
    (240.0, 'ampere')
    """
    if options.topology is None:
        raise InputError("nccl needs a topology (options.topology)")
    from ..innetwork import switch_reason

    topo = options.topology
    node = int(options.node_of_rank(num_ranks)[0])
    rates = _link_rates(topo, node)
    payload, efficiency = rates["nvlink"]
    arch = _arch(options)
    gpu_bw = payload / efficiency * NCCL_NVLINK_SHARE[arch]
    nodes = _nodes(num_ranks, options)
    if nodes > 1:
        return _net_view(num_ranks, options, arch, gpu_bw, nodes, rates)
    nvls = switch_reason(num_ranks, options) is None
    rate = options.extra.get("nvls_rate", "simulated")
    if rate not in NVLS_RATES:
        raise InputError(f"nvls_rate {rate!r} is not one of {', '.join(NVLS_RATES)}")
    switches = _switch_reduce_rate(num_ranks, options) if nvls else None
    nvls_bw = (_links_or_switches(num_ranks, payload, switches)
               if nvls and rate == "simulated" else None)
    return NcclView(ranks=num_ranks, arch=arch, gpu_bw=gpu_bw, nvls=nvls,
                    nodes=_nodes(num_ranks, options), nvls_allreduce_bw=nvls_bw,
                    nvls_chunk=_nvls_chunk(options), version=_version(options),
                    # NVLS all-reduce rate of one of NCCL's NVLS channels for arch (GB/s)
                    nvls_channel_bw=switches / NVLS_CHANNELS[arch] if switches else None)


def _switch_reduce_rate(num_ranks: int, options: AlgoOptions) -> float | None:
    """The reducing switches' summed ``reduce_bandwidth`` (GB/s of reduced output; None:
    a switch has none)."""
    from ..innetwork import reducing_switches

    topo = options.topology
    rates = [topo.node_attrs[s].get("reduce_bandwidth")
             for s in reducing_switches(num_ranks, options)]
    if not rates or any(not r for r in rates):
        return None
    return sum(float(r) for r in rates) / 1e9


def _links_or_switches(num_ranks: int, gpu_bw: float, switches: float | None) -> float:
    """:func:`nvls_allreduce_rate` from the switches' summed rate (GB/s, None: links only)."""
    links = gpu_bw * num_ranks / (num_ranks + 1)
    return links if switches is None else min(links, switches)


def _nvls_chunk(options: AlgoOptions) -> int:
    """NCCL_NVLS_CHUNKSIZE (``options.extra['nvls_chunksize']``, bytes; default 128 KiB)."""
    value = options.extra.get("nvls_chunksize", NVLS_CHUNK_SIZE)
    if isinstance(value, bool) or not isinstance(value, int) or value < 16384:
        raise InputError(f"nvls_chunksize must be a whole number of bytes >= 16384, "
                         f"got {value!r}")
    return value


def _link_rates(topo, node: int) -> dict[str, tuple[float, float]]:
    """A GPU's payload rate (GB/s per direction, summed over its links) and the calibrated
    efficiency, per fabric: ``nvlink`` (links to NVSwitches or peers) and ``ib`` (links to
    a switch marked ``fabric: ib``, the GPU's NIC)."""
    calibration = (topo.meta or {}).get("calibration") or {}
    efficiency = calibration.get("efficiency") or 1.0
    out = {"nvlink": 0.0, "ib": 0.0}
    for link in np.flatnonzero(topo.link_src == node):
        dst = int(topo.link_dst[link])
        attrs = topo.node_attrs[dst] if topo.is_switch[dst] else {}
        fabric = "ib" if attrs.get("fabric") == "ib" else "nvlink"
        out[fabric] += float(topo.bandwidth[link]) / 1e9
    def eff(fabric: str) -> float:
        if isinstance(efficiency, dict):
            return float(efficiency.get(fabric) or 1.0)
        return float(efficiency)
    return {f: (rate, eff(f)) for f, rate in out.items()}


def _net_view(num_ranks: int, options: AlgoOptions, arch: str, gpu_bw: float, nodes: int,
              rates: dict) -> NcclView:
    """The multi-node view: NICs per node (the GPUs of rank 0's node with a NIC link) at
    their line rate (the calibrated payload over the ``ib`` efficiency: 400 Gb/s -> 50
    GB/s, what NCCL reads from the NIC); NVLS across nodes where the switch reduces."""
    from ..hierarchical import rank_groups
    from ..innetwork import switch_reason

    members = rank_groups(num_ranks, options)
    nic_payload, nic_eff = rates["ib"]
    if nic_payload <= 0:
        raise InputError(f"nccl: rank 0 of {options.topology.name} has no NIC link "
                         f"(a switch with fabric: ib); NCCL's multi-node model needs one")
    placed = options.node_of_rank(num_ranks)
    nics = sum(1 for r in members[0] if _link_rates(options.topology,
                                                    int(placed[r]))["ib"][0] > 0)
    cpu = options.extra.get("cpu_vendor", "intel")
    if cpu not in CPU_VENDORS:
        raise InputError(f"cpu_vendor {cpu!r} is not one of {', '.join(CPU_VENDORS)}")
    first = replace(options, placement=placed[members[0]])
    nvls = switch_reason(members.shape[1], first) is None
    return NcclView(ranks=num_ranks, arch=arch, gpu_bw=gpu_bw, nvls=nvls, nodes=nodes,
                    nics=nics, nic_bw=nic_payload / nic_eff, cpu=cpu, version=_version(options))


def _version(options: AlgoOptions) -> tuple[int, int, int]:
    """The NCCL release whose tuner picks (``options.extra['nccl_version']``: "2.26.2",
    a version code 22602 or a tuple; default :data:`.tuning.NCCL_VERSION`)."""
    value = options.extra.get("nccl_version")
    if value is None:
        return NCCL_VERSION
    if isinstance(value, tuple):
        value = version_text(value)
    try:
        return parse_nccl_version(value)
    except ValueError as err:
        raise InputError(f"nccl_version: {err}") from None


#: How the tuner rates NVLS all-reduce (``options.extra['nvls_rate']``): "simulated", NCCL's
#: formula raised to the steady state netsim's own in-switch reduction reaches
#: (:func:`nvls_allreduce_rate`, less the pipeline fill: :data:`.tuning.NVLS_FILL_STAGES`);
#: "tuner", NCCL's formula alone (``nvlsEfficiency`` x the NVLS graph's speed), which on
#: GB200 NVL72 with H100's NVLink efficiency (72 ranks) rated NVLS below the ring and left
#: it from 2 GiB (busbw 1,268 -> 681 GB/s) while the simulated NVLS was twice as fast and
#: the published curve has no such drop (benchmarks/data/nvidia_gb200_nvl72_72gpu_*.csv).
NVLS_RATES = ("simulated", "tuner")


def nvls_allreduce_rate(num_ranks: int, options: AlgoOptions, gpu_bw: float) -> float:
    """Steady-state NVLS all-reduce rate (GB/s of the op's size) of ``innetwork`` here: the
    smaller of the switches' summed reduction rate (``reduce_bandwidth``, bytes/s of
    reduced output each) and what a GPU's links carry, S (N+1)/N bytes per direction
    (``gpu_bw`` GB/s, the calibrated payload rate).

    >>> from netsim.topology import parse_topology
    >>> round(nvls_allreduce_rate(8, AlgoOptions(topology=parse_topology("dgx-h100")),
    ...                           370.0), 1)                   # 4 chips x 68.6 GB/s
    274.4
    """
    return _links_or_switches(num_ranks, gpu_bw, _switch_reduce_rate(num_ranks, options))


def nccl_choice(op: str, num_ranks: int, size: float, options: AlgoOptions) -> Choice:
    """What NCCL runs for ``op`` of ``size`` bytes (forced choices in ``options.extra``)."""
    view = nccl_view(num_ranks, options)
    algo, proto = options.extra.get("nccl_algorithm"), options.extra.get("nccl_protocol")
    if algo is not None and algo not in ALGORITHMS:
        raise InputError(f"nccl_algorithm {algo!r} is not one of {', '.join(ALGORITHMS)}")
    if proto is not None and proto not in PROTOCOLS:
        raise InputError(f"nccl_protocol {proto!r} is not one of {', '.join(PROTOCOLS)}")
    allowed = [c for c in candidates(op, view, size)
               if (algo is None or c.algorithm == algo) and (proto is None or c.protocol == proto)
               and c.algorithm in NETSIM_ALGORITHM.get(op, {})]
    if not allowed:
        raise InputError(f"NCCL has no {op} with algorithm={algo or 'any'} "
                         f"protocol={proto or 'any'} on these {num_ranks} ranks")
    return min(allowed, key=lambda c: c.time_us)   # tuning.choose's rule, over `allowed`


def gpus_per_thread(num_ranks: int, options: AlgoOptions) -> int:
    """GPUs one host thread enqueues for (``options.extra['gpus_per_thread']``).

    Default 1: one process per GPU, as training frameworks and ``mpirun -np N ...
    -g 1`` launch NCCL, so one launch (5 us) hides under the GPU time. nccl-tests
    ``-g N`` (one thread driving N GPUs, how many published full curves were run) is
    asked for with N, and holds small sizes at N x 5 us; 0 is the device time alone.
    More GPUs than the ranks, or than one host of the preset has, is refused.
    """
    value = options.extra.get("gpus_per_thread")
    if value is None:
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"gpus_per_thread must be an integer >= 0, got {value!r}")
    host = _preset(options, GPUS_PER_HOST)
    if host is not None and value > host:
        raise InputError(f"gpus_per_thread {value}: one host of "
                         f"{options.topology.name} has {host} GPUs")
    if value > num_ranks:
        raise InputError(f"gpus_per_thread {value}: more than the {num_ranks} ranks")
    return value


def _memory_bandwidth(options: AlgoOptions) -> float | None:
    """The GPU's memory bandwidth (bytes/s) from the preset's ``chip:`` block, or None."""
    chip = (options.topology.meta or {}).get("chip") or {}
    rate = chip.get("memory_bandwidth")
    return float(rate) if rate else None


def _why_not(op: str):
    def check(num_ranks: int, options: AlgoOptions) -> str | None:
        if options.topology is None:
            return "needs a topology"
        if num_ranks < 1:
            return "needs at least 1 rank"
        if num_ranks == 1:
            if _memory_bandwidth(options) is None:
                return ("needs the GPU's memory bandwidth on 1 rank (NCCL copies the buffer "
                        "locally): this topology has no chip: memory_bandwidth")
            return None
        if _nodes(num_ranks, options) > 1:
            from ..hierarchical import groups_reason
            reason = groups_reason(num_ranks, options)
            if reason is not None:
                return f"across nodes needs the same number of ranks per node: {reason}"
        return None
    return check


def _depth(algorithm: str, size: float, view: NcclView, options: AlgoOptions) -> int:
    """Pipeline chunks of a pipelined pick: the caller's ``chunks`` above 1; else NVLS as
    NCCL cuts it (:func:`.tuning.nvls_pipeline_depth`, at most 64: deeper pipelines cost the
    engine more and change the time by under 2%, from 1 GiB), tree netsim's default."""
    if options.chunks is not None and options.chunks > 1:
        return options.chunks
    if algorithm == "nvls":
        return min(_MAX_NVLS_DEPTH, nvls_pipeline_depth(size, view))
    return default_chunks(size)


def _net_schedule(op: str, choice: Choice, num_ranks: int, size: float,
                  options: AlgoOptions) -> Schedule:
    """NCCL's schedule across nodes (:mod:`.multinode`): one ring per channel, or per
    channel two trees of chains; broadcast/reduce on a ring's chain."""
    from ..hierarchical import rank_groups

    members = rank_groups(num_ranks, options)
    if choice.algorithm == "nvls_tree":
        from ..innetwork import reducing_switches

        placed = options.node_of_rank(num_ranks)
        switches = [reducing_switches(members.shape[1], replace(
            options, placement=placed[row])) for row in members]
        chunks = options.chunks if options.chunks and options.chunks > 1 else \
            min(_MAX_NET_NVLS_DEPTH, default_chunks(size))
        return nvls_tree(members, size, switches, replace(options, chunks=chunks))
    if choice.algorithm == "tree":
        chunks = options.chunks if options.chunks and options.chunks > 1 else \
            max(1, default_chunks(size / (2 * choice.channels)))
        return multi_tree(members, size, choice.channels, replace(options, chunks=chunks))
    if op in ("broadcast", "reduce"):
        chunks = options.chunks if options.chunks and options.chunks > 1 else \
            default_chunks(size)     # sqrt(S / 256 KiB): the channel's share / 32 KiB
        return multi_chain(op, members, size, choice.channels, replace(options, chunks=chunks))
    return multi_ring(op, members, size, choice.channels, replace(options, chunks=1),
                      reduce_scatter=op != "allgather", all_gather=op != "reducescatter")


def _one_rank(size: float, options: AlgoOptions) -> Schedule:
    """NCCL on one rank: no communication. ``ncclLaunchOneRank`` (NVIDIA/nccl 2.30.7
    ``src/device/onerank.cu``, called from ``enqueue.cc`` when ``nRanks == 1``) copies the
    send buffer to the receive buffer with ``cudaMemcpyAsync`` (nothing in place), for
    every collective op. The copy reads and writes ``size`` bytes of the GPU's memory:
    ``2 x size / memory_bandwidth`` at the chip's peak (the preset's ``chip:`` block), beside
    the host's launch (:mod:`.harness`), so the time is the larger of the two."""
    copy = 2.0 * size / _memory_bandwidth(options)
    builder = ScheduleBuilder(1)
    builder.compute(0, copy, tag="nccl-one-rank-copy")
    schedule = builder.build()
    host = host_time(gpus_per_thread(1, options))
    if host > 0:
        enqueue = ScheduleBuilder(1)
        enqueue.compute(0, host, tag="nccl-tests-host")
        schedule = concurrent(schedule, enqueue.build())
    meta = dict(schedule.meta)
    meta["record"] = {"nccl_algorithm": "copy", "protocol": "-", "channels": 0,
                      "nccl_model_s": copy, "gpus_per_thread": gpus_per_thread(1, options),
                      "host_s": host, "nccl_version": version_text(_version(options)),
                      "nccl": "one-rank copy"}
    return replace(schedule, meta=meta)


def _build(op: str, num_ranks: int, size: float, options: AlgoOptions) -> Schedule:
    if num_ranks == 1:
        return _one_rank(size, options)
    choice = nccl_choice(op, num_ranks, size, options)
    view = nccl_view(num_ranks, options)
    p = PROTOCOLS.index(choice.protocol)
    nvls_loop = choice.algorithm == "nvls" and op == "allreduce" and view.nodes == 1
    if view.nodes > 1:
        schedule = _net_schedule(op, choice, num_ranks, size, options)
    else:
        inner = get_algorithm(op, NETSIM_ALGORITHM[op][choice.algorithm])
        depth = _depth(choice.algorithm, size, view, options)
        if nvls_loop and not (options.chunks and options.chunks > 1):
            # NCCL's loop fill is added below; the engine's pipeline runs deep enough that
            # its own (the copies' link time before and after the first and last
            # reduction) does not count it twice.
            depth = max(depth, _MIN_NVLS_LOOP_DEPTH)
        inner_options = replace(options, chunks=depth if inner.pipelined else None)
        schedule = inner.build(num_ranks, size, inner_options)
    efficiency = protocol_efficiency(choice.algorithm, choice.protocol, view)
    efficiency *= PROTOCOL_RATE_SCALE.get((view.arch, choice.protocol), 1.0)
    fill = 0.0
    if nvls_loop:
        # the switches reduce at the rate of the chunk size NCCL cuts (fixed time a chunk)
        switch = (schedule.kind == COMPUTE) & (schedule.src >= num_ranks)
        schedule = replace(schedule, seconds=np.where(
            switch, schedule.seconds * nvls_reduce_factor(size, view), schedule.seconds))
        if not (options.chunks and options.chunks > 1):
            # NCCL's loop: the first iteration's scatter and the last one's gather around
            # the reductions, NVLS_FILL_STAGES iterations at the busiest switch's rate.
            busiest = max((float(schedule.seconds[switch & (schedule.src == node)].sum())
                           for node in np.unique(schedule.src[switch])), default=0.0)
            fill = (NVLS_FILL_STAGES * busiest * nvls_iteration_share(size, view)
                    * nvls_copy_share(size, view))
    elif choice.algorithm == "nvls_tree" and not (options.chunks and options.chunks > 1):
        # the fill is fitted at 2.30's NVLS-tree rate; an older tuner's rating picks,
        # the machine fills its loop as fast whatever the release
        rate = choice.busbw_GBps if view.version == NCCL_VERSION else next(
            c.busbw_GBps for c in candidates(op, replace(view, version=NCCL_VERSION), size)
            if (c.algorithm, c.protocol) == (choice.algorithm, choice.protocol))
        fill = nvls_tree_fill(size, view, rate)
    base = BASE_LATENCY_US[choice.algorithm][p] * _US
    step = (HW_LATENCY_US[view.hw][choice.algorithm][p] * _US
            * STEP_LATENCY_SCALE.get((view.arch, choice.protocol), 1.0))
    if choice.algorithm in ("nvls", "nvls_tree"):
        # tuning.cc: NVLS latency is its hwLat alone (25 us), once per call, not per step;
        # NVLS tree's network hops add their latency through the NIC links.
        base, step = step + fill, 0.0
    if base > 0:
        prefix = ScheduleBuilder(num_ranks)
        for rank in range(num_ranks):
            prefix.compute(rank, base, tag="nccl-launch")
        schedule = replace(sequential(prefix.build(), schedule), meta=dict(schedule.meta))
    threads = gpus_per_thread(num_ranks, options)
    host = host_time(threads)
    if host > 0:
        # nccl-tests enqueues iterations back to back and divides the wall time by their
        # number: an iteration lasts the longer of the GPUs' work and the host's enqueue,
        # so the host runs beside the collective (a branch nothing waits for).
        enqueue = ScheduleBuilder(num_ranks)
        enqueue.compute(0, host, tag="nccl-tests-host")
        schedule = replace(concurrent(schedule, enqueue.build()), meta=dict(schedule.meta))
    meta = dict(schedule.meta)
    meta["overhead"] = step
    # Sends keep their payload bytes (what the verifier checks); the runner multiplies them by
    # the wire factor before simulating, so links carry the protocol's lines and flags too.
    meta["wire_factor"] = 1.0 / efficiency
    meta["record"] = {"nccl_algorithm": choice.algorithm, "protocol": choice.protocol,
                      "channels": choice.channels, "nccl_model_s": choice.time_us * _US,
                      "gpus_per_thread": threads, "host_s": host,
                      "nccl_version": version_text(view.version),
                      "nccl": f"{choice.algorithm}/{choice.protocol}/{choice.channels}ch"}
    return replace(schedule, meta=meta)


def _register(op: str) -> None:
    algos = ", ".join(NETSIM_ALGORITHM[op])

    def build(num_ranks: int, size: float, options: AlgoOptions) -> Schedule:
        return _build(op, num_ranks, size, options)

    # Not an 'auto' candidate: auto is the fastest netsim algorithm, nccl is what NCCL runs
    # (the attribute survives the registry's functools.wraps; run.collective reads it).
    build.auto = False
    # NCCL plans at init on the links it finds: links failed from the start are not there
    # when it picks and builds (the runner builds on the surviving links; later failures
    # re-route the flows of the plan made).
    build.plans_at_start = True
    register(op, "nccl", f"as NCCL picks ({algos} x LL/LL128/Simple by size, tuning.cc "
             f"2.30.7), run by the engine with the protocol's efficiency and latencies",
             check=_why_not(op))(build)


for _op in NETSIM_ALGORITHM:
    _register(_op)
