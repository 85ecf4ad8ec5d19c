"""Files of other tools: MSCCL XML algorithms, Chakra execution traces, ASTRA-sim networks.

* :mod:`.msccl`, :mod:`.msccl_write`: MSCCL XML <-> netsim schedules;

>>> from netsim.interop import schedule_from_msccl, ring_allreduce_xml
>>> schedule_from_msccl(ring_allreduce_xml(3), 3e6).num_sends
12
"""

from .msccl import COLL_OPS, STEP_TYPES, load_msccl, parse_msccl, ring_allreduce_xml, \
    schedule_from_msccl
from .msccl_write import EXPORTABLE, algo_xml, schedule_to_msccl

__all__ = ["COLL_OPS", "STEP_TYPES", "load_msccl", "parse_msccl", "ring_allreduce_xml",
           "schedule_from_msccl", "EXPORTABLE", "algo_xml", "schedule_to_msccl"]
