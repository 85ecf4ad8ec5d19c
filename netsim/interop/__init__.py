"""Files of other tools: MSCCL XML algorithms, Chakra execution traces, ASTRA-sim networks.

* :mod:`.msccl`, :mod:`.msccl_write`: MSCCL XML <-> netsim schedules;
* :mod:`.schedule_files`: a schedule file where an algorithm name goes (``--algo a.xml``);
* :mod:`.chakra`: Chakra execution traces <-> netsim schedules (needs ``mlc-chakra``);
* :mod:`.simgrid`: netsim machines -> SimGrid platforms (read by
  :mod:`netsim.topology.simgrid`);
* ASTRA-sim analytical network YAML <-> netsim machines: :mod:`netsim.topology.astra`
  (a machine format, so it lives with the topology files; re-exported here).

>>> from netsim.interop import schedule_from_msccl, ring_allreduce_xml
>>> schedule_from_msccl(ring_allreduce_xml(3), 3e6).num_sends
12
"""

from ..topology.astra import (ASTRA_GB, astra_network, astra_network_yaml, is_astra_network,
                              load_astra_network, topology_from_astra)
from .chakra import (CHAKRA_MISSING, COMM_OPS, TraceNode, have_chakra, read_comm_groups,
                     read_trace,
                     read_workload, trace_paths, workload_schedule, write_workload)
from .msccl import (COLL_OPS, STEP_TYPES, load_msccl, parse_msccl, ring_allreduce_xml,
                    schedule_from_msccl)
from .msccl_write import EXPORTABLE, algo_xml, schedule_to_msccl
from .schedule_files import file_algorithm, is_schedule_file
from .simgrid import simgrid_platform

__all__ = ["COLL_OPS", "STEP_TYPES", "load_msccl", "parse_msccl", "ring_allreduce_xml",
           "schedule_from_msccl", "EXPORTABLE", "algo_xml", "schedule_to_msccl",
           "file_algorithm", "is_schedule_file",
           "CHAKRA_MISSING", "COMM_OPS", "TraceNode", "have_chakra", "read_trace",
           "read_comm_groups",
           "read_workload", "trace_paths", "workload_schedule", "write_workload",
           "ASTRA_GB", "astra_network", "astra_network_yaml", "is_astra_network",
           "load_astra_network", "topology_from_astra", "simgrid_platform"]
