"""Why the packet model beats the fluid model on NVLS all-reduce at 16 MiB.

Streams of messages that each wait for the previous one and pay a per-message overhead a
at the sender: the fluid model gives flows on the same path the same rate, so k streams
that start together stay in phase for ever and all pay a at the same time, the link idle.
Packets under round-robin finish one packet apart, and the streams drift out of phase.
One link of C bytes/s, k streams of m messages of B bytes:

* in phase (the fluid model): every round takes a + k B / C, makespan m (a + k B / C);
* out of phase by one message time (stream i released i B / C later), with a >= (k-1) B/C
  the streams never share the link: stream i ends at m (a + B / C) + i B / C.
"""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import simulate
from netsim.packet import PacketOptions, simulate_packets
from netsim.schedule import ScheduleBuilder
from netsim.topology import mesh

C, P = 1e9, 1000.0


def _streams(k: int, m: int, nbytes: float):
    b = ScheduleBuilder(2)
    last = [None] * k
    for _ in range(m):
        for i in range(k):
            last[i] = b.send(0, 1, nbytes, deps=() if last[i] is None else (last[i],))
    return b.build()


@pytest.mark.parametrize("k,m,n,a", [(2, 4, 4, 5e-6), (4, 3, 2, 7e-6), (8, 3, 1, 7e-6)])
def test_fluid_streams_stay_in_phase_and_packets_drift(k, m, n, a):
    topo = mesh((1, 2), bandwidth=C, latency=0.0)
    schedule = _streams(k, m, n * P)
    t = n * P / C                                      # one message alone on the link
    locked = m * (a + k * t)
    fluid = simulate(topo, schedule, overhead=a)
    assert fluid.makespan == pytest.approx(locked, rel=1e-12)
    # Out of phase by one message time: the same bytes, no sharing, far less idle time.
    not_before = np.zeros(schedule.num_ops)
    not_before[:k] = np.arange(k) * t
    shifted = simulate(topo, schedule, overhead=a, not_before=not_before)
    desync = m * (a + t) + (k - 1) * t
    assert a >= (k - 1) * t and shifted.makespan == pytest.approx(desync, rel=1e-12)
    # Packets (whole, no header: the same link time) start in phase and drift apart: the
    # packet model is faster than the locked fluid streams, never faster than the
    # desynchronised ones, and moves the same bytes.
    packet = simulate_packets(topo, schedule, overhead=a, options=PacketOptions(payload=P))
    assert desync - 1e-12 <= packet.makespan < locked - P / C / 2
    assert packet.link_busy.sum() == pytest.approx(fluid.link_busy.sum(), rel=1e-12)
