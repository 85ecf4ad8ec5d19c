"""What one size sweep shares across its sizes (run_sweep): the router, a tick per size."""

from __future__ import annotations

from netsim.run.collective import run_sweep
from netsim.topology import ring


def test_run_sweep_calls_each_once_per_size_after_its_run_in_order():
    seen = []
    runs = run_sweep("allreduce", ring(4, bandwidth=1e9), "ring", "1KiB:4KiB",
                     each=seen.append)
    assert seen == runs and [r.size_bytes for r in seen] == [1024.0, 2048.0, 4096.0]
