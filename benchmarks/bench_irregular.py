"""Irregular traffic: no symmetry, arrivals spread over time, heavy-tailed sizes.

Cases (select by name; default: both):

* ``fattree``: fat-tree k=16 (1,024 hosts, 50 GB/s links, no latency), flows between
  random distinct pairs of hosts (numpy seed 0), routed by the fat-tree's default router (up/down
  with ECMP by hash), Poisson arrivals (each flow's ``not_before``) and log-normal sizes
  (median 1 MB, sigma 1.5), offered at 90 % of a host link's bandwidth per host.
* ``randgraph``: a random connected graph of 256 nodes (a random spanning tree plus
  random chords, 512 cables; numpy seed 1), each cable 10-100 GB/s (uniform, both
  directions alike), fewest-hop routing, Poisson arrivals and Pareto sizes (shape 1.5,
  mean 1 MB), offered so that the busiest link is loaded to 90 %.

Each case runs 100,000 flows (``--flows N``) in a fresh process, so its wall time is the
whole process (interpreter, imports, building the case, routing, simulating, the
result) and its peak memory its own. A row prints flows, events, the peak number of
flows draining at once (network-wide, and on the busiest link), the time inside
``execute``, peak memory, the makespan, and the whole process's wall time and CPU time
(user + system: on a shared machine the wall time also counts waiting for a core).

``--reference`` also runs a smaller version (``--small N`` flows, default 5,000) with the
reference engine (a cold max-min over every draining flow at every event) and with the
default engine, and prints the largest relative difference of the per-flow finish times.

``--simgrid`` times the smaller version (``--small``, e.g. ``--small 10000``) against
SimGrid (``tests/simgrid/run_flows.py`` under a Python that imports ``simgrid``; CM02,
no cross-traffic, precisions 1e-13) as whole processes, in alternation, ``--runs`` times
each (default 3), and prints both medians (wall and CPU), their ratios and the largest
relative difference of the finish times. SimGrid reads a platform file with netsim's own
route for every pair the flows use (routing ``Full``), so both follow the same paths; the
links have no latency, where SimGrid's CM02 is plain max-min sharing.

    python benchmarks/bench_irregular.py [--flows N] [--small N] [--load X]
        [--reference] [--simgrid] [--runs R] [CASE ...]

Measured on 2 cores shared with other work (whole processes; CPU is user + system):

* ``randgraph``, 100,000 flows: 200,000 events, at most 93 flows draining at once (11 on
  one link); 2.2 s CPU, 6.2 s wall (2.6 s on a quieter machine), 317 MiB. 5,000 flows:
  finish times within 1.3e-15 of the reference's.
* ``fattree``, 100,000 flows: 199,997 events, up to 9,041 flows draining at once (32 on
  one link); 60.9 s CPU, 61 s wall, 346 MiB with the machine nearly to itself (64.5,
  73.5 and 88.7 s CPU in three other runs on the loaded machine). With ``--load 0.6``:
  3,618 at once, 14.1 s CPU. 5,000 flows (``--reference --small 5000``): finish times
  within 9.5e-15 of the reference's.
* Against SimGrid 3.32 (medians of 3 in alternation, a machine loaded by other work):
  ``fattree`` 5,000 flows, 2.06 s vs 37.8 s CPU (18.4x), 10.4 s vs 183 s wall (17.6x),
  finish times within 9.1e-15; ``randgraph`` 5,000 flows, 1.56 s vs 13.7 s CPU (8.8x),
  7.1 s vs 81 s wall (11.5x), within 8.8e-16 (netsim's time there is mostly its fixed
  cost of starting: imports and loading the compiled loop); ``randgraph`` 10,000 flows,
  1.50 s vs 63.0 s CPU (42x), 7.0 s vs 228 s wall (33x), within 5.9e-16; ``fattree``
  10,000 flows (``--flows 10000 --simgrid --small 10000``), 2.75 s vs 168 s CPU (61x),
  6.5 s vs 363 s wall (56x), within 1.6e-14.

Why the fat-tree misses 10 s: its events move a share of all the draining flows, and the
loop's work (engine.classes, on rate classes) follows what moves. Timed per event in
chunks of 4,000 events (the executor's progress hook, CPU time, each chunk starting with
a cold solve; the numbers of flows draining from the finish times), the 100,000-flow run
costs 35 us per event while 2,000-3,000 flows drain, 60 us at 3,000-4,000, 105 us at
4,000-5,000, 180 us at 5,000-6,000, 320 us at 6,000-7,000, 455 us at 7,000-8,000 and
565 us at 8,000-9,000 (the 20,000-flow run: 12 us under 1,000, 16 us at 1,000-2,000, then
40, 64 and 89 us in the first three of those bands): twice the flows
draining, five times the cost per event, and the 21 chunks above 7,000 draining take 44 s
of the 61. Counted per event in another run of the case (temporary counters in
``resolve``):

===============  ==================  ===================  =======================
flows draining   classes in refill   their members        members whose rate moves
===============  ==================  ===================  =======================
2,000-3,000      22                  44                   28 (median 9)
4,000-5,000      82                  210                  122 (median 25, p90 383)
6,000-7,000      205                 635                  370 (median 58, p90 1,297)
7,000-8,000      279                 943                  557 (median 86, p90 2,008)
8,000-9,000      341                 1,223                732 (median 123, p90 2,559)
===============  ==================  ===================  =======================

The rates that move are the max-min solution's own ripple, not the solver's: at 2,000-3,000
draining the 28 flows per event whose rates move (beyond 1e-14; at 30,000 flows the same
count beyond 1e-9 is the same to 0.2 %) match a cold solve at every event, which moves 23
flows per event (beyond 1e-9) at 2,400 draining with 12,000 flows. On a fat-tree loaded
to 90 % nearly every host link is saturated, so an arrival or a departure shifts the
shares at its two host links, which frees or takes capacity at the other ends of their
flows, and so on: an event often moves more than a quarter of all draining flows (11 %
of the events at 7,000-8,000 draining, 14 % at 8,000-9,000). The refill takes in
1.6-1.7x the flows whose rates move (classes brought down that settle at their old rate)
and costs 1.3-1.7 us per class that enters it (565 us for 341 classes); an event with
under 1,000 flows draining costs 12 us in all. No step costs per event in proportion to
every draining flow or every link; what grows is the ripple.
Meeting 10 s (50 us per event on average) would need about a tenth of today's cost per
moved class, or a representation in which a rate change at a host link does not visit
the classes it moves. Where the CPU goes at 100,000 flows (samples of the whole process
by compiled function, the helpers LLVM inlined counted in their callers): the refill's
own body 39 % (its steps, the rising classes' links, the saturating links' lists),
bringing pinned classes to their new level 20 % (``_freeze_pinned``: at a new rate it
touches each of the class's links, reading a saturated one's list for its largest rate),
the indexed heaps 13 % (finish keys, levels, pinned classes), refreshing the finish keys
of the classes that moved 6 %, pinning 6 %, freezing 3 %, the entries' hash table 4 %,
splits 1 %; the event loop, timed events and Python under 3 %.

Counted per event at 50,000 flows (4,200 draining on average): 62 class rates change and
81 classes enter the refill, 55 of them brought down by a saturating link (pinned; 19
end at their old rate), 92 links saturate, 457 links are touched, and the refill reads
about 2,050 entries of the links' lists (830 where links saturate, 405 to merge classes
of one rate, 340 as classes rise, 330 for the largest rate of a touched link, 150 at the
links that flows left) and refreshes 84 finish keys. Laying the class and entry rows out
one per cache line (4.13 s vs 4.16 s CPU at 20,000 flows, medians of 3), or reading a
saturating link's list once instead of twice (17.9 s vs 16.6 s at 50,000 flows),
measures within noise (whole processes in alternation).

Choices in engine.classes and what they measured (whole processes in alternation):

* A class brought down by a saturating link is brought down whole. Taking only its
  members on the link splits it: on the log-normal 8x8 all-to-all 35,000 such splits (78
  members moved per event) were nearly all merged back by the end of the same refill,
  0.81 s instead of 0.48 s; splitting only when the members on the link are under an
  eighth of their class fragments the classes over the run (12x12 6.4 s instead of
  2.5-3.0 s, 16x16 99-105 s instead of 17-18 s).
* A pinned class that settles at its old rate on its own bottleneck touches one link
  instead of all of its links (about 31 on the 16x16 log-normal all-to-all, where 41 of
  the 83 classes brought down per event end at their old rate: 8.8 s instead of 15.9 s;
  12x12 1.6 s instead of 2.5 s).
* Its bottleneck caps it at its old rate rather than lifting it there at once (which reads
  that link's list three more times per class brought down; 54 per event on this fattree
  at 50,000 flows): the 16x16 run takes 11.5 s of CPU instead of 14.7 s, medians of 2;
  here 60.9, 86.4 and 82.6 s against 65.1, 74.1 and 89.4 s (within the machine's noise).
* The refill in named steps (inlined into one compiled function) costs what the single
  function did: 20,000 flows 3.76 s vs 4.02 s CPU (median ratio 0.98 of 5), the 12x12
  log-normal all-to-all of ``bench_engine_events.py`` 2.31 s vs 2.28 s (1.01).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import quoteattr

import numpy as np

CASES = ["fattree", "randgraph"]
LOAD = 0.9          # offered load (--load): of a host link (fattree), of the busiest link
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, os.pardir, "tests", "simgrid", "run_flows.py")


def _random_graph(nodes: int, cables: int, seed: int):
    """A random connected graph: node i > 0 joins a random earlier node (a random
    spanning tree), then random chords up to ``cables``; 10-100 GB/s per cable."""
    from netsim.topology.model import TopologyBuilder

    rng = np.random.default_rng(seed)
    b = TopologyBuilder(f"randgraph{nodes}", family="custom")
    for i in range(nodes):
        b.add_node(f"n{i}")
    edges = {(int(rng.integers(i)), i) for i in range(1, nodes)}
    while len(edges) < cables:
        a, c = sorted(int(x) for x in rng.choice(nodes, 2, replace=False))
        edges.add((a, c))
    for a, c in sorted(edges):
        b.add_cable(a, c, bandwidth=float(rng.uniform(10e9, 100e9)))
    return b.build()


def build(name: str, flows: int, load: float = LOAD):
    """(topology, schedule, not_before, routes) of a case: deterministic."""
    from netsim.engine import route_schedule
    from netsim.schedule import sends_from_arrays
    from netsim.topology import parse_topology

    if name == "fattree":
        topology = parse_topology("fattree:k=16")
        rng = np.random.default_rng(0)
        sizes = np.maximum(np.rint(rng.lognormal(np.log(1e6), 1.5, flows)), 1.0)
    elif name == "randgraph":
        topology = _random_graph(256, 512, 1)
        rng = np.random.default_rng(1)
        shape, mean = 1.5, 1e6
        sizes = np.rint((rng.pareto(shape, flows) + 1.0) * mean * (shape - 1) / shape)
    else:
        raise SystemExit(f"unknown case {name!r}; one of {', '.join(CASES)}")
    n = topology.num_endpoints
    src = rng.integers(n, size=flows)
    dst = (src + rng.integers(1, n, size=flows)) % n          # any other host
    while name == "fattree":
        # one flow per pair: ECMP hashes each flow onto its own path, and SimGrid's
        # platform (--simgrid) holds one route per pair
        again = np.ones(flows, dtype=bool)
        again[np.unique(src * n + dst, return_index=True)[1]] = False
        if not again.any():
            break
        src[again] = rng.integers(n, size=int(again.sum()))
        dst[again] = (src[again] + rng.integers(1, n, size=int(again.sum()))) % n
    schedule = sends_from_arrays(n, src, dst, sizes, tag="irregular")
    routes = route_schedule(topology, schedule, topology.endpoints)
    if name == "fattree":                  # per host: LOAD of its link's bandwidth
        rate = load * n * float(topology.bandwidth.min()) / sizes.mean()
    else:                                  # the busiest link at LOAD of its bandwidth
        per_flow = routes.link_bytes(sizes) / flows           # bytes per arrival
        rate = load / float((per_flow / topology.bandwidth).max())
    gaps = rng.exponential(1.0 / rate, flows)
    not_before = np.round(np.cumsum(gaps) - gaps[0], 12)      # first at 0; whole ps
    return topology, schedule, not_before, routes


def _peak_draining(start: np.ndarray, finish: np.ndarray) -> int:
    """The most flows draining at once (start inclusive, finish exclusive)."""
    times = np.concatenate([start, finish])
    steps = np.concatenate([np.ones(start.size), -np.ones(finish.size)])
    order = np.lexsort((steps, times))                       # ends before starts at a tie
    return int(np.cumsum(steps[order]).max()) if times.size else 0


def one(name: str, flows: int, mode: str, out: str, load: float) -> dict:
    """Run a case in this process (``mode``: fast or reference); finish times to ``out``."""
    from netsim.engine import execute
    from netsim.engine.config import EngineConfig

    config = EngineConfig(loop="reference") if mode == "reference" else EngineConfig()
    topology, schedule, not_before, routes = build(name, flows, load)
    start = time.perf_counter()
    result = execute(topology, schedule, routes, not_before=not_before, config=config)
    engine = time.perf_counter() - start
    if out:
        np.save(out, result.op_finish)
    return {"case": name, "engine": mode, "flows": result.num_flows,
            "events": result.events,
            "peak_draining": _peak_draining(result.op_start, result.op_finish),
            "peak_per_link": int(result.link_peak_flows.max()),
            "execute_s": round(engine, 3),
            "peak_MiB": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "makespan_s": float(result.makespan)}


def _timed(args: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """Run a whole process: (its outcome, wall time, CPU time user + system), s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise SystemExit(done.stderr[-2000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return done, wall, cpu


def _spawn(name: str, flows: int, mode: str, out: str = "", load: float = LOAD) -> dict:
    done, wall, cpu = _timed([sys.executable, __file__, "--one", name, str(flows), mode,
                              str(load), out])
    row = json.loads(done.stdout)
    row["wall_s"], row["cpu_s"] = round(wall, 3), round(cpu, 3)
    return row


def max_rel_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float((np.abs(a - b) / np.maximum(np.abs(b), 1e-300)).max()) if a.size else 0.0


def simgrid_python() -> str | None:
    for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if python and subprocess.run([python, "-c", "import simgrid"],
                                     capture_output=True).returncode == 0:
            return python
    return None


def simgrid_files(name: str, flows: int, tmp: str, load: float) -> tuple[str, str]:
    """The case as a SimGrid platform (netsim's route for each pair the flows use,
    routing Full) and flow file ([[src, dst, bytes, start], ...]); their paths."""
    from netsim.interop import simgrid_platform

    topology, schedule, not_before, routes = build(name, flows, load)
    names = topology.node_names
    ends = topology.endpoints
    # One resource per cable as netsim writes them: "a--b", UP from a to b, a < b in
    # node order (every cable here is the same both ways).
    text, _ = simgrid_platform(topology, full_routes=0)
    lines, seen = [], set()
    src, dst = ends[schedule.src], ends[schedule.dst]
    for i in range(len(src)):
        pair = (int(src[i]), int(dst[i]))
        if pair in seen:
            continue
        seen.add(pair)
        hops = routes.path(int(routes.sub_ptr[i]))
        ctns = []
        for link in hops.tolist():
            s, d = int(topology.link_src[link]), int(topology.link_dst[link])
            a, c = min(s, d), max(s, d)
            ctns.append(f"<link_ctn id={quoteattr(f'{names[a]}--{names[c]}')} "
                        f'direction="{"UP" if s == a else "DOWN"}"/>')
        lines.append(f"    <route src={quoteattr(names[pair[0]])} "
                     f"dst={quoteattr(names[pair[1]])} symmetrical=\"NO\">"
                     + "".join(ctns) + "</route>")
    head, _, tail = text.partition("    <route ")        # drop the per-link routes
    text = head.replace('routing="Floyd"', 'routing="Full"') + "\n".join(lines) + \
        "\n  </zone>\n</platform>\n"
    platform, flow_file = os.path.join(tmp, f"{name}.xml"), os.path.join(tmp, f"{name}.json")
    with open(platform, "w") as fh:
        fh.write(text)
    with open(flow_file, "w") as fh:
        json.dump([[names[s], names[d], float(b), float(t)] for s, d, b, t in
                   zip(src.tolist(), dst.tolist(), schedule.nbytes.tolist(),
                       not_before.tolist())], fh)
    return platform, flow_file


def compare_simgrid(name: str, flows: int, runs: int, tmp: str, load: float) -> None:
    python = simgrid_python()
    if python is None:
        print(f"case={name}  simgrid=not installed (Debian: apt install python3-simgrid)")
        return
    platform, flow_file = simgrid_files(name, flows, tmp, load)
    ours, theirs, out = [], [], os.path.join(tmp, f"{name}-sg.npy")
    finish = None
    for _ in range(runs):                  # in alternation: the machine drifts
        row = _spawn(name, flows, "fast", out, load)
        ours.append((row["wall_s"], row["cpu_s"]))
        done, wall, cpu = _timed([python, RUNNER, platform, flow_file])
        theirs.append((wall, cpu))
        finish = np.array(json.loads(done.stdout.strip().splitlines()[-1]), dtype=float)
    (a, a_cpu), (b, b_cpu) = np.median(ours, axis=0), np.median(theirs, axis=0)
    print(f"case={name}  flows={flows}  runs={runs}  netsim_wall_s={a:.3f}  "
          f"simgrid_wall_s={b:.3f}  ratio_wall={b / a:.1f}  netsim_cpu_s={a_cpu:.3f}  "
          f"simgrid_cpu_s={b_cpu:.3f}  ratio_cpu={b_cpu / a_cpu:.1f}  "
          f"max_rel_diff={max_rel_diff(np.load(out), finish):.2e}", flush=True)


def _option(argv: list[str], name: str, default):
    if name in argv:
        return type(default)(argv[argv.index(name) + 1])
    return default


def main(argv: list[str]) -> None:
    flows, small = _option(argv, "--flows", 100_000), _option(argv, "--small", 5_000)
    runs, load = _option(argv, "--runs", 3), _option(argv, "--load", LOAD)
    values = {argv[i + 1] for i, a in enumerate(argv[:-1])
              if a in ("--flows", "--small", "--runs", "--load")}
    names = [a for a in argv if not a.startswith("--") and a not in values] or CASES
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            row = _spawn(name, flows, "fast", load=load)
            print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            if "--reference" in argv:
                fast, ref = os.path.join(tmp, "fast.npy"), os.path.join(tmp, "ref.npy")
                row = _spawn(name, small, "fast", fast, load)
                print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
                row = _spawn(name, small, "reference", ref, load)
                row["max_rel_diff"] = f"{max_rel_diff(np.load(fast), np.load(ref)):.2e}"
                print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
            if "--simgrid" in argv:
                compare_simgrid(name, small, runs, tmp, load)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        print(json.dumps(one(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[6],
                             float(sys.argv[5]))))
    else:
        main(sys.argv[1:])
