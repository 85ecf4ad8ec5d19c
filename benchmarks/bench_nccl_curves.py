"""Published NVIDIA nccl-tests curves against netsim's NCCL model, launched as each run was.

For every curve in :data:`CURVES` (``benchmarks/data/nvidia_*``, sources in each file's
header) this runs ``netsim coll OP --topo PRESET --algo nccl --sizes ...`` (``--ranks`` for
the partial-node curves) through the same ``run_collective`` the CLI uses, with the launch
the file states (its ``nGpus N``: nccl-tests ``-g N``, or one process per GPU) and the
algorithm it forced (``NCCL_ALGO``), and prints one Markdown table per curve: size,
published time or busbw, netsim's, the error (netsim time / published time - 1; from busbw
where only busbw is published: published busbw / netsim busbw - 1, the same ratio), NCCL's
choice, and whether the goal holds (15% from 1 MiB, 30% below). Nothing is fitted per size
or curve: the host time per GPU (benchmarks/fit_nccl_host.py) and the NVLS rate per channel
(docs/calibration.md) are global.
Run: ``python benchmarks/bench_nccl_curves.py`` (about a minute; ``--quick`` keeps every
fourth size). The tables are quoted in docs/calibration.md.
"""

from __future__ import annotations

import csv
import sys
import time
from pathlib import Path

from netsim.algorithms import AlgoOptions
from netsim.run import measured_gpus_per_thread, run_collective

DATA = Path(__file__).resolve().parent / "data"
KiB, MiB = 1 << 10, 1 << 20
#: (file, op, preset, ranks, NCCL_ALGO the run forced or None); the erratic Voltage Park
#: all_gather run is left out (see its header).
CURVES = [
    ("nvidia_h100_8gpu_allreduce_nccltests_voltagepark.csv", "allreduce", "dgx-h100", 8, None),
    ("nvidia_h100_8gpu_allreduce_nccltests_together_1MiB_8GiB.csv", "allreduce", "dgx-h100", 8,
     None),
    ("nvidia_h100_8gpu_allgather_nccltests_together.csv", "allgather", "dgx-h100", 8, None),
    ("nvidia_h100_8gpu_allreduce_nccltests_multiprocess_32MiB_16GiB.csv", "allreduce",
     "dgx-h100", 8, None),
    ("nvidia_h100_8gpu_allgather_nccltests_multiprocess_32MiB_16GiB.csv", "allgather",
     "dgx-h100", 8, None),
    ("nvidia_h100_4gpu_allreduce_nccltests_waynehacking8.csv", "allreduce", "dgx-h100", 4, None),
    ("nvidia_h100_4gpu_allgather_nccltests_waynehacking8.csv", "allgather", "dgx-h100", 4, None),
    ("nvidia_h200_8gpu_allreduce_nccltests_azure_nvls_inplace.csv", "allreduce", "dgx-h100", 8,
     "nvls"),
    ("nvidia_a100_8gpu_allreduce_nccltests_azure_inplace.csv", "allreduce", "dgx-a100", 8,
     None),
    ("nvidia_gb200_4gpu_allreduce_nccltests_azure_ring_inplace.csv", "allreduce", "gb200-nvl72",
     4, "ring"),
    ("nvidia_gb200_nvl72_72gpu_allreduce_nccltests_coreweave_512MiB_8GiB.csv", "allreduce",
     "gb200-nvl72", 72, None),
]


def published(name: str) -> list[dict[str, float]]:
    """Rows of a curve file as {'size', 'time_s'?, 'busbw'?} (comment lines skipped)."""
    with open(DATA / name, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    out = []
    for r in rows:
        row = {"size": int(r["size_bytes"]), "busbw": float(r["busbw_GBps"])}
        if r.get("time_us"):
            row["time_s"] = float(r["time_us"]) * 1e-6
        out.append(row)
    return out


def tolerance(size: int) -> float:
    """The goal: 15% from 1 MiB, 30% below."""
    return 0.15 if size >= MiB else 0.30


def launch(name: str, forced: str | None) -> AlgoOptions:
    """The run's launch (nGpus of its header) and forced algorithm as netsim options."""
    extra = {"gpus_per_thread": measured_gpus_per_thread(DATA / name) or 1}
    if forced:
        extra["nccl_algorithm"] = forced
    return AlgoOptions(extra=extra)


def error(run, row: dict[str, float]) -> float:
    """netsim time / published time - 1 (from busbw when no time is published)."""
    if "time_s" in row:
        return run.time_s / row["time_s"] - 1.0
    return row["busbw"] / run.busbw_GBps - 1.0


def compare(name: str, op: str, preset: str, ranks: int, forced: str | None,
            every: int = 1) -> list[dict]:
    rows = []
    options = launch(name, forced)
    for row in published(name)[::every]:
        run = run_collective(op, preset, "nccl", row["size"], ranks=ranks, options=options)
        err = error(run, row)
        rows.append({**row, "netsim_us": run.time_s * 1e6, "netsim_busbw": run.busbw_GBps,
                     "error": err, "choice": run.record()["nccl"],
                     "ok": abs(err) <= tolerance(row["size"])})
    return rows


def fmt_size(size: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size // scale} {unit}"
    return f"{size} B"


def main(quick: bool) -> None:
    for name, op, preset, ranks, forced in CURVES:
        start = time.perf_counter()
        rows = compare(name, op, preset, ranks, forced, 4 if quick else 1)
        how = f"-g {launch(name, forced).extra['gpus_per_thread']}" + (
            f", NCCL_ALGO={forced}" if forced else "")
        print(f"\n{name} ({op}, {preset}, {ranks} GPUs, {how})\n")
        print("| size | published (us) | netsim (us) | published busbw | netsim busbw | error "
              "| NCCL choice | within goal |")
        print("|---|---|---|---|---|---|---|---|")
        for r in rows:
            pub = f"{r['time_s'] * 1e6:.2f}" if "time_s" in r else "-"
            print(f"| {fmt_size(r['size'])} | {pub} | {r['netsim_us']:.2f} | {r['busbw']:.2f} | "
                  f"{r['netsim_busbw']:.2f} | {100 * r['error']:+.1f}% | {r['choice']} | "
                  f"{'yes' if r['ok'] else 'NO'} |")
        bad = [r for r in rows if not r["ok"]]
        print(f"\n{len(rows) - len(bad)} of {len(rows)} sizes within the goal; "
              f"{time.perf_counter() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
