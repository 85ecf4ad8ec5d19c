"""Run a placed schedule packet by packet: the packet-level twin of the fluid executor.

The inputs are the fluid engine's (topology, schedule, routes in send-op order, per-message
``overhead``, ``not_before``) and so is the output (:class:`~netsim.engine.result.Result`);
``meta`` adds per-port queue occupancy. The model:

* A send is released as in the fluid engine (dependencies met, not before ``not_before``),
  waits ``overhead`` at the sender, then each of its sub-flows (a sprayed send has several)
  is cut into packets of ``payload`` bytes (the last one shorter) plus ``header`` bytes.
  The send completes when the last packet of its last sub-flow has arrived.
* A link serialises one packet at a time (wire bytes / wire rate) and delivers it after its
  latency. Store-and-forward: the next router sees the packet when its tail arrives.
  Virtual cut-through: when its header has arrived, but its tail cannot leave the router
  before it has come in.
* Every link ends in an input buffer of a set depth (packets) at its downstream node, with
  credit flow control: a link starts a packet only holding a credit for that buffer; the
  credit comes back one link latency after the packet has left the buffer (its tail sent
  on, or delivered at its destination, which takes packets at once).
* Rings and tori get two virtual channels per link (a buffer each, same depth), the
  dateline scheme: a packet travels on channel 0 and moves to channel 1 when it crosses a
  wrap-around link, back to 0 when it turns into another dimension. Routes that wrap
  then cannot wait on each other in a cycle (dimension-order routes on meshes, up/down
  routes on trees never do). Other cyclic routes can deadlock; that is reported.
* An input buffer is a FIFO read one packet at a time (head-of-line blocking included).
  Each output port (link) serves its requesters round-robin: input buffers whose head
  packet goes there, and the node's injection port, which itself serves the sub-flows
  starting on that link in turn; a served requester goes to the back.

The model runs on SimPy (costs in ``docs/packet.md``). Every output port is a process
that holds its link while a packet is sent (the transmission is a timeout it yields) and
then frees the buffer the packet came from; an idle port waits for an event. Packet
arrivals, credit returns, op releases and overheads are timeouts with their handler as a
callback. All go in the environment's queue, which runs them in time order and, at
equal times, in the order they were scheduled. A packet starts on an idle port inside the
handler that made it startable (a request, a credit, the end of a transmission), so its
timeouts take their places in the queue at once. Buffers are deques and credits
counters: SimPy Stores and Containers give the same results in 1.9-2.5 times the time
(``benchmarks/packet_resources.py``). No process per packet, and a packet is a small list.
"""

from __future__ import annotations

from collections import deque

import numpy as np
import simpy

from ..engine.result import Result
from ..errors import SimulationError
from ..schedule import BARRIER, COMPUTE, SEND, Schedule
from .options import PacketOptions

__all__ = ["execute_packets"]

# A packet: [sub-flow, hop, payload bytes, wire bytes, index in its sub-flow, tail time,
# virtual channel]. Buffer b = 2 link + channel is the input buffer of that channel at the
# far end of the link.
_F, _HOP, _PAY, _WIRE, _IDX, _TAIL, _VC = range(7)


class _PacketRun:
    def __init__(self, topology, schedule: Schedule, routes, *, overhead: float,
                 not_before, options: PacketOptions, record_queues: bool,
                 record_deliveries: bool, progress=None) -> None:
        self.topo, self.schedule = topology, schedule
        self.opts = options = options.resolved(topology)
        self.payload, self.header = float(options.payload), float(options.header)
        self.cut_through = options.switching == "cut-through"
        self.overhead = float(overhead)
        n_ops = schedule.num_ops
        self.not_before = ([0.0] * n_ops if not_before is None
                           else np.asarray(not_before, dtype=np.float64).tolist())
        rate = options.wire_rates(topology)
        latency = np.asarray(topology.latency, dtype=np.float64)
        self.rate, self.lat = rate.tolist(), latency.tolist()
        self.depth = options.depths(rate, latency)
        n_links = topology.num_links
        self.credits = np.repeat(self.depth, 2).tolist()  # per buffer (link, channel)
        self.busy = [False] * n_links
        self.requests = [deque() for _ in range(n_links)]
        self.inbuf = [deque() for _ in range(2 * n_links)]
        self.inject = [deque() for _ in range(n_links)]   # sub-flows waiting per first link
        self.injecting = [False] * n_links     # the injection port requests or sends there
        self.wrap = np.asarray(topology.wrap, dtype=bool).tolist()
        self.dateline = any(self.wrap)          # else every packet stays on channel 0
        self.dim = np.asarray(topology.dim, dtype=np.int64).tolist()

        # Sub-flows (routes are in the order of the schedule's send ops).
        send_ops = np.flatnonzero(schedule.kind == SEND)
        sub_op = send_ops[routes.sub_req]
        sub_bytes = schedule.nbytes[sub_op] * routes.sub_frac
        ptr = np.asarray(routes.path_ptr, dtype=np.int64)
        links = np.asarray(routes.path_links, dtype=np.int64).tolist()
        self.path = [links[a:b] for a, b in zip(ptr[:-1].tolist(), ptr[1:].tolist())]
        self.sub_op = sub_op.tolist()
        self.sub_bytes = sub_bytes.tolist()
        self.sub_latency = np.asarray(routes.sub_latency, dtype=np.float64).tolist()
        self.npk = np.where(sub_bytes > 0, np.ceil(sub_bytes / self.payload), 0) \
            .astype(np.int64).tolist()
        n_sub = len(self.sub_op)
        self.sent = [0] * n_sub
        self.arrived = [0] * n_sub
        self.op_subs: list[list[int]] = [[] for _ in range(n_ops)]
        for s, op in enumerate(self.sub_op):
            self.op_subs[op].append(s)
        self.subs_left = [len(s) for s in self.op_subs]
        self.deliveries = [[] for _ in range(n_sub)] if record_deliveries else None

        # Dependencies: successors as lists, waiting counts.
        dep_ptr, dep_idx = schedule.dep_ptr.tolist(), schedule.dep_idx.tolist()
        self.succ: list[list[int]] = [[] for _ in range(n_ops)]
        for op in range(n_ops):
            for d in dep_idx[dep_ptr[op]:dep_ptr[op + 1]]:
                self.succ[d].append(op)
        self.waiting = [dep_ptr[i + 1] - dep_ptr[i] for i in range(n_ops)]
        self.kind = schedule.kind.tolist()
        self.seconds = schedule.seconds.tolist()
        self.op_release = [np.nan] * n_ops
        self.op_start = [np.nan] * n_ops
        self.op_finish = [np.nan] * n_ops

        # Statistics.
        self.link_bytes = [0.0] * n_links
        self.link_busy = [0.0] * n_links
        self.link_flows = [0] * n_links
        self.link_peak = [0] * n_links
        self.occ = [0] * n_links                          # packets in each input buffer
        self.occ_peak = [0] * n_links
        self.occ_area = [0.0] * n_links                   # packet-seconds, for the mean
        self.occ_since = [0.0] * n_links
        self.series = [([0.0], [0]) for _ in range(n_links)] if record_queues else None
        self.hops = 0
        self.env = simpy.Environment()
        self.progress = progress
        # One process per output port a route uses; a started packet's transmission is
        # handed to it in ``tx``, through ``wake`` when the port was idle.
        self.tx: list = [None] * n_links
        self.wake: list = [None] * n_links
        for link in sorted(set(links)):
            self.env.process(self._port(link))

    # -- events -------------------------------------------------------------------------
    def _at(self, delay: float, callback, value) -> None:
        """Run ``callback(event)`` ``delay`` s from now, ``event.value`` being ``value``: a
        SimPy timeout in the environment's queue (same time: first scheduled, first run)."""
        self.env.timeout(delay, value).callbacks.append(callback)

    # -- ops ------------------------------------------------------------------------------
    def _release(self, ops: list[int]) -> None:
        """Release ``ops`` now (transitively finishing barriers and instant computes)."""
        now = self.env.now
        work = list(ops)
        while work:
            op = work.pop()
            if self.not_before[op] > now:
                self._at(self.not_before[op] - now, self._on_release, op)
                continue
            self.op_release[op] = now
            kind = self.kind[op]
            if kind == SEND:
                self.op_start[op] = now + self.overhead
                if self.subs_left[op] == 0:
                    work += self._finish(op)
                elif self.overhead > 0:
                    self._at(self.overhead, self._on_inject, op)
                else:
                    self._inject(op)
                continue
            self.op_start[op] = now
            if kind == COMPUTE and self.seconds[op] > 0:
                self._at(self.seconds[op], self._on_finish, op)
            else:
                work += self._finish(op)

    def _finish(self, op: int) -> list[int]:
        """Mark ``op`` finished now; return the ops it makes ready."""
        self.op_finish[op] = self.env.now
        ready = []
        for s in self.succ[op]:
            self.waiting[s] -= 1
            if self.waiting[s] == 0:
                ready.append(s)
        return ready

    def _on_release(self, event) -> None:
        self._release([event.value])

    def _on_finish(self, event) -> None:
        self._release(self._finish(event.value))

    def _on_inject(self, event) -> None:
        self._inject(event.value)

    def _inject(self, op: int) -> None:
        """The sub-flows of send ``op`` start queueing packets at their first link."""
        for s in self.op_subs[op]:
            path = self.path[s]
            if not path:
                self._sub_done(s)
            elif self.npk[s] == 0:          # no bytes: done after the path latency, as fluid
                self._at(self.sub_latency[s], self._on_sub_done, s)
            else:
                self.inject[path[0]].append(s)
                if not self.injecting[path[0]]:
                    self.injecting[path[0]] = True
                    self._request(path[0], -1)

    def _on_sub_done(self, event) -> None:
        self._sub_done(event.value)

    def _sub_done(self, s: int) -> None:
        op = self.sub_op[s]
        self.subs_left[op] -= 1
        if self.subs_left[op] == 0:
            self._release(self._finish(op))

    # -- ports ----------------------------------------------------------------------------
    def _request(self, link: int, who: int) -> None:
        """``who`` (an input buffer >= 0, or -1: the injection port) wants ``link``."""
        self.requests[link].append(who)
        if not self.busy[link]:
            self._try_start(link)

    def _channel(self, link: int, who: int) -> int:
        """Virtual channel a packet of requester ``who`` takes on ``link`` (dateline)."""
        if self.wrap[link]:
            return 1
        if who < 0:
            return 0
        prev = who >> 1
        if self.dim[link] >= 0 and self.dim[link] == self.dim[prev]:
            return self.inbuf[who][0][_VC]
        return 0

    def _try_start(self, link: int) -> None:
        """Start the next packet on ``link`` if it is idle: the first requester (round-robin
        order) whose packet has a credit for its buffer at the far end. Called by the
        handler that made the packet startable, so that its timeouts take their places in
        the queue at once; the port's process then holds the link for the transmission."""
        if self.busy[link]:
            return
        queue = self.requests[link]
        if not self.dateline:                   # one channel: the first requester or none
            if not queue or self.credits[2 * link] == 0:
                return
            who, vc = queue.popleft(), 0
        else:
            for i, who in enumerate(queue):
                vc = self._channel(link, who)
                if self.credits[2 * link + vc] > 0:
                    break
            else:
                return
            del queue[i]
        self.credits[2 * link + vc] -= 1
        self._start(link, who, vc)

    def _start(self, link: int, who: int, vc: int) -> None:
        """Send on ``link`` the next packet of requester ``who`` on channel ``vc``, whose
        credit is taken: account for it and time its transmission and arrival."""
        now = self.env.now
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
        self.busy[link] = True
        s, hop, wire = pkt[_F], pkt[_HOP], pkt[_WIRE]
        end = now + wire / self.rate[link]
        if pkt[_TAIL] > end:                 # cut-through: the tail is not here yet
            end = pkt[_TAIL]
        self.link_bytes[link] += pkt[_PAY]
        self.link_busy[link] += end - now
        if pkt[_IDX] == 0:
            self.link_flows[link] += 1
            if self.link_flows[link] > self.link_peak[link]:
                self.link_peak[link] = self.link_flows[link]
        self.hops += 1
        if self.progress is not None and self.hops % 4096 == 0:
            self.progress(self.hops, now)
        lat = self.lat[link]
        pkt[_TAIL] = end + lat
        self.tx[link] = (self.env.timeout(end - now), who, pkt)     # before the arrival
        if hop + 1 == len(self.path[s]):     # last hop: delivered when its tail arrives
            self._at(end - now + lat, self._on_delivered, (link, pkt))
        elif self.cut_through:
            self._at(self.header / self.rate[link] + lat, self._on_arrival, (link, pkt))
        else:
            self._at(end - now + lat, self._on_arrival, (link, pkt))
        wake = self.wake[link]
        if wake is not None:                 # the port waits for a packet: hand it over
            self.wake[link] = None
            wake.succeed()

    def _port(self, link: int):
        """The SimPy process of output port ``link``: it holds the link while a packet is
        sent (its transmission is a timeout) and then frees it; idle, it waits until a
        handler starts a packet on it."""
        env = self.env
        while True:
            if not self.busy[link]:
                self.wake[link] = env.event()
                yield self.wake[link]
            sent, who, pkt = self.tx[link]
            yield sent
            self._sent(link, who, pkt)

    def _sent(self, link: int, who: int, pkt: list) -> None:
        """A transmission ended: free the link and the buffer the packet came from, and
        start the next packet."""
        self.busy[link] = False
        if pkt[_IDX] == self.npk[pkt[_F]] - 1:
            self.link_flows[link] -= 1
        if who >= 0:
            self._leave(who)
            self._occupancy(who >> 1, -1)
            self._at(self.lat[who >> 1], self._on_credit, who)
            buf = self.inbuf[who]
            if buf:
                head = buf[0]
                self._request(self.path[head[_F]][head[_HOP] + 1], who)
        else:
            s = pkt[_F]
            queue = self.inject[link]
            if self.sent[s] < self.npk[s]:
                queue.append(s)
            if queue:
                self.requests[link].append(-1)
            else:
                self.injecting[link] = False
        self._try_start(link)

    def _on_arrival(self, event) -> None:
        """A packet reached the input buffer at the far end of ``link``."""
        link, pkt = event.value
        b = 2 * link + pkt[_VC]
        self._enter(b, pkt)
        self._occupancy(link, +1)
        if len(self.inbuf[b]) == 1:
            self._request(self.path[pkt[_F]][pkt[_HOP] + 1], b)

    def _enter(self, b: int, pkt: list) -> None:
        """``pkt`` joins the tail of input buffer ``b``."""
        self.inbuf[b].append(pkt)

    def _leave(self, b: int) -> None:
        """The head packet of input buffer ``b`` has left it (its tail is sent on)."""
        self.inbuf[b].popleft()

    def _on_delivered(self, event) -> None:
        link, pkt = event.value
        self._at(self.lat[link], self._on_credit, 2 * link + pkt[_VC])
        s = pkt[_F]
        self.arrived[s] += 1
        if self.deliveries is not None:
            self.deliveries[s].append(self.env.now)
        if self.arrived[s] == self.npk[s]:
            self._sub_done(s)

    def _on_credit(self, event) -> None:
        b = event.value
        link = b >> 1
        self.credits[b] += 1
        if not self.busy[link]:
            self._try_start(link)

    def _occupancy(self, link: int, change: int) -> None:
        now = self.env.now
        self.occ_area[link] += self.occ[link] * (now - self.occ_since[link])
        self.occ_since[link] = now
        self.occ[link] += change
        if self.occ[link] > self.occ_peak[link]:
            self.occ_peak[link] = self.occ[link]
        if self.series is not None:
            times, values = self.series[link]
            times.append(now)
            values.append(self.occ[link])

    # -- run ------------------------------------------------------------------------------
    def run(self) -> Result:
        ready = [op for op, w in enumerate(self.waiting) if w == 0]
        self._release(ready)
        self.env.run()
        finish = np.asarray(self.op_finish, dtype=np.float64)
        if np.isnan(finish).any():
            stuck = int(np.flatnonzero(np.isnan(finish))[0])
            if any(self.inbuf):
                raise SimulationError(
                    f"packet model: deadlock at t = {self.env.now:.6g} s, op {stuck} never "
                    f"finished: full buffers wait on each other in a cycle (the routes have "
                    f"a cyclic channel dependency; larger buffers or another router may help)")
            raise SimulationError(f"op {stuck} never finished: its dependencies never completed")
        return self._result(finish)

    def _result(self, finish: np.ndarray) -> Result:
        topo = self.topo
        makespan = float(finish.max()) if finish.size else 0.0
        for link in range(topo.num_links):                  # close the occupancy integrals
            self.occ_area[link] += self.occ[link] * (makespan - self.occ_since[link])
        # Plain lists, so that Result.to_json works on a packet result too.
        # What ran, in the fluid engine's terms (``Result.meta["engine"]``, -v, records):
        # the packet model has one path, SimPy's event loop over packet hops.
        engine = {"loop": "packet", "solver": f"{self.opts.switching} packets (SimPy)",
                  "events": self.hops, "symmetry": {"classes": False,
                                                    "flows": len(self.sub_op)}}
        meta = {"model": "packet", "engine": engine, "packets": int(sum(self.npk)),
                "packet_hops": self.hops,
                "payload": self.payload, "header": self.header,
                "switching": self.opts.switching, "buffer": self.depth.tolist(),
                "queue_peak": list(self.occ_peak),
                "queue_mean": [a / makespan if makespan > 0 else 0.0 for a in self.occ_area]}
        if self.series is not None:
            meta["queue_series"] = [[t, v] for t, v in self.series]
        if self.deliveries is not None:
            meta["deliveries"] = self.deliveries
        return Result(
            topology=topo.name, makespan=makespan,
            op_release=np.asarray(self.op_release, dtype=np.float64),
            op_start=np.asarray(self.op_start, dtype=np.float64), op_finish=finish,
            link_names=topo.link_names, link_bandwidth=topo.bandwidth,
            link_ends=tuple(zip((topo.node_names[i] for i in topo.link_src),
                                (topo.node_names[i] for i in topo.link_dst))),
            link_bytes=np.asarray(self.link_bytes), link_busy=np.asarray(self.link_busy),
            link_peak_flows=np.asarray(self.link_peak, dtype=np.int64), events=self.hops,
            num_flows=len(self.sub_op), op_tags=self.schedule.tag, tags=self.schedule.tags,
            meta=meta)


def execute_packets(topology, schedule: Schedule, routes, *, overhead: float = 0.0,
                    not_before: np.ndarray | None = None, options: PacketOptions | None = None,
                    record_queues: bool = False, record_deliveries: bool = False,
                    progress=None) -> Result:
    """Simulate ``schedule`` packet by packet; its sends are routed (``routes``, in send-op
    order). Returns a :class:`~netsim.engine.result.Result` whose ``events`` counts packet
    hops and whose ``meta`` holds ``packets``, ``queue_peak`` and ``queue_mean`` (packets in
    the input buffer at the far end of each link), with ``record_queues`` ``queue_series``
    (per link: times in s, occupancy after each change) and with ``record_deliveries`` the
    arrival time of every packet of every sub-flow (``deliveries``). ``progress(hops, t)``
    is called now and then, as the fluid engine's.
    """
    return _PacketRun(topology, schedule, routes, overhead=overhead, not_before=not_before,
                      options=options or PacketOptions(), record_queues=record_queues,
                      record_deliveries=record_deliveries, progress=progress).run()
