"""NCCL's cost model for NVIDIA machines and the ``nccl`` algorithm that picks as NCCL does.

:mod:`.tuning` holds NCCL's tuner (protocols LL/LL128/Simple, base and per-step latencies,
bus bandwidths, channel counts; NVIDIA/nccl 2.30.7 ``src/graph/tuning.cc``);
:mod:`.model` registers ``nccl`` for allreduce, allgather, reducescatter, broadcast and
reduce: NCCL's choice, run through netsim's engine with the protocol's costs applied;
:mod:`.harness` holds nccl-tests' host side (one thread enqueuing every GPU of ``-g N``),
which bounds the time per iteration at small sizes.

>>> from netsim.algorithms.nccl import NcclView, choose
>>> choose("allgather", NcclView(ranks=8, gpu_bw=370.8, nvls=True), 64 << 20).protocol
'Simple'
"""

from .settings import NCCL_SETTINGS, nccl_options
from .model import GPU_ARCH_OF_PRESET, NETSIM_ALGORITHM, nccl_choice, nccl_view
from .tuning import (ALGORITHMS, ARCHS, NCCL_VERSION, PROTOCOLS, Choice, NcclView, candidates,
                     channels_for, choose, parse_nccl_version, protocol_efficiency,
                     version_text)

__all__ = ["NcclView", "Choice", "choose", "candidates", "channels_for", "protocol_efficiency",
           "nccl_view", "nccl_choice", "PROTOCOLS", "ALGORITHMS", "ARCHS", "NETSIM_ALGORITHM",
           "GPU_ARCH_OF_PRESET", "NCCL_VERSION", "parse_nccl_version", "NCCL_SETTINGS",
           "nccl_options", "version_text"]
