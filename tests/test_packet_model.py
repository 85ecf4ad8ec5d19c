"""The packet model (netsim.packet) against closed forms derived here.

C is a link's wire rate (bytes/s), L its latency (s), P the payload and H the header of a
packet (bytes), S = P + H; a message of B = n P bytes is n packets.
"""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import max_min_rates, simulate
from netsim.errors import ResourceError
from netsim.packet import MAX_PACKETS, PacketOptions, simulate_packets
from netsim.schedule import ScheduleBuilder
from netsim.topology import TopologyBuilder, mesh

C, L, P, H = 1e9, 1e-6, 1000.0, 24.0
S = P + H


def _chain(hops: int, *, latency: float = L):
    """hops + 1 nodes in a line (both directions), every link C and ``latency``."""
    return mesh((1, hops + 1), bandwidth=C, latency=latency)


def _sends(num_ranks: int, sends) -> object:
    b = ScheduleBuilder(num_ranks)
    for src, dst, nbytes in sends:
        b.send(src, dst, nbytes)
    return b.build()


@pytest.mark.parametrize("hops", [1, 2, 4])
@pytest.mark.parametrize("n", [1, 5])
def test_lone_message_store_and_forward(hops, n):
    # Packet 1 crosses h hops in h (S/C + L); the other n - 1 follow it S/C apart.
    expected = hops * S / C + (n - 1) * S / C + hops * L
    r = simulate_packets(_chain(hops), _sends(hops + 1, [(0, hops, n * P)]),
                         options=PacketOptions(payload=P, header=H))
    assert r.makespan == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("hops", [1, 3])
@pytest.mark.parametrize("n", [1, 5])
def test_lone_message_cut_through(hops, n):
    # Each router forwards a packet once its header is in: h - 1 header times and h
    # latencies ahead of the n S / C the first link takes.
    expected = n * S / C + (hops - 1) * H / C + hops * L
    r = simulate_packets(_chain(hops), _sends(hops + 1, [(0, hops, n * P)]),
                         options=PacketOptions(payload=P, header=H, switching="cut-through"))
    assert r.makespan == pytest.approx(expected, rel=1e-12)


def test_cut_through_without_header_is_the_fluid_time():
    topo, sched = _chain(3), _sends(4, [(0, 3, 7 * P)])
    r = simulate_packets(topo, sched, options=PacketOptions(payload=P, header=0,
                                                              switching="cut-through"))
    assert r.makespan == pytest.approx(simulate(topo, sched).makespan, rel=1e-12)


def _star(k: int):
    """k sources into one switch, one link on to the sink: the shared link is sw->d."""
    b = TopologyBuilder("star")
    for i in range(k):
        b.add_node(f"s{i}")
    b.add_node("d")
    b.add_node("sw", switch=True)
    for i in range(k):
        b.add_link(f"s{i}", "sw", C, L)
    b.add_link("sw", "d", C, L)
    b.set_endpoints([f"s{i}" for i in range(k)] + ["d"])
    return b.build()


def _counts(deliveries, t: float) -> np.ndarray:
    return np.array([np.searchsorted(d, t, side="right") for d in deliveries])


@pytest.mark.parametrize("k", [2, 4])
def test_flows_through_one_link_share_it_equally(k):
    n = 40
    sched = _sends(k + 1, [(i, k, n * P) for i in range(k)])
    r = simulate_packets(_star(k), sched, options=PacketOptions(payload=P, header=H),
                         record_deliveries=True)
    deliveries = r.meta["deliveries"]
    for t in np.concatenate(deliveries):       # at every arrival: within one packet
        counts = _counts(deliveries, t)
        assert counts.max() - counts.min() <= 1
    # and the shared link is never idle after the first packet: k n S / C after it arrives
    assert r.makespan == pytest.approx(2 * (S / C + L) + (k * n - 1) * S / C, rel=1e-12)


@pytest.mark.parametrize("first", [0, 1])
def test_packets_arriving_together_are_served_in_release_order(first):
    # Two sends ready together: their packets reach the switch at the same times. Ops
    # ready together are released from a stack (the last listed first), and events due
    # at one time run in the order they were scheduled, so the send listed last wins
    # every tie at the shared port and the two alternate, one packet apart.
    n = 6
    order = [first, 1 - first]
    sched = _sends(3, [(i, 2, n * P) for i in order])
    r = simulate_packets(_star(2), sched, options=PacketOptions(payload=P, header=H),
                         record_deliveries=True)
    a, b = (np.asarray(d) for d in r.meta["deliveries"])     # in the schedule's order
    assert np.all(b < a) and np.all(a[:-1] < b[1:])
    assert np.allclose(np.diff(np.sort(np.concatenate([a, b]))), S / C, rtol=1e-12)


def test_two_flows_from_one_sender_alternate():
    sched = _sends(2, [(0, 1, 30 * P), (0, 1, 30 * P)])
    r = simulate_packets(_chain(1), sched, options=PacketOptions(payload=P, header=H),
                         record_deliveries=True)
    a, b = r.meta["deliveries"]
    assert np.all(np.abs(np.arange(30) - np.searchsorted(b, a, side="right")) <= 1)


def _max_min(k: int, paths) -> np.ndarray:
    """Max-min rates of flows along the chain's forward links ``paths`` (hop indices)."""
    from scipy.sparse import csr_matrix

    rows = np.repeat(np.arange(len(paths)), [len(p) for p in paths])
    cols = np.concatenate(paths)
    return max_min_rates(csr_matrix((np.ones(cols.size), (rows, cols)), shape=(len(paths), k)),
                         np.full(k, C))


def _rates_in_window(deliveries, t0: float, t1: float) -> np.ndarray:
    """Payload bytes/s each flow received in [t0, t1]."""
    return (_counts(deliveries, t1) - _counts(deliveries, t0)) * P / (t1 - t0)


def _window(deliveries):
    first_done = min(d[-1] for d in deliveries)
    return first_done / 4, 3 * first_done / 4


def test_parking_lot_one_short_flow_per_link_matches_max_min():
    # Long flow 0 -> k; short flow i -> i+1 on every link. Per output port, round-robin
    # between the long flow's input and the short flow's injection gives each C/2: the
    # max-min allocation too.
    k, n = 3, 120
    sends = [(0, k, n * P)] + [(i, i + 1, n * P) for i in range(k)]
    r = simulate_packets(_chain(k, latency=0.0), _sends(k + 1, sends),
                         options=PacketOptions(payload=P, header=0), record_deliveries=True)
    t0, t1 = _window(r.meta["deliveries"])
    rr = _rates_in_window(r.meta["deliveries"], t0, t1)
    paths = [list(range(k))] + [[i] for i in range(k)]
    mm = _max_min(k, paths)
    assert np.allclose(mm, C / 2)
    assert np.allclose(rr, mm, atol=2 * P / (t1 - t0))


@pytest.mark.parametrize("k", [3, 4])
def test_parking_lot_merging_flows_differs_from_max_min(k):
    # Flow j goes from node j to node k (all to one sink). At every node j >= 1 the output
    # port alternates between its input (flows 0..j-1) and flow j's injection, so flow j
    # gets C/2^(k-j) and flows 0 and 1 get C/2^(k-1). Max-min gives every flow C/k.
    n = 160
    sends = [(j, k, n * P) for j in range(k)]
    r = simulate_packets(_chain(k, latency=0.0), _sends(k + 1, sends),
                         options=PacketOptions(payload=P, header=0), record_deliveries=True)
    t0, t1 = _window(r.meta["deliveries"])
    rr = _rates_in_window(r.meta["deliveries"], t0, t1)
    expected = np.array([C / 2 ** (k - max(j, 1)) for j in range(k)])
    assert np.allclose(rr, expected, atol=2 * P / (t1 - t0))
    mm = _max_min(k, [list(range(j, k)) for j in range(k)])
    assert np.allclose(mm, C / k)
    assert rr[0] < mm[0] / 1.3                   # the far flow starves under round-robin


@pytest.mark.parametrize("hops", [2, 3, 5])
def test_one_packet_buffers_run_at_the_credit_round_trip(hops):
    # A buffer slot is held from the send on link i (credit taken) until the packet's tail
    # has left on link i+1 (S/C + L + S/C), and its credit needs L more to come back: one
    # packet per 2 S/C + 2 L on every link but the last; the first packet takes h (S/C + L).
    n = 6
    expected = hops * (S / C + L) + (n - 1) * (2 * S / C + 2 * L)
    r = simulate_packets(_chain(hops), _sends(hops + 1, [(0, hops, n * P)]),
                         options=PacketOptions(payload=P, header=H, buffer=1))
    assert r.makespan == pytest.approx(expected, rel=1e-12)
    # deep enough buffers restore the line rate
    deep = simulate_packets(_chain(hops), _sends(hops + 1, [(0, hops, n * P)]),
                            options=PacketOptions(payload=P, header=H))
    assert deep.makespan == pytest.approx(hops * (S / C + L) + (n - 1) * S / C, rel=1e-12)


def test_same_result_shape_and_bytes_as_fluid():
    from netsim.algorithms import build_schedule
    from netsim.topology import ring

    topo = ring(4, bandwidth=C, latency=L)
    sched = build_schedule("allreduce", "ring", 4, 64 * P)
    fluid = simulate(topo, sched)
    packet = simulate_packets(topo, sched, options=PacketOptions(payload=P, header=0),
                              record_queues=True)
    assert packet.op_finish.shape == fluid.op_finish.shape
    assert np.allclose(packet.link_bytes, fluid.link_bytes)        # payload conserved
    assert np.all(packet.op_finish >= packet.op_start)
    assert np.all(np.asarray(packet.meta["queue_peak"]) <= packet.meta["buffer"])
    packet.to_json()                                                # plain values only
    times, occupancy = map(np.asarray, packet.meta["queue_series"][0])
    assert occupancy.min() >= 0 and np.all(np.diff(times) >= 0)
    # whole packets and store-and-forward only add time: never faster than the fluid model
    assert packet.makespan >= fluid.makespan * (1 - 1e-12)


def test_too_many_packets_is_refused_before_running():
    sched = _sends(2, [(0, 1, (MAX_PACKETS + 1) * P)])
    with pytest.raises(ResourceError, match="about 1,000,001 packets"):
        simulate_packets(_chain(1), sched, options=PacketOptions(payload=P))


def _one_way_ring(dateline: bool):
    """3 nodes, links i -> i+1 only; with ``dateline`` they are dimension 0 and the link
    back to n0 is a wrap-around link (as a torus generator marks it)."""
    b = TopologyBuilder("one-way ring")
    for i in range(3):
        b.add_node(f"n{i}")
    for i in range(3):
        grid = {"dim": 0, "wrap": i == 2} if dateline else {}
        b.add_link(f"n{i}", f"n{(i + 1) % 3}", C, 0.0, **grid)
    return b.build()


def test_cyclic_routes_deadlock_without_a_dateline_and_not_with_one():
    # Every node sends two hops on: without virtual channels each one-packet buffer ends
    # up holding a packet that waits for the next buffer, round the cycle. With the
    # dateline, packets that crossed the wrap link use the second channel's buffers.
    from netsim.errors import SimulationError

    sched = _sends(3, [(i, (i + 2) % 3, 10 * P) for i in range(3)])
    options = PacketOptions(payload=P, buffer=1)
    with pytest.raises(SimulationError, match="deadlock"):
        simulate_packets(_one_way_ring(False), sched, options=options)
    r = simulate_packets(_one_way_ring(True), sched, options=options)
    assert np.isfinite(r.makespan)


def test_progress_reports_packet_hops_and_time_as_the_run_goes():
    # 4,100 packets over one hop: one report, at the 4,096th hop, which starts when the
    # 4,095 packets before it have been sent, S/C apart.
    calls = []
    r = simulate_packets(_chain(1), _sends(2, [(0, 1, 4100 * P)]),
                         options=PacketOptions(payload=P, header=H),
                         progress=lambda hops, t: calls.append((hops, t)))
    assert r.events == 4100
    assert calls == [(4096, pytest.approx(4095 * S / C, rel=1e-12))]
