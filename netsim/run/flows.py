"""Running a flow file: its flows on its links, ids as the file gives them."""

from __future__ import annotations

import numpy as np

from ..engine import simulate
from ..schedule.flowfile import FlowSet

__all__ = ["simulate_flows"]


def simulate_flows(flowset: FlowSet, **options):
    """Simulate a :class:`FlowSet`; the result's flow ids are the file's ids."""
    result = simulate(flowset.topology, flowset.schedule,
                      np.arange(flowset.topology.num_nodes), not_before=flowset.not_before,
                      **options)
    result.op_ids = flowset.flow_ids
    return result
