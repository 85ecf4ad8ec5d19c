"""Collective algorithms as schedule builders, found by op and name in a registry.

>>> from netsim.algorithms import build_schedule
>>> s = build_schedule("allreduce", "ring", 4, 4e6)
>>> s.num_sends, s.total_bytes   # 2 (p-1) steps of p sends of S/p bytes
(24, 24000000.0)
"""

from .options import AlgoOptions
from .registry import (OPS, Algorithm, algorithms_for, build_schedule, get_algorithm,
                       register)

__all__ = ["OPS", "AlgoOptions", "Algorithm", "register", "get_algorithm", "algorithms_for",
           "build_schedule"]
