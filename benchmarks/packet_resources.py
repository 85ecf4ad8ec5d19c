"""The packet model with SimPy Stores and Containers, to price that idiom.

netsim.packet.network keeps each input buffer in a deque and its credits in a counter.
This variant, for bench_packet.py ``--resources``, keeps them in SimPy's resources:

* every input buffer is a ``simpy.Store`` of packets (its port reads the head, a packet
  is put in when it arrives and got out when its tail has left);
* every input buffer's credits are a ``simpy.Container`` at the upstream port, got when
  a packet starts there, put back one link latency after the packet left the buffer.

Everything else (the port processes, the timeouts, the order of events) is the model's,
and so are the results; every put and get is one more event in the queue.
"""

from __future__ import annotations

import simpy

from netsim.packet import PacketOptions
from netsim.packet.network import _F, _HOP, _IDX, _PAY, _TAIL, _VC, _WIRE, _PacketRun


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
        env = self.env
        now = env.now
        if who >= 0:
            pkt = self.inbuf[who][0]
            pkt[_HOP] += 1
        else:
            s = self.inject[link].popleft()
            k = self.sent[s]
            self.sent[s] = k + 1
            pay = min(self.payload, self.sub_bytes[s] - k * self.payload)
            pkt = [s, 0, pay, pay + self.header, k, now, 0]
        pkt[_VC] = vc
        self.credit[2 * link + vc].get(1)
        self.busy[link] = True
        rate, lat = self.rate[link], self.lat[link]
        s, hop = pkt[_F], pkt[_HOP]
        end = max(now + pkt[_WIRE] / rate, pkt[_TAIL])
        self.link_bytes[link] += pkt[_PAY]
        self.link_busy[link] += end - now
        if pkt[_IDX] == 0:
            self.link_flows[link] += 1
            self.link_peak[link] = max(self.link_peak[link], self.link_flows[link])
        self.hops += 1
        pkt[_TAIL] = end + lat
        self.tx[link] = (env.timeout(end - now), who, pkt)
        if hop + 1 == len(self.path[s]):
            self._at(end - now + lat, self._on_delivered, (link, pkt))
        elif self.cut_through:
            self._at(self.header / rate + lat, self._on_arrival, (link, pkt))
        else:
            self._at(end - now + lat, self._on_arrival, (link, pkt))
        wake = self.wake[link]
        if wake is not None:
            self.wake[link] = None
            wake.succeed()

    def _sent(self, link: int, who: int, pkt: list) -> None:
        self.busy[link] = False
        s = pkt[_F]
        if pkt[_IDX] == self.npk[s] - 1:
            self.link_flows[link] -= 1
        if who >= 0:
            self.stores[who].get()
            self._occupancy(who >> 1, -1)
            self._at(self.lat[who >> 1], self._on_credit, who)
            buf = self.inbuf[who]
            if buf:
                head = buf[0]
                self._request(self.path[head[_F]][head[_HOP] + 1], who)
        else:
            queue = self.inject[link]
            if self.sent[s] < self.npk[s]:
                queue.append(s)
            if queue:
                self.requests[link].append(-1)
            else:
                self.injecting[link] = False
        self._try_start(link)

    def _on_arrival(self, event) -> None:
        link, pkt = event.value
        b = 2 * link + pkt[_VC]
        self.stores[b].put(pkt)
        self._occupancy(link, +1)
        if len(self.inbuf[b]) == 1:
            self._request(self.path[pkt[_F]][pkt[_HOP] + 1], b)

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
