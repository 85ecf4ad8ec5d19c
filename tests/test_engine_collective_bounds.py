"""End-to-end: generated topology + routing + engine against closed-form bounds."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import simulate
from netsim.topology import mesh, torus
from netsim.schedule.traffic import all_to_all, shift


@pytest.mark.parametrize("k", [2, 4, 6])
def test_alltoall_on_mesh_meets_the_bisection_bound_exactly(k):
    # Direct all-to-all, m bytes per pair, XY routing, zero latency: T = k^3 m / (4 B).
    m, bandwidth = 1 << 20, 50e9
    result = simulate(mesh((k, k), bandwidth=bandwidth), all_to_all(k * k, m))
    assert result.makespan == pytest.approx(k**3 * m / (4 * bandwidth), rel=1e-9)
    # The middle links of the cut carry k^2/2 * k^2/2 / k pairs' worth... all of it at full rate.
    assert result.max_link_utilization == pytest.approx(1.0, rel=1e-9)


def test_alltoall_on_torus_meets_its_bisection_bound():
    # A k x k torus has twice the mesh's bisection: T = k^3 m / (8 B) with balanced ties.
    k, m, bandwidth = 4, 1 << 20, 50e9
    result = simulate(torus((k, k), bandwidth=bandwidth), all_to_all(k * k, m))
    assert result.makespan == pytest.approx(k**3 * m / (8 * bandwidth), rel=1e-9)


def test_shift_on_ring_uses_one_hop_at_full_rate_with_latency():
    n, m, bandwidth, latency = 8, 1e8, 25e9, 1e-6
    from netsim.topology import ring

    result = simulate(ring(n, bandwidth=bandwidth, latency=latency), shift(n, m))
    assert result.makespan == pytest.approx(latency + m / bandwidth, rel=1e-12)
    used = result.link_bytes > 0
    assert used.sum() == n and np.allclose(result.link_bytes[used], m)
