"""The packet model written with SimPy's processes and resources, to price that idiom.

netsim.packet.network schedules its events (transmission ends, packet arrivals, credit
returns) as SimPy timeouts with handler callbacks. This variant, for bench_packet.py
``--processes``, models what those handlers do with SimPy's primitives instead:

* every output port (link) is a process that holds the link while a packet is sent
  (``yield`` its transmission timeout), then frees the buffer the packet left, requests
  the next link for that buffer's new head and starts its own next packet; an idle port
  waits for an event;
* every input buffer is a ``simpy.Store`` of packets (the port reads its head);
* every input buffer's credits are a ``simpy.Container`` at the upstream port, taken when
  a packet starts, put back one link latency after the packet left the buffer.

A packet starts on an idle port in the handler that made it startable (a request, a
credit), as in the callback model, and the port process picks up its transmission: every
timeout is then scheduled at the same point as there, and the results are identical.
Packet arrivals and credit returns stay timeouts with callbacks (a process per packet hop
would add a generator per hop).
"""

from __future__ import annotations

import simpy

from netsim.packet import PacketOptions
from netsim.packet.network import _F, _HOP, _IDX, _PAY, _TAIL, _VC, _WIRE, _PacketRun


class ProcessRun(_PacketRun):
    """:class:`_PacketRun` with a process per port, Stores and Containers."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        env, n_links = self.env, self.topo.num_links
        self.stores = [simpy.Store(env) for _ in range(2 * n_links)]
        self.inbuf = [store.items for store in self.stores]    # read-only view of each
        self.credit = [simpy.Container(env, capacity=d, init=d)
                       for d in self.depth.repeat(2).tolist()]
        self.wake: list = [None] * n_links
        self.tx: list = [None] * n_links
        for link in range(n_links):
            env.process(self._port(link))

    def _try_start(self, link: int) -> None:
        """Start the next packet on ``link`` now, as the callback model does (the first
        requester, round-robin, with a credit), and hand its transmission to the port."""
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

    def _port(self, link: int):
        """The output port: holds the link while a packet is sent, then frees the buffer
        it came from and starts the next one; waits for a start when idle."""
        env = self.env
        while True:
            if not self.busy[link]:
                self.wake[link] = env.event()
                yield self.wake[link]
            sent, who, pkt = self.tx[link]
            yield sent
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

    def run(self):
        ready = [op for op, w in enumerate(self.waiting) if w == 0]
        self._release(ready)
        # the ports wait for ever once idle: run until the last op has finished
        self.env.run(until=self._done)
        return super()._result(self._finish_array())


def execute_processes(topology, schedule, routes, *, options: PacketOptions):
    """The process variant of ``netsim.packet.execute_packets`` (no overhead, no
    ``not_before``): the same Result."""
    import numpy as np

    run = ProcessRun(topology, schedule, routes, overhead=0.0, not_before=None,
                     options=options, record_queues=False, record_deliveries=False)
    run._done = run.env.event()
    left = [schedule.num_ops]
    finish = run._finish

    def counted_finish(op):
        ready = finish(op)
        left[0] -= 1
        if left[0] == 0:
            run._done.succeed()
        return ready

    run._finish = counted_finish
    run._finish_array = lambda: np.asarray(run.op_finish, dtype=np.float64)
    return run.run()


def simulate_processes(topology, schedule, options: PacketOptions):
    """The process variant of ``netsim.packet.simulate_packets`` (default placement)."""
    from netsim.engine import default_placement, route_schedule

    placement = default_placement(topology, schedule.num_ranks)
    routes = route_schedule(topology, schedule, placement, None)
    return execute_processes(topology, schedule, routes, options=options)
