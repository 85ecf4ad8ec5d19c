"""Flow-file input and output at scale: the 16x16 mesh all-to-all as a flow file.

65,280 flows of 1 MiB with explicit XY paths on a 16x16 mesh (50 GB/s links, zero
latency), written as JSON (about 11 MB) and as npz (and Parquet when pyarrow is installed).
Prints JSON parse and validate times, per format the load-and-validate time and the
end-to-end CPU and wall time of ``netsim flows FILE --format json -o out.json`` in a fresh
process (median of 3), the time to write the per-flow result as .json/.csv/.npz/.parquet
(best of three in process), and the CPU time of each step of the command. With
``--baseline TREE`` it runs the command from this tree and from TREE (another source tree
of netsim) alternately, five rounds, and prints both medians. CPU is steadier than wall on
a shared machine.

    python benchmarks/bench_flowfile_io.py [K] [--keep DIR] [--baseline TREE]

benchmarks/RESULTS.md keeps measured figures.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def alltoall_document(k: int) -> dict:
    """The flow document of a k x k mesh all-to-all: links by name, XY paths by link name."""
    from netsim.engine import route_schedule
    from netsim.schedule.traffic import all_to_all
    from netsim.topology import mesh

    topology = mesh((k, k), bandwidth=50e9)
    schedule = all_to_all(k * k, 1 << 20)
    routes = route_schedule(topology, schedule, topology.endpoints)
    names = topology.node_names
    links = [{"id": f"l{i}", "src": names[int(s)], "dst": names[int(d)],
              "bandwidth": float(topology.bandwidth[i]), "latency": 0.0}
             for i, (s, d) in enumerate(zip(topology.link_src, topology.link_dst))]
    path_ptr, path_links = np.asarray(routes.path_ptr), np.asarray(routes.path_links)
    flows = []
    for f in range(schedule.num_ops):
        hops = path_links[path_ptr[f]:path_ptr[f + 1]].tolist()
        flows.append({"id": f, "src": names[int(topology.endpoints[schedule.src[f]])],
                      "dst": names[int(topology.endpoints[schedule.dst[f]])],
                      "bytes": 1 << 20, "path": [f"l{h}" for h in hops]})
    return {"links": links, "flows": flows}


def write_files(k: int, folder: Path) -> dict[str, Path]:
    from netsim.schedule import flows_to_table, write_flow_table

    doc = alltoall_document(k)
    files = {"json": folder / f"alltoall{k}x{k}.json"}
    files["json"].write_text(json.dumps(doc))
    for fmt in ("npz", "parquet"):
        path = folder / f"alltoall{k}x{k}.{fmt}"
        try:
            write_flow_table(flows_to_table(doc), path, overwrite=True)
        except Exception as err:              # pyarrow missing: no parquet figures
            print(f"{fmt}: not written ({err})")
            continue
        files[fmt] = path
    return files


def timed(fn, *args, repeat: int = 3):
    """(best wall seconds, best CPU seconds, value) over ``repeat`` calls."""
    best, cpu, value = float("inf"), float("inf"), None
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
        cpu = min(cpu, time.process_time() - start_cpu)
    return best, cpu, value


def main(k: int, keep: str | None) -> None:
    from netsim._inputs.jsonio import read_json
    from netsim.report import write_flow_result
    from netsim.run import simulate_flows
    from netsim.schedule import flows_from_dict, load_flow_file

    folder = Path(keep or tempfile.mkdtemp(prefix="netsim-flowio-"))
    folder.mkdir(parents=True, exist_ok=True)
    files = write_files(k, folder)
    parse_s, parse_cpu, doc = timed(read_json, files["json"])
    check_s, check_cpu, _ = timed(flows_from_dict, doc, "doc")
    print(f"json, general reader (orjson, dicts; the fallback and reference): parse "
          f"{parse_s:.3f} s (cpu {parse_cpu:.3f}), validate {check_s:.3f} s "
          f"(cpu {check_cpu:.3f})")
    fast_reader(files["json"])
    result = None
    for fmt, path in files.items():
        load_s, load_cpu, flowset = timed(load_flow_file, path)
        if result is None:
            result = simulate_flows(flowset)
        row = {"format": fmt, "file_MB": round(path.stat().st_size / 1e6, 1),
               "flows": flowset.schedule.num_ops, "load_validate_s": round(load_s, 3),
               "load_validate_cpu_s": round(load_cpu, 3)}
        cpu, wall = end_to_end(path, folder / f"out-{fmt}.json", Path.cwd(), runs=3)
        row.update(end_to_end_cpu_s=round(cpu, 3), end_to_end_wall_s=round(wall, 3))
        print("  ".join(f"{key}={value}" for key, value in row.items()), flush=True)
    for suffix in ("json", "csv", "npz", "parquet"):
        target = folder / f"result.{suffix}"
        try:
            write_s, write_cpu, _ = timed(
                lambda: write_flow_result(result, target, overwrite=True))
        except Exception as err:
            print(f"result.{suffix}: not written ({err})")
            continue
        print(f"write result.{suffix}: {write_s:.3f} s (cpu {write_cpu:.3f}), "
              f"{target.stat().st_size / 1e6:.1f} MB")
    phases(files["json"])


def fast_reader(path: Path) -> None:
    """CPU seconds of the fast JSON reader's steps (best of three, in process)."""
    from netsim.schedule.flowcolumns import flowset_from_columns
    from netsim.schedule.flowjson import decode_flow_columns, path_link_ids
    from netsim.schedule.flownetwork import network_of

    raw = path.read_bytes()
    _, decode_cpu, (header, cols, raws) = timed(decode_flow_columns, raw)
    topology, _ = network_of(header, str(path))
    _, paths_cpu, (cols.path_ptr, cols.path_ids) = timed(path_link_ids, raws, topology)
    _, check_cpu, _ = timed(flowset_from_columns, topology, cols)
    print(f"json, fast reader (msgspec, paths as bytes): decode and columns "
          f"{decode_cpu:.3f} s cpu, path names {paths_cpu:.3f}, checks {check_cpu:.3f}")


def _env(tree: Path) -> dict:
    """netsim from ``tree`` with its bytecode cached (under the temp folder, not the tree)."""
    env = dict(os.environ, PYTHONPATH=str(tree),
               PYTHONPYCACHEPREFIX=str(Path(tempfile.gettempdir()) / "netsim-bench-pyc"
                                       / str(tree).strip("/").replace("/", "_")))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def end_to_end(path: Path, out: Path, tree: Path, runs: int = 5) -> tuple[float, float]:
    """Median CPU (user + sys) and wall seconds of ``netsim flows PATH --format json -o
    OUT`` in a fresh process, netsim imported from ``tree``, bytecode compiled as an
    installed package has it (a pycache prefix; one warm-up run writes it)."""
    env = _env(tree)
    argv = [sys.executable, "-m", "netsim", "flows", str(path), "--format", "json", "-o",
            str(out), "--overwrite"]
    cpu, wall = [], []
    for run in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env, cwd=tree)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run:                                          # run 0 compiles the bytecode
            wall.append(time.perf_counter() - start)
            cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(cpu), statistics.median(wall)


def phases(path: Path) -> None:
    """CPU seconds of each step of the command, in a fresh process (imports included)."""
    code = f"""
import gc, time
from dataclasses import replace
laps, t = [], time.process_time()
def lap(name):
    global t
    laps.append(f"{{name}} {{time.process_time() - t:.3f}}"); t = time.process_time()
import numpy as np
import netsim.cli.flows
from netsim.schedule import load_flow_file
from netsim.engine import route_schedule
from netsim.engine.executor import execute
from netsim.routing.explicit import ExplicitPaths
from netsim.report import flow_records_fast, json_bytes
lap("imports")
gc.disable()
flowset = load_flow_file({str(path)!r})
gc.freeze(); gc.enable()
lap("load+validate")
schedule, router = flowset.schedule, None
if isinstance(schedule.paths, ExplicitPaths) and schedule.paths.every:   # as simulate_flows
    schedule, router = replace(schedule, paths={{}}), schedule.paths
routes = route_schedule(flowset.topology, schedule, np.arange(flowset.topology.num_nodes),
                        router)
lap("route")
result = execute(flowset.topology, schedule, routes, not_before=flowset.not_before)
result.op_ids = flowset.flow_ids
lap("engine")
json_bytes({{"records": flow_records_fast(result), "links": result.link_records()}})
lap("json-out")
print("  ".join(laps), f"(process cpu {{time.process_time():.3f}})")
"""
    here = Path(__file__).resolve().parents[1]
    print("steps (cpu s):", subprocess.run([sys.executable, "-c", code], check=True,
                                           capture_output=True, text=True,
                                           env=_env(here)).stdout.strip())


def compare(k: int, baseline: Path, runs: int) -> None:
    """End to end, this tree against ``baseline`` (a source tree, e.g. ``git archive`` of
    main), alternating, ``runs`` rounds; medians."""
    folder = Path(tempfile.mkdtemp(prefix="netsim-flowio-"))
    path = write_files(k, folder)["json"]
    here = Path(__file__).resolve().parents[1]
    figures = {"baseline": [], "this tree": []}
    for _ in range(runs):
        for name, tree in (("baseline", baseline), ("this tree", here)):
            figures[name].append(end_to_end(path, folder / "out.json", tree, runs=1))
    for name, pairs in figures.items():
        cpu, wall = zip(*pairs)
        print(f"{name}: end to end cpu {statistics.median(cpu):.2f} s, "
              f"wall {statistics.median(wall):.2f} s (medians of {runs})")
    phases(path)


if __name__ == "__main__":
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        keep = args[args.index("--keep") + 1]
        del args[args.index("--keep"):args.index("--keep") + 2]
    if "--baseline" in args:
        base = Path(args[args.index("--baseline") + 1])
        del args[args.index("--baseline"):args.index("--baseline") + 2]
        compare(int(args[0]) if args else 16, base, runs=5)
    else:
        main(int(args[0]) if args else 16, keep)
