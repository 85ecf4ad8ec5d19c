"""NCCL's cost model (its tuner): protocols, base and per-step latencies, bus bandwidths.

Facts and figures from NVIDIA/nccl v2.30.7 (commit 5067397c, 2026-06-11), ``src/graph/
tuning.cc`` (``ncclTunerConstantsDefaults``, ``ncclTopoTuneModel``, ``ncclTopoGetAlgoTime``),
``src/graph/search.cc`` (speed arrays, ``ncclTopoDupChannels``), ``src/graph/topo.h``
(NVLink rate per link), ``src/enqueue.cc`` (channel count by size) and
``src/include/{device,comm}.h`` (thread counts and thresholds). The code here is netsim's
own; only the numbers and the structure of the model carry over.

NCCL predicts the time of a collective as ``latency + size / bandwidth`` for every enabled
(algorithm, protocol) pair and runs the fastest. Units as NCCL keeps them: latencies in us,
bandwidths in GB/s (1e9 B/s), so ``time_us = lat + bytes / (1000 * bw)``.

>>> view = NcclView(ranks=8, arch="hopper", gpu_bw=370.0, nvls=True)
>>> best = choose("allreduce", view, 8)
>>> (best.algorithm, best.protocol, round(best.time_us, 2))   # 6.6 + 14 x 0.6 us
('ring', 'LL', 15.0)
>>> choose("allreduce", view, 1 << 30).algorithm
'nvls'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["PROTOCOLS", "ALGORITHMS", "ARCHS", "NcclView", "Choice", "candidates", "choose",
           "ring_graph", "nvls_graph", "channels_for", "BASE_LATENCY_US", "HW_LATENCY_US",
           "protocol_efficiency", "nvls_chunk_size", "nvls_pipeline_depth", "net_graph",
           "CPU_VENDORS", "NET_OVERHEAD_US", "RING_PLATEAU", "nvls_reduce_factor",
           "NVLS_CHUNK_TIME_US", "NVLS_CHANNEL_BW", "nvls_iteration_share",
           "nvls_copy_share", "NCCL_VERSION", "OLDEST_NCCL_VERSION", "parse_nccl_version",
           "version_text"]

PROTOCOLS = ("LL", "LL128", "Simple")
#: NCCL's algorithms the tuner here rates (PAT needs one GPU per node; CollNet a SHARP
#: network). ``nvls_tree`` (NVLS inside nodes, a tree across) only across nodes.
ALGORITHMS = ("tree", "ring", "nvls", "nvls_tree")
ARCHS = ("volta", "ampere", "hopper", "blackwell")

# -- tuning.cc: ncclTunerConstantsDefaults -------------------------------------------------
#: baseLatencies[algo][proto], us.
BASE_LATENCY_US = {"tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4), "nvls": (0.0, 0.0, 0.0),
                   "nvls_tree": (0.0, 0.0, 0.0)}
#: hwLatencies[hw][algo][proto], us per step (NVLink, PCI, NET).
HW_LATENCY_US = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4), "nvls": (0.0, 0.0, 25.0),
               "nvls_tree": (0.0, 0.0, 25.0)},
    "pci": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7), "nvls": (0.0, 0.0, 0.0),
            "nvls_tree": (0.0, 0.0, 0.0)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0), "nvls": (0.0, 0.0, 18.0),
            "nvls_tree": (0.0, 0.0, 20.9)},
}
_ARCH_INDEX = {a: i for i, a in enumerate(ARCHS)}
#: llMaxBws[arch][nodes index], single node row per GPU generation (GB/s).
_LL_MAX_BW = {"volta": 39.0, "ampere": 87.7, "hopper": 141.0, "blackwell": 2 * 141.0}
#: perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws (single node), GB/s/channel.
_RING_LL128_PER_CH = {"volta": 20.0, "ampere": 20.0, "hopper": 36.7, "blackwell": 40.0}
_TREE_LL128_PER_CH = {"volta": 20.0, "ampere": 20.0, "hopper": 36.7, "blackwell": 55.6}
_TREE_PER_CH = {"volta": 26.5, "ampere": 24.0, "hopper": 38.7, "blackwell": 70.0}
#: nvlsEfficiency by GPU generation.
_NVLS_EFFICIENCY = {"volta": 0.0, "ampere": 0.0, "hopper": 0.85, "blackwell": 0.74}
#: treeCorrectionFactor[proto][log2(bytes / 64)], powers of two from 64 B to 256 MiB.
_TREE_CORRECTION = (
    (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0,
     1.0, 1.0, 1.0),
    (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9,
     1.0, 1.0, 1.0),
    (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9,
     .9, .9),
)

# -- tuning.cc: the multi-node rows (index 1: 2 nodes, index 2: more) ----------------------
#: llMaxBws for nNodes > 1 are per CPU vendor, not per GPU: rows Intel (0) and AMD (1).
_LL_MAX_BW_NET = {"intel": (39.0, 20.4), "amd": (22.5, 19.0)}
#: perChMax{RingLL128,TreeLL128,Tree,NVLSTree}Bws for (2 nodes, more nodes), GB/s/channel.
_RING_LL128_PER_CH_NET = {"volta": (20.0, 20.0), "ampere": (20.0, 20.0),
                          "hopper": (36.7, 36.7), "blackwell": (40.0, 40.0)}
_TREE_LL128_PER_CH_NET = {"volta": (20.0, 20.0), "ampere": (20.0, 20.0),
                          "hopper": (36.7, 29.0), "blackwell": (31.67, 20.0)}
_TREE_PER_CH_NET = {"volta": (18.5, 10.0), "ampere": (23.6, 17.8), "hopper": (41.4, 36.0),
                    "blackwell": (42.8, 24.0)}
_NVLS_TREE_PER_CH_NET = {"volta": (18.5, 10.0), "ampere": (23.6, 17.8),
                         "hopper": (57.7, 45.5), "blackwell": (96.0, 80.0)}
#: getNetOverhead: a network post costs 1 us on Intel hosts, 2 us on AMD (x3 for Simple).
NET_OVERHEAD_US = {"intel": 1.0, "amd": 2.0}
#: getAlgoTime: an inter-node Simple ring all-reduce of >= 64 B per channel and rank has
#: its latency multiplied by this ("plateau effect of ring"; 1.9 before SM80).
RING_PLATEAU = 1.4
CPU_VENDORS = tuple(NET_OVERHEAD_US)

# -- search.cc: bandwidths the topology search tries per channel, intra-node (GB/s) --------
_SPEEDS_INTRA = {
    "volta": (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    "ampere": (40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0),
    "hopper": (60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0),
    "blackwell": (90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0),
}
#: ... and when the system has NICs (speedArrayInter, sm90/sm100SpeedArrayInter).
_SPEEDS_INTER = {
    "volta": (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0,
              3.0, 2.4, 1.2, 0.24, 0.12),
    "ampere": (48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0,
               3.0, 2.4, 1.2, 0.24, 0.12),
    "hopper": (48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0,
               2.4, 1.2, 0.24, 0.12),
    "blackwell": (96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5,
                  15.0, 12.0, 6.0, 3.0, 2.4, 1.2, 0.24, 0.12),
}
_MAX_CHANNELS = 32          # MAXCHANNELS / 2: rings a search may return before duplication
_NVLS_MAX_ARITY = 32        # NCCL_MAX_NVLS_ARITY (device.h)
#: NVLS channels at run time (one node): transport/nvls.cc NVLS_NCHANNELS_SM90 (16) and
#: NVLS_NCHANNELS_SM100_NVL (24); enqueue.cc launches ``comm->nvlsChannels`` of them.
NVLS_CHANNELS = {"volta": 16, "ampere": 16, "hopper": 16, "blackwell": 24}
#: Pipeline fill of NCCL's NVLS loop, in loop iterations (one iteration: every channel
#: moves one chunk per head, ``channels x heads x chunk`` bytes of the op): the first
#: iteration's scatter before the switches reduce it and the last one's gather after
#: (``src/device/all_reduce.h``, NVLS: scatter, reduce and gather warps work on each chunk
#: in turn), copies that move the iteration's bytes (:func:`nvls_copy_share`). A collective
#: of D iterations takes D + this. FITTED: least squares of that loop model (25 us hwLat +
#: (D + fill) iterations, log time) over the published NVLS all-reduce curves from 2 MiB
#: (benchmarks/data: 8 x H100 together, voltagepark, multiprocess, H200, the DGX H100
#: points, 4 x H100, 8 x B200, 72-GPU NVL72; 78 sizes) gives 1.19 (1.50 when the fill
#: counts the copies' bytes only, as netsim does) with the per-chunk time and Blackwell's
#: rate below; 1.2 on the engine's runs, whose own pipeline (at least 16 chunks) fills a
#: little too: every row netsim validate had within tolerance stays so there, the 8 x H100
#: curves at 2-16 MiB lie within 7%.
NVLS_FILL_STAGES = 1.2
#: NCCL_NVLS_CHUNKSIZE default (transport/nvls.cc), bytes.
NVLS_CHUNK_SIZE = 128 * 1024
#: An NVLS chunk starts as one Simple step (enqueue.cc: buffSizes[Simple] / NCCL_STEPS =
#: 4 MiB / 8) and is capped at NCCL_NVLS_CHUNKSIZE before it is cut by size.
NVLS_STEP_SIZE = 512 * 1024
#: Fixed time an NVLS chunk costs a channel beside its bytes (us): each chunk of the loop
#: waits for the step flags of its peers' copies before the switch reduces it and posts its
#: own after (``prims.scatter`` / ``directRecvDirectSend`` / ``gather`` per chunk,
#: ``src/device/all_reduce.h``), so a chunk of s bytes moves at s / (s / R + this) where R
#: is the channel's streaming rate. FITTED from the loop times where NCCL changes the chunk
#: (time per iteration = heads x (chunk / R + this)): DGX H100's 8-GPU curves, 32 / 64 /
#: 128 KiB chunks, 0.54 us; the 8 x B200 curve's 64 -> 512 KiB step, 0.56 us; the joint
#: fit of :data:`NVLS_FILL_STAGES`, 0.605 us. One figure for both generations: in bytes it
#: is 10.1 KiB a chunk on Hopper's channels and 10.7 KiB on Blackwell's.
NVLS_CHUNK_TIME_US = 0.605
#: NVLS all-reduce rate of one NVLS channel at NCCL's default 128 KiB chunks, GB/s of the
#: op's size: Hopper 17.15 (DGX H100's 4 x 68.6 GB/s of switch reduction over 16 SM90
#: channels, dgx-h100.yaml, derived from nccl-tests#212), Blackwell 18.19 (FITTED in the
#: joint fit of :data:`NVLS_FILL_STAGES`; alone, the 8 x B200 curve's 128 MiB-16 GiB loop
#: times give 18.9, the 72-GPU NVL72 curve 19.3 at 4 GiB and 17.6 at 8 GiB). The presets'
#: ``reduce_bandwidth`` carry it per switch chip: dgx-b200 24 x 18.19 / 2, gb200-nvl72
#: 24 x 18.19 / 18. The default of a view.
NVLS_CHANNEL_BW = {"volta": 17.15, "ampere": 17.15, "hopper": 17.15, "blackwell": 18.19}

# -- NCCL releases: the constants of the tuner that changed --------------------------------
#: The release whose tuner this module models (the figures above).
NCCL_VERSION = (2, 30, 7)
#: The oldest release :attr:`NcclView.version` may name: NVLS tree's rating took the form
#: below in 2.19 (2.18 rated NVLS tree without it: tuning.cc, tags v2.18.5-1, v2.19.3-1).
OLDEST_NCCL_VERSION = (2, 19, 0)
#: What differs in older releases' tuning.cc, and from which release each figure holds
#: (NVIDIA/nccl tags v2.19.3-1 .. v2.30.7-1, read for this table):
#:
#: * hwLat[NVLink][NVLS and NVLSTree][Simple]: 23 us up to 2.20, 25 from 2.21;
#: * hwLat[NET][NVLSTree][Simple]: 14 us up to 2.28.7, 20.9 from 2.28.9;
#: * the NVLS and NVLS-tree bandwidths: up to 2.27, the graph's channels x min(bwIntra,
#:   bwInter) (NVLS tree on more than 2 nodes: bwInter / 2), times 5/6 for all-reduce
#:   (2.27: all-gather and reduce-scatter min(bwIntra (ppn-1)/ppn, 0.9 bwInter)); from 2.28
#:   ``nvlsEfficiency`` and the per-channel caps of :func:`_net_bus` and :func:`_bandwidth`.
#:
#: Only these: an older ``version`` changes what NCCL's tuner predicts and so what it picks,
#: not how the machine runs (the simulated latencies and rates are the same for every
#: release), and every other constant stays 2.30.7's.
_NVLINK_NVLS_LATENCY = ((2, 21, 0), 23.0)      # (first release with 25 us, older figure)
_NET_NVLS_TREE_LATENCY = ((2, 28, 9), 14.0)    # (first release with 20.9 us, older figure)
_NVLS_EFFICIENCY_SINCE = (2, 28, 0)


def version_text(version: tuple[int, ...]) -> str:
    """A release as NCCL prints it.

    >>> version_text((2, 26, 2)), version_text(NCCL_VERSION[:2])
    ('2.26.2', '2.30')
    """
    return ".".join(map(str, version))


def parse_nccl_version(text: object) -> tuple[int, int, int]:
    """An NCCL release as ``(major, minor, patch)``: ``"2.26.2"``, ``"2.26"`` (patch 0),
    ``"2.26.2+cuda12.8"`` (as NCCL_DEBUG=INFO prints it) or NCCL_VERSION_CODE ``22602`` (as
    nccl-tests' ``nccl-library=`` prints it). Raises ValueError naming the text for anything
    else, or for a release outside :data:`OLDEST_NCCL_VERSION` .. :data:`NCCL_VERSION`'s
    minor series.

    >>> parse_nccl_version("2.26.2+cuda12.8"), parse_nccl_version(22807)
    ((2, 26, 2), (2, 28, 7))
    """
    raw = str(text).strip()
    if raw.isdigit() and len(raw) == 5:                 # NCCL_VERSION_CODE: X*10000+Y*100+Z
        code = int(raw)
        version = (code // 10000, code // 100 % 100, code % 100)
    else:
        parts = raw.split("+", 1)[0].split(".")
        if not 2 <= len(parts) <= 3 or not all(x.isdigit() for x in parts):
            raise ValueError(f"NCCL version {raw!r} is not X.Y.Z (e.g. 2.26.2) or a version "
                             f"code (e.g. 22602)")
        numbers = [int(x) for x in parts] + [0] * (3 - len(parts))
        version = (numbers[0], numbers[1], numbers[2])
    if not OLDEST_NCCL_VERSION <= version < (NCCL_VERSION[0], NCCL_VERSION[1] + 1, 0):
        raise ValueError(f"NCCL version {version_text(version)}: the model knows the tuner "
                         f"of releases {version_text(OLDEST_NCCL_VERSION[:2])} to "
                         f"{version_text(NCCL_VERSION[:2])}.x")
    return version


def _hw_latency(hw: str, algorithm: str, p: int, view: "NcclView") -> float:
    """hwLat[hw][algorithm][protocol] (us) of the release ``view.version``."""
    if algorithm in ("nvls", "nvls_tree") and hw == "nvlink" \
            and view.version < _NVLINK_NVLS_LATENCY[0]:
        return _NVLINK_NVLS_LATENCY[1] if p == 2 else 0.0
    if (hw, algorithm) == ("net", "nvls_tree") and view.version < _NET_NVLS_TREE_LATENCY[0]:
        return _NET_NVLS_TREE_LATENCY[1] if p == 2 else 0.0
    return HW_LATENCY_US[hw][algorithm][p]


def _before_nvls_efficiency(op: str, algorithm: str, view: "NcclView", channels: int,
                            speed: float) -> float:
    """NVLS / NVLS-tree bandwidth entry of releases before 2.28 (GB/s of the op's size) on
    a graph of ``channels`` at ``speed`` (its bwIntra and bwInter): see
    :data:`_NVLS_EFFICIENCY_SINCE`'s table."""
    intra = inter = speed
    if algorithm == "nvls_tree" and view.nodes > 2:
        inter = speed / 2
    if op == "allreduce":
        return channels * min(intra, inter) * 5.0 / 6.0
    ppn = view.ranks // max(view.nodes, 1)
    if view.version >= (2, 27, 0):
        return channels * min(intra * (ppn - 1) / ppn, inter * 0.9)
    return channels * min(intra, inter)


# -- device.h / comm.h: threads per channel and bytes per thread before adding channels ----
_MAX_THREADS = {"LL": 512, "LL128": 640, "Simple": 512}
_THREAD_THRESHOLD = {"LL": 8, "LL128": 8, "Simple": 64}


@dataclass(frozen=True)
class NcclView:
    """What NCCL's tuner knows of a communicator (one node unless ``nodes`` > 1).

    ``gpu_bw`` is a GPU's NVLink bandwidth per direction in GB/s as NCCL counts it (links x
    20.6 GB/s on Hopper: ``SM90_NVLINK_BW``); ``nvls`` whether NVLink SHARP is there.

    >>> from dataclasses import replace
    >>> view = NcclView(ranks=72, arch="blackwell", gpu_bw=740.0, nvls=True)
    >>> choose("allreduce", view, 8 << 30).algorithm    # the tuner's NVLS rate: ring wins
    'ring'
    >>> choose("allreduce", replace(view, nvls_allreduce_bw=411.0), 8 << 30).algorithm
    'nvls'
    """

    ranks: int
    arch: str = "hopper"
    gpu_bw: float = 370.0
    nvls: bool = False
    nodes: int = 1
    hw: str = "nvlink"
    #: Across nodes (``nodes`` > 1): NICs per node and a NIC's rate per direction as NCCL
    #: reads it (GB/s: 400 Gb/s -> 50), and the host CPU's vendor (LL's cap, net overhead).
    nics: int = 0
    nic_bw: float = 0.0
    cpu: str = "intel"
    #: NVLS all-reduce steady-state bandwidth (GB/s of the op's size per second) netsim
    #: simulates; derated for the loop's fill by size (:data:`NVLS_FILL_STAGES`), it
    #: replaces the tuner's own (``nvlsEfficiency`` x the NVLS graph) where it is higher.
    #: None: the tuner's alone.
    nvls_allreduce_bw: float | None = None
    #: NCCL_NVLS_CHUNKSIZE: the largest NVLS chunk (bytes) before NCCL cuts it by size.
    nvls_chunk: int = NVLS_CHUNK_SIZE
    #: NVLS all-reduce rate of one NVLS channel at 128 KiB chunks (GB/s; the switches'
    #: summed ``reduce_bandwidth`` over the channels). None: :data:`NVLS_CHANNEL_BW`.
    nvls_channel_bw: float | None = None
    #: The NCCL release whose tuner picks (``(major, minor, patch)``, from
    #: :data:`OLDEST_NCCL_VERSION`): older ones rate NVLS and NVLS tree differently
    #: (see ``_NVLINK_NVLS_LATENCY``'s table), which moves the sizes where they are chosen.
    version: tuple[int, int, int] = NCCL_VERSION


@dataclass(frozen=True)
class Choice:
    """One (algorithm, protocol) as NCCL rates it: its predicted time and its settings."""

    algorithm: str
    protocol: str
    latency_us: float
    busbw_GBps: float          # NCCL's "bandwidth" entry (algorithm bandwidth, GB/s)
    time_us: float
    channels: int


def ring_graph(view: NcclView) -> tuple[int, float]:
    """(channels, GB/s per channel) of the ring/tree graph, as search.cc finds it.

    The search takes the fastest speed a GPU's NVLinks can carry, as many channels of it as
    fit, then doubles the channels at half the speed (``ncclTopoDupChannels``).

    >>> ring_graph(NcclView(ranks=8, arch="hopper", gpu_bw=370.8))   # DGX H100
    (12, 30.0)
    """
    speeds = _SPEEDS_INTRA[view.arch]
    speed = next((s for s in speeds if s <= view.gpu_bw), speeds[-1])
    channels = max(1, min(_MAX_CHANNELS, int(view.gpu_bw // speed)))
    return _doubled(view, channels, speed)


def _doubled(view: NcclView, channels: int, speed: float) -> tuple[int, float]:
    """search.cc's last step: a graph of fast channels is duplicated (twice the channels at
    the speed split between them), except on Hopper and later below 50 GB/s with more than
    four channels."""
    cc_after_ampere = _ARCH_INDEX[view.arch] >= _ARCH_INDEX["hopper"]
    if speed >= 25.0 and not (cc_after_ampere and speed < 50.0 and channels > 4):
        doubled = min(2 * channels, _MAX_CHANNELS)
        speed /= math.ceil(doubled / channels)
        channels = doubled
    return channels, speed


def nvls_graph(view: NcclView) -> tuple[int, float]:
    """(channels, GB/s per channel) of the NVLS graph: one channel per GPU (head), at the
    fastest speed whose total fits a GPU's NVLinks scaled by n/(n-1) (search.cc).

    >>> nvls_graph(NcclView(ranks=8, arch="hopper", gpu_bw=370.8))
    (8, 50.0)
    """
    channels = min(_NVLS_MAX_ARITY, view.ranks)
    total = view.gpu_bw * view.ranks / max(view.ranks - 1, 1)
    speeds = _SPEEDS_INTRA[view.arch]
    speed = next((s for s in speeds if s <= view.gpu_bw and s * channels <= total), speeds[-1])
    return channels, speed


def protocol_efficiency(algorithm: str, protocol: str, view: NcclView) -> float:
    """Bandwidth of ``protocol`` as a fraction of Simple's on the same graph (tuning.cc).

    LL carries 4 B of data per 8 B line (x 0.5, capped at ``llMaxBw``), LL128 120 B per
    128 B line (x 0.92, capped per channel); Simple is the reference (1).

    >>> round(protocol_efficiency("ring", "LL", NcclView(ranks=8, gpu_bw=370.8)), 3)
    0.392
    """
    if protocol == "Simple":
        return 1.0
    if view.nodes > 1:
        return _net_bus(algorithm, protocol, view) / _net_bus(algorithm, "Simple", view)
    channels, speed = ring_graph(view)
    simple = channels * speed
    if algorithm == "ring" and protocol == "LL":
        return min(_LL_MAX_BW[view.arch], simple * 0.5) / simple
    if algorithm == "ring" and protocol == "LL128":
        return min(simple * 0.92, channels * _RING_LL128_PER_CH[view.arch]) / simple
    tree = min(simple * 0.92, channels * _TREE_PER_CH[view.arch])
    if protocol == "LL":
        return min(tree / 3.8, _LL_MAX_BW[view.arch]) / tree
    return min(tree * 7.0 / 9.0, channels * _TREE_LL128_PER_CH[view.arch]) / tree


def net_graph(view: NcclView, algorithm: str = "ring") -> tuple[int, float]:
    """(channels, GB/s per channel) of the ring/tree (or ``nvls_tree``) graph across nodes.

    search.cc with NICs: one channel per NIC (a ring enters and leaves every node through
    a NIC near the GPU it visits first and last), at the fastest speed of the inter-node
    array a NIC carries and whose channels fit a GPU's NVLinks (for NVLS heads, scaled by
    n/(n-1) as for the one-node NVLS graph); channels doubled at half the speed as
    ``ncclTopoDupChannels`` does.

    >>> net_graph(NcclView(ranks=16, gpu_bw=370.8, nodes=2, nics=8, nic_bw=50.0))  # 2 DGX
    (8, 45.0)
    """
    if view.nics < 1 or view.nic_bw <= 0:
        raise ValueError("a multi-node view needs nics >= 1 and nic_bw > 0")
    ppn = view.ranks // view.nodes
    channels = max(1, min(_MAX_CHANNELS, view.nics))
    total = view.gpu_bw
    if algorithm == "nvls_tree":
        channels = max(1, min(channels, ppn, _NVLS_MAX_ARITY))
        total *= ppn / max(ppn - 1, 1)
    speeds = _SPEEDS_INTER[view.arch]
    speed = next((s for s in speeds if s <= view.nic_bw and s * channels <= total), speeds[-1])
    if algorithm == "nvls_tree":
        return channels, speed
    return _doubled(view, channels, speed)


def _net_bus(algorithm: str, protocol: str, view: NcclView) -> float:
    """Bus bandwidth (GB/s) NCCL rates across nodes, before the conversion to the op's
    size (tuning.cc's refinements with the 2-node or many-node rows)."""
    i = 0 if view.nodes <= 2 else 1
    ll_max = _LL_MAX_BW_NET[view.cpu][i]
    channels, speed = net_graph(view, algorithm)
    if algorithm == "nvls_tree":
        if protocol != "Simple" or not view.nvls or channels < 2:
            return 0.0
        if view.version < _NVLS_EFFICIENCY_SINCE:
            return _before_nvls_efficiency("allreduce", algorithm, view, channels, speed)
        intra = speed * _NVLS_EFFICIENCY[view.arch] * (channels - 1) / channels * 2.0
        inter = speed * (2.0 if view.nodes <= 2 else 1.0)
        return channels * min(intra, inter, _NVLS_TREE_PER_CH_NET[view.arch][i])
    bus = channels * speed
    if algorithm == "ring":
        if protocol == "LL":
            return min(ll_max, bus * 0.5)
        if protocol == "LL128":
            return min(bus * 0.92, channels * _RING_LL128_PER_CH_NET[view.arch][i])
        return bus
    bus = min(bus * 0.92, channels * _TREE_PER_CH_NET[view.arch][i])
    if protocol == "LL":
        return min(bus / 3.8, ll_max)
    if protocol == "LL128":
        return min(bus * 120.0 / 128.0, channels * _TREE_LL128_PER_CH_NET[view.arch][i])
    return bus


def _net_bandwidth(op: str, algorithm: str, protocol: str, view: NcclView) -> float:
    if algorithm == "nvls" or (algorithm in ("tree", "nvls_tree") and op != "allreduce"):
        return 0.0        # NVLS alone needs CollNet (SHARP) across nodes; trees all-reduce only
    bus = _net_bus(algorithm, protocol, view)
    if algorithm == "tree":
        return bus * 0.5
    if algorithm == "nvls_tree" and view.version < _NVLS_EFFICIENCY_SINCE:
        return bus                          # converted by its 5/6 already (before 2.28)
    return bus * view.ranks / _nsteps(op, view.ranks)


def _net_latency(op: str, algorithm: str, protocol: str, view: NcclView) -> float:
    p = PROTOCOLS.index(protocol)
    n, nodes = view.ranks, view.nodes
    ppn = n // nodes
    intra = _hw_latency("nvlink", algorithm, p, view)
    # with one GPU per node every step is exposed: the tree's network latency
    inter = _hw_latency("net", "tree" if ppn == 1 else algorithm, p, view)
    base = BASE_LATENCY_US[algorithm][p]
    log_nodes = int(math.log2(nodes))
    if algorithm == "ring":
        if op in ("broadcast", "reduce"):
            lat = HW_LATENCY_US["net"]["tree" if protocol == "Simple" else "ring"][p]
            return base + _nsteps(op, n) * lat
        overhead = NET_OVERHEAD_US[view.cpu] * (3.0 if protocol == "Simple" else 1.0)
        intra = max(intra, overhead)
        inter_steps = 2 * (nodes - 1) if op == "allreduce" else nodes - 1
        return base + (_nsteps(op, n) - inter_steps) * intra + inter_steps * inter
    if algorithm == "tree":
        return base + 2 * ((ppn - 1) * intra + log_nodes * inter)
    return base + intra + 2 * log_nodes * inter          # nvls_tree


def _nsteps(op: str, n: int) -> int:
    return 2 * (n - 1) if op == "allreduce" else (n - 1 if op in ("allgather", "reducescatter")
                                                   else n)


def _bandwidth(op: str, algorithm: str, protocol: str, view: NcclView) -> float:
    """NCCL's bandwidth entry (GB/s of the op's size per second), 0 where not used."""
    if view.nodes > 1:
        return _net_bandwidth(op, algorithm, protocol, view)
    p = PROTOCOLS.index(protocol)
    n = view.ranks
    if algorithm == "nvls_tree":
        return 0.0                  # tuning.cc: NVLS tree is disabled on a single node
    if algorithm == "nvls":
        if protocol != "Simple" or not view.nvls:
            return 0.0
        if op != "allreduce" and view.ranks > _NVLS_MAX_ARITY:
            # enqueue.cc: NVLS runs other ops only up to NCCL_MAX_NVLS_ARITY local ranks
            # ("func != ncclFuncAllReduce && localRanks > NCCL_MAX_NVLS_ARITY": skipped).
            return 0.0
        channels, speed = nvls_graph(view)
        if channels < 2:
            return 0.0
        if view.version < _NVLS_EFFICIENCY_SINCE:
            return _before_nvls_efficiency(op, algorithm, view, channels, speed)
        intra = speed * _NVLS_EFFICIENCY[view.arch] * (channels - 1) / channels
        intra *= 2.0 if op == "allreduce" else (n - 1) / n
        bus = channels * min(intra, speed)
        return bus * n / _nsteps(op, n) if op == "allreduce" else bus
    channels, speed = ring_graph(view)
    bus = channels * speed
    if algorithm == "ring":
        bus *= protocol_efficiency("ring", protocol, view)
        return bus * n / _nsteps(op, n)
    if op != "allreduce":
        return 0.0
    bus = min(bus * 0.92, channels * _TREE_PER_CH[view.arch])
    if p == 0:
        bus = min(bus / 3.8, _LL_MAX_BW[view.arch])
    elif p == 1:
        bus = min(bus * 7.0 / 9.0, channels * _TREE_LL128_PER_CH[view.arch])
    return bus * 0.5


def _latency(op: str, algorithm: str, protocol: str, view: NcclView) -> float:
    if view.nodes > 1:
        return _net_latency(op, algorithm, protocol, view)
    p = PROTOCOLS.index(protocol)
    intra = _hw_latency(view.hw, algorithm, p, view)
    if algorithm == "nvls":
        return intra
    base = BASE_LATENCY_US[algorithm][p]
    if algorithm == "ring":
        return base + _nsteps(op, view.ranks) * intra
    return base + 2 * (view.ranks - 1) * intra


def channels_for(algorithm: str, protocol: str, size: float, view: NcclView) -> int:
    """Channels NCCL launches for ``size`` bytes (enqueue.cc): fewer while each thread
    would get less than its threshold; NVLS always uses its own count.

    >>> channels_for("ring", "Simple", 1 << 30, NcclView(ranks=8, gpu_bw=370.8))
    12
    """
    if algorithm == "nvls":
        return NVLS_CHANNELS[view.arch]
    if algorithm == "nvls_tree":
        return net_graph(view, algorithm)[0]
    channels, _ = net_graph(view) if view.nodes > 1 else ring_graph(view)
    threads = _MAX_THREADS[protocol]
    threshold = _THREAD_THRESHOLD[protocol] * (view.ranks if (algorithm, protocol)
                                                == ("ring", "LL") else 1)
    while size < channels * threads * threshold and channels >= 2:
        channels -= 1
    return channels


def nvls_chunk_size(size: float, view: NcclView) -> int:
    """Bytes per NVLS chunk for a collective of ``size`` bytes (enqueue.cc, NVLS branch of
    the chunk size: 128 KiB, halved to 64 / 32 / 16 KiB while the size is under 64 / 8 / 2
    times channels x heads x chunk).

    >>> nvls_chunk_size(8 << 20, NcclView(ranks=8, nvls=True)), nvls_chunk_size(1 << 30,
    ...     NcclView(ranks=8, nvls=True))
    (32768, 131072)
    """
    concurrent = NVLS_CHANNELS[view.arch] * nvls_graph(view)[0]
    chunk = min(view.nvls_chunk, NVLS_STEP_SIZE)
    for factor, smaller in ((64, 65536), (8, 32768), (2, 16384)):
        if size < factor * concurrent * chunk and chunk > smaller:
            chunk = smaller
    return chunk


def nvls_reduce_factor(size: float, view: NcclView) -> float:
    """Time of the switches' reductions for ``size`` bytes over their time at 128 KiB chunks:
    a chunk of s bytes costs s / r + t (:data:`NVLS_CHUNK_TIME_US`) with r the channel's
    streaming rate, so the ratio is 1 + r128 x t x (1/s - 1/128 KiB), r128 the channel's
    rate at 128 KiB: above 1 for smaller chunks, below for larger.

    >>> view = NcclView(ranks=8, nvls=True)              # 32, 64 and 128 KiB chunks
    >>> [round(nvls_reduce_factor(s, view), 3) for s in (32 << 20, 256 << 20, 1 << 30)]
    [1.237, 1.079, 1.0]
    """
    rate = view.nvls_channel_bw or NVLS_CHANNEL_BW[view.arch]          # GB/s = kB/us
    overhead = rate * 1e3 * NVLS_CHUNK_TIME_US                         # bytes a chunk
    return 1.0 + overhead * (1.0 / nvls_chunk_size(size, view) - 1.0 / NVLS_CHUNK_SIZE)


def nvls_copy_share(size: float, view: NcclView) -> float:
    """Share of an NVLS chunk's time that is its bytes, not its fixed time: (s / r) /
    (s / r + t) for chunks of s bytes at the channel's streaming rate r
    (:data:`NVLS_CHUNK_TIME_US`).

    >>> round(nvls_copy_share(8 << 20, NcclView(ranks=8, nvls=True)), 3)   # 32 KiB chunks
    0.744
    """
    rate = view.nvls_channel_bw or NVLS_CHANNEL_BW[view.arch]          # GB/s = kB/us
    chunk = nvls_chunk_size(size, view)
    per_byte = 1.0 / (rate * 1e3) - NVLS_CHUNK_TIME_US / NVLS_CHUNK_SIZE  # us a byte, streaming
    return chunk * per_byte / (chunk * per_byte + NVLS_CHUNK_TIME_US)


def nvls_iteration_share(size: float, view: NcclView) -> float:
    """Share of the op's bytes one iteration of NCCL's NVLS loop moves: channels x heads x
    chunk over ``size`` (at most 1).

    >>> nvls_iteration_share(64 << 20, NcclView(ranks=8, nvls=True))    # 16 x 8 x 64 KiB
    0.125
    """
    concurrent = NVLS_CHANNELS[view.arch] * nvls_graph(view)[0]
    return min(1.0, concurrent * nvls_chunk_size(size, view) / max(size, 1.0))


def nvls_pipeline_depth(size: float, view: NcclView) -> int:
    """Chunks one NVLS channel moves one after another for its slice of one head (rank):
    ``ceil(size / (channels x heads x chunk))``, NCCL's loop count (enqueue.cc).

    >>> [nvls_pipeline_depth(s << 20, NcclView(ranks=8, nvls=True)) for s in (2, 8, 64, 1024)]
    [1, 2, 8, 64]
    """
    concurrent = NVLS_CHANNELS[view.arch] * nvls_graph(view)[0]
    return max(1, math.ceil(size / (concurrent * nvls_chunk_size(size, view))))


def candidates(op: str, view: NcclView, size: float) -> list[Choice]:
    """Every (algorithm, protocol) NCCL would consider for ``op`` here, with its time."""
    algorithms = {"allreduce": ALGORITHMS, "allgather": ("ring", "nvls"),
                  "reducescatter": ("ring", "nvls")}.get(op, ("ring",))
    out = []
    for algorithm in algorithms:
        for protocol in PROTOCOLS:
            bw = _bandwidth(op, algorithm, protocol, view)
            if bw <= 0:
                continue
            if algorithm == "tree" and op == "allreduce":
                log = int(math.log2(max(size, 1) / 64)) if size >= 64 else -1
                if 0 <= log < 23:
                    bw *= _TREE_CORRECTION[PROTOCOLS.index(protocol)][log]
            if algorithm == "nvls" and op == "allreduce" and view.nvls_allreduce_bw:
                # Never below NCCL's own rating (its picks at small sizes are what the
                # measurements show), raised to netsim's NVLS where that is faster: a
                # loop of D iterations takes D + NVLS_FILL_STAGES at the chunk's rate.
                depth = nvls_pipeline_depth(size, view)
                bw = max(bw, view.nvls_allreduce_bw * depth / (depth + NVLS_FILL_STAGES)
                         / nvls_reduce_factor(size, view))
            lat = _latency(op, algorithm, protocol, view)
            if (view.nodes > 1 and (op, algorithm, protocol) == ("allreduce", "ring", "Simple")
                    and size / (net_graph(view)[0] * view.ranks) >= 64):
                lat *= RING_PLATEAU if _ARCH_INDEX[view.arch] >= _ARCH_INDEX["ampere"] else 1.9
            out.append(Choice(algorithm, protocol, lat, bw, lat + size / (1000.0 * bw),
                              channels_for(algorithm, protocol, size, view)))
    return out


def choose(op: str, view: NcclView, size: float) -> Choice:
    """The (algorithm, protocol) NCCL runs: the smallest predicted time (first on ties)."""
    return min(candidates(op, view, size), key=lambda c: c.time_us)
