"""``--algo auto`` sweeps and the placement command: where the time goes, what pruning skips.

Cases (select by name; default: all):

* ``dgx``: ``netsim coll allreduce --topo dgx-h100 --algo auto --sizes 1KiB:16GiB``
* ``t3000``: ``netsim coll allgather --topo t3000 --algo auto --sizes 1KiB:1GiB``
* ``galaxy``: ``netsim coll allreduce --topo galaxy-wh --algo auto --sizes 1KiB:1GiB``
* ``place``: ``netsim place --topo galaxy-wh --tp 8 --dp 4 --tp-bytes 32MiB --dp-bytes 1GiB
  --strategies row_major,column_major,search --algo auto``

For the sweeps it prints, per stage, the CPU time of the process (``time.process_time``,
so other work on a loaded machine does not count): building the candidates' schedules,
their lower bounds (:mod:`netsim.algorithms.lower_bound`), simulating them; the
candidates simulated and pruned; and the same sweep's CPU time with ``prune=False``
(every candidate simulated), with a check that both pick the same algorithms and times.
For the sweeps it also prints what one sweep keeps across its sizes (:func:`reuse_sweep`):
its CPU time in a warm process against every size run alone, the schedules built and
scaled (:mod:`netsim.run.scaled_builds`) and whether the records are the same.
Every case also runs as the command, in a fresh process, and prints its wall and CPU time
(``/usr/bin/time``-like: children's user + system) and peak memory.

    PYTHONPATH=. python benchmarks/bench_auto.py [--no-compare] [CASE ...]

benchmarks/RESULTS.md keeps measured figures.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

SWEEPS = {"dgx": ("allreduce", "dgx-h100", "1KiB:16GiB"),
          "t3000": ("allgather", "t3000", "1KiB:1GiB"),
          "galaxy": ("allreduce", "galaxy-wh", "1KiB:1GiB")}
PLACE = ["place", "--topo", "galaxy-wh", "--tp", "8", "--dp", "4", "--tp-bytes", "32MiB",
         "--dp-bytes", "1GiB", "--strategies", "row_major,column_major,search", "--algo",
         "auto"]


def _command(case: str) -> list[str]:
    if case == "place":
        return PLACE
    op, topo, sizes = SWEEPS[case]
    return ["coll", op, "--topo", topo, "--algo", "auto", "--sizes", sizes]


def timed_command(case: str) -> dict:
    """The command in a fresh process: wall s, CPU s (user + system), peak MiB."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "netsim", *_command(case), "--format", "json"],
                   check=True, stdout=subprocess.DEVNULL, env=os.environ.copy())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "peak_mib": after.ru_maxrss / 1024}


def staged_sweep(case: str, compare: bool) -> dict:
    """CPU time per stage of one sweep in this process (see the module docstring)."""
    import netsim.run.collective as collective
    from netsim.topology import parse_topology

    op, topo_name, sizes = SWEEPS[case]
    topo = parse_topology(topo_name)
    spent = {"build": 0.0, "bound": 0.0, "simulate": 0.0}
    original_bound, original_simulate = collective._schedule_bound, collective._simulate

    def bound(algo, *args, **kwargs):
        start = time.process_time()
        built = []

        class Timed:            # the algorithm with its build timed apart
            def __getattr__(self, name):
                return getattr(algo, name)

            def build(self, *a, **k):
                t0 = time.process_time()
                schedule = algo.build(*a, **k)
                built.append(time.process_time() - t0)
                return schedule

        out = original_bound(Timed(), *args, **kwargs)
        spent["build"] += sum(built)
        spent["bound"] += time.process_time() - start - sum(built)
        return out

    def simulate(*args, **kwargs):
        start = time.process_time()
        out = original_simulate(*args, **kwargs)
        spent["simulate"] += time.process_time() - start
        return out

    collective._schedule_bound, collective._simulate = bound, simulate
    try:
        start = time.process_time()
        runs = collective.run_sweep(op, topo, "auto", sizes)
        total = time.process_time() - start
    finally:
        collective._schedule_bound, collective._simulate = original_bound, original_simulate
    out = {"total": total, **spent, "sizes": len(runs),
           "simulated": sum(len(r.candidates) for r in runs),
           "pruned": sum(len(r.pruned or {}) for r in runs)}
    if compare:
        start = time.process_time()
        full = collective.run_sweep(op, topo, "auto", sizes, prune=False)
        out["unpruned"] = time.process_time() - start
        out["same"] = all((a.algorithm, a.time_s) == (b.algorithm, b.time_s)
                          for a, b in zip(runs, full))
    return out


def reuse_sweep(case: str) -> dict:
    """What one sweep keeps across its sizes, in this (warm) process: CPU time of the sweep
    as ``run_sweep`` runs it (one router, size-linear schedules built once per depth and
    scaled: :mod:`netsim.run.scaled_builds`) against every size run alone (a router per
    size, every schedule built), with a check that the records are the same."""
    import netsim.run.collective as collective
    from netsim.run.scaled_builds import ScaledBuilds
    from netsim.topology import parse_topology

    op, topo_name, sizes = SWEEPS[case]
    topo = parse_topology(topo_name)
    collective.run_collective(op, topo, "auto", "64MiB")     # imports and kernels loaded
    builds = ScaledBuilds()
    start = time.process_time()
    kept = collective.run_sweep(op, topo, "auto", sizes, builds=builds)
    reuse = time.process_time() - start
    start = time.process_time()
    alone = [collective.run_collective(op, topo, "auto", size)
             for size in collective.sweep_sizes(sizes)]
    fresh = time.process_time() - start
    return {"reuse": reuse, "alone": fresh, "built": builds.built, "scaled": builds.scaled,
            "same": [r.record() for r in kept] == [r.record() for r in alone]}


def main(argv: list[str]) -> None:
    compare = "--no-compare" not in argv
    cases = [a for a in argv if not a.startswith("--")] or [*SWEEPS, "place"]
    for case in cases:
        if case in SWEEPS:
            s = staged_sweep(case, compare)
            line = (f"{case:7s} in process: cpu {s['total']:.2f} s (build {s['build']:.2f}, "
                    f"bound {s['bound']:.2f}, simulate {s['simulate']:.2f}); "
                    f"{s['sizes']} sizes, {s['simulated']} simulated, {s['pruned']} pruned")
            if compare:
                line += (f"; prune=False: cpu {s['unpruned']:.2f} s, same picks and times: "
                         f"{s['same']}")
            print(line, flush=True)
            r = reuse_sweep(case)
            print(f"{case:7s} kept across sizes: cpu {r['reuse']:.2f} s against "
                  f"{r['alone']:.2f} s with every size alone; schedules {r['built']} built, "
                  f"{r['scaled']} scaled; same records: {r['same']}", flush=True)
        c = timed_command(case)
        print(f"{case:7s} command: wall {c['wall']:.2f} s, cpu {c['cpu']:.2f} s, peak "
              f"{c['peak_mib']:.0f} MiB", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
