"""Flow-file input and output at scale: the 16x16 mesh all-to-all as a flow file.

65,280 flows of 1 MiB with explicit XY paths on a 16x16 mesh (50 GB/s links, zero
latency), written as JSON (about 11 MB) and as npz (and Parquet when pyarrow is installed).
Prints, per format: load and validate time, result write time, and the end-to-end time of
``netsim flows FILE --format json -o out.json`` in a fresh process.

    python benchmarks/bench_flowfile_io.py [K] [--keep DIR]
"""

from __future__ import annotations

import json
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
    doc = alltoall_document(k)
    files = {"json": folder / f"alltoall{k}x{k}.json"}
    files["json"].write_text(json.dumps(doc))
    try:
        from netsim.schedule import flows_to_table, write_flow_table
    except ImportError:
        return files
    for fmt in ("npz", "parquet"):
        path = folder / f"alltoall{k}x{k}.{fmt}"
        try:
            write_flow_table(flows_to_table(doc), path)
        except Exception as err:              # pyarrow missing: no parquet figures
            print(f"{fmt}: not written ({err})")
            continue
        files[fmt] = path
    return files


def timed(fn, *args, repeat: int = 3):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main(k: int, keep: str | None) -> None:
    from netsim.run import simulate_flows
    from netsim.schedule import load_flow_file

    folder = Path(keep or tempfile.mkdtemp(prefix="netsim-flowio-"))
    folder.mkdir(parents=True, exist_ok=True)
    files = write_files(k, folder)
    result = None
    for fmt, path in files.items():
        load_s, flowset = timed(load_flow_file, path)
        if result is None:
            result = simulate_flows(flowset)
        row = {"format": fmt, "file_MB": round(path.stat().st_size / 1e6, 1),
               "flows": flowset.schedule.num_ops, "load_validate_s": round(load_s, 3)}
        start = time.perf_counter()
        out = folder / f"out-{fmt}.json"
        subprocess.run([sys.executable, "-m", "netsim", "flows", str(path), "--format", "json",
                        "-o", str(out), "--overwrite"], check=True, capture_output=True)
        row["end_to_end_s"] = round(time.perf_counter() - start, 3)
        print("  ".join(f"{key}={value}" for key, value in row.items()), flush=True)
    try:
        from netsim.report import write_flow_result
    except ImportError:
        return
    for suffix in ("json", "csv", "npz", "parquet"):
        try:
            write_s, _ = timed(write_flow_result, result, folder / f"result.{suffix}")
        except Exception as err:
            print(f"result.{suffix}: not written ({err})")
            continue
        print(f"write result.{suffix}: {write_s:.3f} s "
              f"({(folder / f'result.{suffix}').stat().st_size / 1e6:.1f} MB)")


if __name__ == "__main__":
    args = sys.argv[1:]
    keep = None
    if "--keep" in args:
        keep = args[args.index("--keep") + 1]
        del args[args.index("--keep"):args.index("--keep") + 2]
    main(int(args[0]) if args else 16, keep)
