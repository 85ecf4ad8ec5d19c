"""What the packet model costs: packet hops per second and whole-process time.

Cases (select by name; default: all):

* ``ring``: ring all-reduce of 8 MiB on an 8-node ring (50 GB/s, 1 us per link).
* ``mesh``: all-to-all on a 4x4 mesh (50 GB/s, 1 us per hop, XY routes), 256 KiB per pair.
* ``incast``: 15 senders, 2 MiB each, into one sink through one switch (50 GB/s, 1 us):
  one output port serving 15 input buffers round-robin.

Packets of 4096 B payload, no header, store-and-forward, buffers sized to the credit
round trip (the defaults). Each case runs in a fresh process, which prints packet hops,
the CPU time of the packet simulation (``execute_packets``: after imports and routing;
CPU time, since the machine may be shared) and the makespan; this script prints, per
case, the medians over ``--runs`` runs of the whole process's wall and CPU time and of the
simulation's CPU time, and packet hops and SimPy events per second of simulation (the
events counted in one more, untimed run).

``--resources`` also runs packet_resources.py's variant of the model (SimPy ``Store``
input buffers and ``Container`` credits); ``--vs DIR`` also runs the
``netsim`` package of another source tree (for example an export of another branch:
``git archive main | tar -x -C /tmp/main``). All run in alternation, run by run, and each
gets the ratio of its medians to this tree's and whether its makespan is identical.

    python benchmarks/bench_packet.py [--runs N] [--resources] [--vs DIR] [CASE ...]
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time

CASES = ["ring", "mesh", "incast"]
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _case(name: str):
    """(topology, schedule) of a case."""
    from netsim.algorithms import build_schedule
    from netsim.schedule import ScheduleBuilder
    from netsim.topology import TopologyBuilder, mesh, ring

    rate, lat = 50e9, 1e-6
    if name == "ring":
        return ring(8, bandwidth=rate, latency=lat), build_schedule("allreduce", "ring", 8,
                                                                    8 * 2**20)
    if name == "mesh":
        return (mesh((4, 4), bandwidth=rate, latency=lat),
                build_schedule("alltoall", "direct", 16, 16 * 256 * 2**10))
    b = TopologyBuilder("incast")
    for i in range(16):
        b.add_node(f"h{i}")
    b.add_node("sw", switch=True)
    for i in range(15):
        b.add_link(f"h{i}", "sw", rate, lat)
    b.add_link("sw", "h15", rate, lat)
    b.set_endpoints([f"h{i}" for i in range(16)])
    s = ScheduleBuilder(16)
    for i in range(15):
        s.send(i, 15, 2 * 2**20)
    return b.build(), s.build()


def _one(name: str, count: bool, resources: bool) -> None:
    """Run one case in this process; print its figures as one JSON line. With ``count``,
    count the events the SimPy environment processes (a wrapper per event: not timed);
    with ``resources``, run packet_resources.py's variant of the model."""
    import simpy

    from netsim.engine import default_placement, route_schedule
    from netsim.packet import PacketOptions, execute_packets

    if resources:
        from packet_resources import execute_resources as execute_packets  # noqa: F811

    topo, sched = _case(name)
    routes = route_schedule(topo, sched, default_placement(topo, sched.num_ranks))
    events = 0
    if count:
        step = simpy.Environment.step

        def counted(env):
            nonlocal events
            events += 1
            step(env)

        simpy.Environment.step = counted
    t0 = time.process_time()
    r = execute_packets(topo, sched, routes, options=PacketOptions(payload=4096, header=0))
    sim = time.process_time() - t0
    print(json.dumps({"hops": int(r.events), "events": events, "sim": sim,
                      "makespan": r.makespan.hex()}))


def _run(name: str, tree: str, resources: bool, count: bool = False) -> dict:
    env = dict(os.environ, PYTHONPATH=tree)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, os.path.abspath(__file__),
                          "--count" if count else "--one", name]
                         + (["--resources"] if resources else []), env=env,
                         capture_output=True, text=True, check=True, cwd="/")
    figures = json.loads(out.stdout.strip().splitlines()[-1])
    figures["wall"] = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    figures["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return figures


def _summary(runs: list[dict], events: int) -> dict:
    med = {k: statistics.median(r[k] for r in runs) for k in ("wall", "cpu", "sim")}
    hops = runs[0]["hops"]
    return dict(med, hops=hops, events=events, hops_s=hops / med["sim"],
                events_s=events / med["sim"], makespan=runs[0]["makespan"])


def main(argv: list[str]) -> None:
    if argv[:1] in (["--one"], ["--count"]):
        _one(argv[1], argv[0] == "--count", "--resources" in argv)
        return
    runs, other, resources, names = 5, None, False, []
    args = iter(argv)
    for a in args:
        if a == "--runs":
            runs = int(next(args))
        elif a == "--vs":
            other = os.path.abspath(next(args))
        elif a == "--resources":
            resources = True
        else:
            names.append(a)
    names = names or CASES
    for name in names:
        if name not in CASES:
            sys.exit(f"bench_packet: unknown case {name!r}; cases: {', '.join(CASES)}")
    trees = ([("this", HERE, False)] + ([("res", HERE, True)] if resources else [])
             + ([("vs", other, False)] if other else []))
    print(f"{'case':8} {'tree':5} {'hops':>8} {'events':>8} {'wall s':>7} {'cpu s':>7} "
          f"{'sim s':>7} {'hops/s':>8} {'events/s':>9}  makespan")
    for name in names:
        got = {label: [] for label, _, _ in trees}
        for _ in range(runs):                  # in alternation, run by run
            for label, tree, procs in trees:
                got[label].append(_run(name, tree, procs))
        s = {label: _summary(got[label], _run(name, tree, procs, count=True)["events"])
             for label, tree, procs in trees}
        for label, _, _ in trees:
            f = s[label]
            print(f"{name:8} {label:5} {f['hops']:8d} {f['events']:8d} {f['wall']:7.3f} "
                  f"{f['cpu']:7.3f} {f['sim']:7.3f} {f['hops_s']:8.0f} {f['events_s']:9.0f}  "
                  f"{float.fromhex(f['makespan']):.9g}")
        for label in ("res", "vs"):
            if label in s:
                a, b = s[label], s["this"]
                print(f"{name:8} ratio {label}/this: wall {a['wall'] / b['wall']:.2f}, "
                      f"cpu {a['cpu'] / b['cpu']:.2f}, sim {a['sim'] / b['sim']:.2f}; makespans "
                      f"{'identical' if a['makespan'] == b['makespan'] else 'DIFFER'}")


if __name__ == "__main__":
    main(sys.argv[1:])
