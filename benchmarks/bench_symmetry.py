"""The symmetry search (engine.symmetry.find_classes): seconds per case, numpy and compiled.

Cases (select by name; default: all):

* ``dgx``: every engine run of ``netsim coll allreduce --topo dgx-h100 --algo auto
  --sizes 1KiB:16GiB`` (33 searches: --algo auto prunes what cannot win);
* ``nvl72``: every engine run of ``netsim coll allreduce --topo gb200-nvl72 --sizes
  1KiB:16GiB`` (NCCL's model: 25 searches of 5 graphs);
* ``ring32``: ``run_collective("allreduce", "torus:32x32", "ring", 2**30)`` (1,024 ranks);
* ``staggered16``: the 16x16 mesh all-to-all, 1 MiB per pair, 1 us per hop, of
  benchmarks/bench_engine_events.py.

Each case is run once to record the searches' inputs (the schedules and routes the
engine searched), then every search is replayed with the numpy search (``before``: the
numpy search, the fallback without numba) and the
compiled one (``after``), best of ``--repeat`` (default 3) CPU-time measurements, after
one warm-up search (numba loaded and the kernels compiled or read from their cache). It
prints per case: searches, sub-flows, sub-flow classes found (summed over searches),
searches that found none, numpy and compiled seconds, their ratio, and whether the two
found the same partitions (ops, sub-flows and links; class names aside); ``kept_s``: the
compiled searches in order with the last few results kept (what a sweep runs: a search of
a graph and start labels seen again returns the result found before) and ``kept_same``:
whether those equal the full searches' arrays exactly. ``numba_load_s``
is the once-per-process cost of importing numba and loading the cached kernels.

    python benchmarks/bench_symmetry.py [--repeat N] [CASE ...]
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

CASES = ["dgx", "nvl72", "ring32", "staggered16"]


def record(name: str) -> list[tuple]:
    """The arguments of every find_classes call of the case's runs."""
    from netsim.engine import executor

    calls = []
    original = executor.find_classes

    def keep(schedule, routes, capacity, **kwargs):
        calls.append((schedule, routes, capacity, kwargs))
        return original(schedule, routes, capacity, **kwargs)

    executor.find_classes = keep
    try:
        if name == "nvl72":
            from netsim.run import run_sweep
            run_sweep("allreduce", "gb200-nvl72", "default", "1KiB:16GiB")
        elif name == "ring32":
            from netsim.run import run_collective
            run_collective("allreduce", "torus:32x32", "ring", 2**30)
        else:
            import bench_engine_events
            bench_engine_events.run_case(name)
    finally:
        executor.find_classes = original
    return calls


def search(calls, find, *, kept: bool = False) -> tuple[float, list]:
    """CPU seconds of the searches in order, and what they found; each search runs in
    full unless ``kept`` (then a search of a graph and start labels seen in the last few
    searches returns what that one found, as in a sweep: symmetry._Kept)."""
    from netsim.engine import symmetry

    symmetry.forget_searches()
    start = time.process_time()
    found = []
    for schedule, routes, capacity, kwargs in calls:
        if not kept:
            symmetry.forget_searches()
        found.append(find(schedule, routes, capacity, **kwargs))
    return time.process_time() - start, found


def same_partition(a, b) -> bool:
    if (a is None) != (b is None):
        return False
    if a is None:
        return True
    for name in ("op", "sub", "link"):
        x, y = getattr(a, name), getattr(b, name)
        if x.shape != y.shape:
            return False
        if x.size and not (np.unique(x * (int(y.max()) + 1) + y).size
                           == np.unique(x).size == np.unique(y).size):
            return False
    return True


def main(argv: list[str]) -> None:
    from netsim.engine import symmetry

    repeat = 3
    if "--repeat" in argv:
        at = argv.index("--repeat")
        repeat = int(argv[at + 1])
        del argv[at:at + 2]
    names = [a for a in argv if not a.startswith("--")] or CASES
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        raise SystemExit(f"unknown case {unknown[0]!r}; one of {', '.join(CASES)}")
    start = time.perf_counter()
    import numba  # noqa: F401
    from netsim.engine import EngineConfig

    kernels = symmetry._compiled(0, EngineConfig(symmetry_compiled_from=0))
    kernels._k_relabel(np.zeros(1, np.int64), np.zeros(1, np.uint64))
    print(f"numba_load_s={time.perf_counter() - start:.3f}", flush=True)

    def numpy_search(schedule, routes, capacity, **kwargs):
        return symmetry.find_classes(schedule, routes, capacity, **{
            **kwargs, "config": EngineConfig(symmetry_compiled_from=None)})

    def compiled_search(schedule, routes, capacity, **kwargs):
        return symmetry.find_classes(schedule, routes, capacity, **{
            **kwargs, "config": EngineConfig(symmetry_compiled_from=0)})

    for name in names:
        calls = record(name)
        if not calls:
            print(f"case={name} searches=0")
            continue
        for find in (numpy_search, compiled_search):      # warm up
            find(calls[0][0], calls[0][1], calls[0][2], **calls[0][3])
        before = min(search(calls, numpy_search)[0] for _ in range(repeat))
        runs = [search(calls, compiled_search) for _ in range(repeat)]
        after = min(seconds for seconds, _ in runs)
        kept = [search(calls, compiled_search, kept=True) for _ in range(repeat)]
        slow = search(calls, numpy_search)[1]
        fast = runs[0][1]
        row = {"case": name, "searches": len(calls),
               "subflows": sum(len(routes.sub_req) for _, routes, _, _ in calls),
               "classes": sum(int(c.sub.max()) + 1 for c in fast if c is not None),
               "none": sum(c is None for c in fast),
               "numpy_s": round(before, 3), "compiled_s": round(after, 3),
               "speedup": round(before / max(after, 1e-9), 1),
               "kept_s": round(min(seconds for seconds, _ in kept), 3),
               "same_partitions": all(same_partition(a, b) for a, b in zip(slow, fast)),
               "kept_same": all(np.array_equal(getattr(a, n), getattr(b, n))
                                for a, b in zip(fast, kept[0][1]) if a is not None
                                for n in ("op", "sub", "link"))
               and [a is None for a in fast] == [b is None for b in kept[0][1]]}
        print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
