"""The packet model with SimPy Stores and Containers, to price that idiom.

netsim.packet.network keeps each input buffer in a deque and its credits in a counter.
This variant, for bench_packet.py ``--resources``, keeps them in SimPy's resources:

* every input buffer is a ``simpy.Store`` of packets (its port reads the head, a packet
  is put in when it arrives and got out when its tail has left);
* every input buffer's credits are a ``simpy.Container`` at the upstream port, got when
  a packet starts there, put back one link latency after the packet left the buffer.

Everything else (the port processes, the timeouts, the order of events) is the model's
(this class overrides only where a packet enters and leaves a buffer and where credits are
taken and given back), and so are the results; every put and get is one more event in the
queue.
"""

from __future__ import annotations

import simpy

from netsim.packet import PacketOptions
from netsim.packet.network import _PacketRun


class ResourceRun(_PacketRun):
    """:class:`_PacketRun` with Stores for buffers and Containers for credits."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        env, n_links = self.env, self.topo.num_links
        self.stores = [simpy.Store(env) for _ in range(2 * n_links)]
        self.inbuf = [store.items for store in self.stores]    # read-only view of each
        self.credit = [simpy.Container(env, capacity=d, init=d)
                       for d in self.depth.repeat(2).tolist()]

    def _try_start(self, link: int) -> None:
        """The model's ``_try_start`` with the credits in Containers."""
        if self.busy[link]:
            return
        queue = self.requests[link]
        for i, who in enumerate(queue):
            vc = self._channel(link, who) if self.dateline else 0
            if self.credit[2 * link + vc].level > 0:
                del queue[i]
                break
        else:
            return
        self.credit[2 * link + vc].get(1)
        self._start(link, who, vc)

    def _enter(self, b: int, pkt: list) -> None:
        self.stores[b].put(pkt)

    def _leave(self, b: int) -> None:
        self.stores[b].get()

    def _on_credit(self, event) -> None:
        b = event.value
        self.credit[b].put(1)
        if not self.busy[b >> 1]:
            self._try_start(b >> 1)


def execute_resources(topology, schedule, routes, *, options: PacketOptions):
    """``netsim.packet.execute_packets`` run by this variant (no overhead, no
    ``not_before``, no recording): the same Result."""
    return ResourceRun(topology, schedule, routes, overhead=0.0, not_before=None,
                      options=options, record_queues=False, record_deliveries=False).run()


def simulate_resources(topology, schedule, options: PacketOptions):
    """``netsim.packet.simulate_packets`` run by this variant (default placement)."""
    from netsim.engine import default_placement, route_schedule

    placement = default_placement(topology, schedule.num_ranks)
    routes = route_schedule(topology, schedule, placement, None)
    return execute_resources(topology, schedule, routes, options=options)
