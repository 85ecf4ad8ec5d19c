"""Running a flow file: its flows on its links, ids as the file gives them."""

from __future__ import annotations

import numpy as np

from ..schedule.flowfile import FlowSet
from .models import simulate_model

__all__ = ["simulate_flows"]


def simulate_flows(flowset: FlowSet, **options):
    """Simulate a :class:`FlowSet`; the result's flow ids are the file's ids. ``model=``
    picks the network model (:func:`~netsim.run.models.simulate_model`)."""
    result = simulate_model(flowset.topology, flowset.schedule,
                      np.arange(flowset.topology.num_nodes), not_before=flowset.not_before,
                      **options)
    result.op_ids = flowset.flow_ids
    return result
