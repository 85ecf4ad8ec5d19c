"""How close the memory estimates that refuse big runs are to what those runs really use.

Each case runs ``netsim ARGV`` in its own child process (under ``ulimit -v`` of
``--limit``, so a bad estimate cannot hurt the machine) with the estimates recorded: every
call of :func:`netsim.budget.require_memory` (topology, sends, export, search) is logged
with its figure. The child reports its peak RSS (``getrusage`` maxrss) and its RSS after
importing the command line (the interpreter's baseline, which the estimates leave out);
the table gives the largest estimate, the sum of the estimates of each kind (a run holds
its topology and its sends at once; a check made before and after a build counts once),
the measured peak above the baseline, and their ratio (sum / measured).

    python benchmarks/bench_memory_estimates.py [--limit 4GiB] [--only SUBSTRING]

Cases are sized to use a few hundred MB to two GB, so the estimate is checked where it
matters (far above the interpreter's ~100 MB) without a risk to a shared machine.

The torus ring is a block run (one simulated send per ring step, its memory counted per
step): what it measures is mostly the libraries the run loads (scipy, the compiled engine),
not what the estimate covers. benchmarks/RESULTS.md keeps measured figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

_CHILD = textwrap.dedent("""
    import json, resource, sys
    import netsim.budget as budget
    from netsim.cli import main

    def _rss():
        with open("/proc/self/statm") as f:
            import os
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    base = _rss()
    seen = []
    real = budget.require_memory

    def spy(need, what, **kw):
        seen.append([float(need), what])       # record, never refuse

    real_sends, real_budget = budget.require_sends, budget.memory_budget

    def sends(*args, **kw):
        budget.memory_budget = lambda: 0       # so the estimate is made, not skipped
        try:
            real_sends(*args, **kw)
        finally:
            budget.memory_budget = real_budget

    budget.require_memory = spy
    budget.require_sends = sends
    code = 0
    try:
        main(sys.argv[1:])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"base": base, "peak": peak, "estimates": seen, "code": code}),
          file=sys.__stderr__)
""")


def _chain_file(folder: Path, n: int) -> str:
    """A topology file of a chain of ``n`` chips (a machine no generator makes)."""
    path = folder / f"chain{n}.yaml"
    lines = [f"name: chain{n}", "nodes:"] + [f"  - {{name: c{i}}}" for i in range(n)]
    lines += ["links:"] + [f"  - {{src: c{i}, dst: c{i + 1}, bandwidth: 25GB/s, duplex: true}}"
                           for i in range(n - 1)]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _planes_file(folder: Path, count: int) -> str:
    """Two chips joined by ``count`` duplex cables, given as one line with ``count:``."""
    path = folder / f"planes{count}.yaml"
    path.write_text(f"name: planes\nnodes: [{{name: a}}, {{name: b}}]\nlinks:\n"
                    f"  - {{src: a, dst: b, bandwidth: 25GB/s, duplex: true, "
                    f"count: {count}}}\n")
    return str(path)


def _noc_scenario(folder: Path, side: int) -> str:
    """A noc-placement job on a side x side core grid (its all-pairs route tables)."""
    path = folder / f"noc{side}.yaml"
    path.write_text(f"name: noc\njobs:\n  - kind: noc-placement\n"
                    f"    grid: {{rows: {side}, cols: {side}}}\n    operators:\n"
                    f"      - {{name: a, rows: 2, cols: 4, out_bytes: 2MiB}}\n"
                    f"      - {{name: b, rows: 2, cols: 4, out_bytes: 2MiB}}\n"
                    f"    strategies: [adjacent]\n")
    return str(path)


def cases(folder: Path) -> list[tuple[str, list[str]]]:
    out = str(folder / "out")
    return [
        ("dgx-h100-cluster nodes=2000 (topo)", ["topo", "dgx-h100-cluster:nodes=2000"]),
        ("torus:512x512 (topo)", ["topo", "torus:512x512"]),
        ("fattree k=64 (topo)", ["topo", "fattree:k=64"]),
        ("file, count 2,000,000 (topo)", ["topo", _planes_file(folder, 2_000_000)]),
        ("chain file 40,000 (topo)", ["topo", _chain_file(folder, 40_000)]),
        ("ring on chain file 1,000", ["coll", "allreduce", "--topo", _chain_file(folder, 1000),
                                      "--algo", "ring", "--size", "1MiB"]),
        ("ring torus:32x32", ["coll", "allreduce", "--topo", "torus:32x32", "--algo", "ring",
                              "--size", "1GiB"]),
        ("chakra export ring torus:32x32", ["export", "chakra", "allreduce", "--topo",
                                            "torus:32x32", "--algo", "ring", "--size", "1GiB",
                                            "-o", out + ".%d.et"]),
        ("noc-placement 30x30 grid (routes)", ["run", _noc_scenario(folder, 30)]),
    ]


def run_case(argv: list[str], limit: int) -> dict:
    def _limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, *argv], capture_output=True,
                          text=True, preexec_fn=_limit, env={**os.environ, "COLUMNS": "120"})
    seconds = time.perf_counter() - start
    try:
        record = json.loads(done.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": done.stderr.strip()[-300:], "seconds": seconds}
    record["seconds"] = seconds
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", default="4GiB", help="address-space limit of each case")
    parser.add_argument("--only", default="", help="run the cases whose label has this")
    args = parser.parse_args()
    from netsim.units import format_size, parse_size

    limit = int(parse_size(args.limit))
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':38} {'largest':>10} {'sum':>10} {'measured':>10} {'ratio':>6} "
              f"{'s':>6}")
        for label, argv in cases(Path(tmp)):
            if args.only not in label:
                continue
            r = run_case(argv, limit)
            if "error" in r:
                print(f"{label:38} failed: {r['error']}")
                continue
            grown = max(r["peak"] - r["base"], 1)
            # a check made twice (before and after a build) counts once: the largest
            kinds: dict[str, float] = {}
            for need, what in r["estimates"]:
                kind = what.split("(")[0]
                kinds[kind] = max(kinds.get(kind, 0.0), need)
            total = sum(kinds.values())
            print(f"{label:38} {format_size(max(kinds.values(), default=0)):>10} "
                  f"{format_size(total):>10} {format_size(grown):>10} "
                  f"{total / grown:6.2f} {r['seconds']:6.1f}"
                  + ("" if r["code"] == 0 else f"  (exit {r['code']})"))


if __name__ == "__main__":
    main()
