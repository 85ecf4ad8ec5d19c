"""The compiled loop that repairs the last solution (engine.incremental): when it is
chosen, what it needs, and a case where its checks once drifted. (Its answers against the
reference on random cases: tests/test_engine_conformance.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import EngineConfig, simulate
from netsim.errors import ResourceError
from netsim.schedule import ScheduleBuilder

from engine_helpers import lognormal_alltoall

pytest.importorskip("numba")

#: From the first event on, on flows (not rate classes).
INCREMENTAL = EngineConfig(loop="incremental", symmetry=False)
KERNEL = EngineConfig(loop="kernel", symmetry=False)


def test_flat_schedules_take_the_incremental_loop_at_any_size():
    """Under ``auto`` (handing over from the first event), a schedule without
    dependencies (an imbalanced all-to-all of 72 flows) runs in engine.incremental; one
    with dependencies of the same size in engine.kernel."""
    config = EngineConfig(numpy_work=0, classes=False)
    topo, schedule = lognormal_alltoall((3, 3), 3)
    assert simulate(topo, schedule, config=config).meta["engine"]["loop"] == "incremental"
    b = ScheduleBuilder(9)
    last = None
    for k in range(72):                    # a chain: each send waits for the one before
        last = b.send(k % 9, (k + 1) % 9, 1e5 + k, [] if last is None else [last])
    assert simulate(topo, b.build(), config=config).meta["engine"]["loop"] == "kernel"


def test_a_work_space_beyond_the_budget_is_refused_with_its_estimate():
    """The incremental loop's work space (40 B per path link, 136 B per flow) beyond the
    memory budget is refused with one line, not switched to another loop."""
    topo, schedule = lognormal_alltoall((2, 3), 5)
    small = EngineConfig(loop="incremental", symmetry=False, memory_budget=1000)
    with pytest.raises(ResourceError, match=r"incremental loop on 30 flows .*about 5\.9\d* KiB"):
        simulate(topo, schedule, config=small)
    assert simulate(topo, schedule, config=EngineConfig(
        loop="kernel", symmetry=False, memory_budget=1000)).meta["engine"]["loop"] == "kernel"


@pytest.mark.parametrize("shape", [(4, 11), (5, 11), (6, 11)])
def test_a_check_judges_saturation_relative_to_the_level(shape):
    """Log-normal all-to-alls (seed 1) where a check once let a slack of up to 1e-12 of the
    capacity pass as "still saturated": on a link of ~100 flows the one rising flow took
    it and froze 5e-11 above the flows bottlenecked with it, and a later check at its rate
    left those frozen, so rates went far from max-min (op finish times off by 1.8e-4, 0.72
    and 0.83 of the makespan against engine.kernel's full re-solve). The loop agrees with
    engine.kernel to rounding, with the same events."""
    topo, schedule = lognormal_alltoall(shape, 1)
    ours = simulate(topo, schedule, config=INCREMENTAL)
    full = simulate(topo, schedule, config=KERNEL)
    assert ours.meta["engine"]["loop"] == "incremental"
    assert ours.events == full.events
    assert np.max(np.abs(ours.op_finish - full.op_finish)) <= 1e-12 * full.makespan
