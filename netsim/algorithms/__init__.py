"""Collective algorithms as schedule builders, found by op and name in a registry.

>>> from netsim.algorithms import build_schedule
>>> s = build_schedule("allreduce", "ring", 4, 4e6)
>>> s.num_sends, s.total_bytes   # 2 (p-1) steps of p sends of S/p bytes
(24, 24000000.0)
"""

from .catalogue import collective_names, load_collective, save_collective
from .options import AlgoOptions
from .orders import ORDERS, rank_order
from .registry import (OPS, Algorithm, algorithms_for, build_schedule, get_algorithm,
                       register)
from .verify import problems, verify

# Importing the algorithm modules registers their algorithms.
from . import (allgather, allreduce, alltoall, broadcast,  # noqa: E402,F401  isort: skip
               dimensionwise, hierarchical, innetwork, reducescatter,
               tenstorrent)  # tenstorrent: the calibration helper's tt-metal CCL algorithms
from . import nccl  # noqa: E402,F401  isort: skip  (NCCL's tuner: registers 'nccl')
from . import synth  # noqa: E402,F401  isort: skip  (schedules synthesised for the machine)
from .nccl.settings import NCCL_SETTINGS, nccl_options  # noqa: E402  isort: skip

__all__ = ["OPS", "AlgoOptions", "Algorithm", "register", "get_algorithm", "algorithms_for",
           "build_schedule", "verify", "problems", "ORDERS", "rank_order", "load_collective",
           "collective_names", "save_collective", "NCCL_SETTINGS", "nccl_options"]
