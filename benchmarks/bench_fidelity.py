"""The fidelity table (docs/fidelity.md): the fluid model's error against the packet model.

Cases (each at 4 KiB, 256 KiB and 16 MiB, nccl-tests sizes):

* ``ring``: ring all-reduce on an 8-node ring (``ring:8``: 50 GB/s, netsim's default link);
* ``a2a``: direct all-to-all on a 4x4 mesh (``mesh:4x4``, XY routing);
* ``tt_ring``: tt_ring all-gather on ``t3000`` (Wormhole: 6144 B payload + 48 B header);
* ``nvls``: NVLS (``innetwork``) all-reduce on ``dgx-h100``.

Both models run the same placed schedule with the machine's calibrated alpha; the packet
model is store-and-forward with its default buffers (``netsim.packet.options``). Printed
per row: fluid and packet time, the fluid error (fluid - packet) / packet, the worst
per-op error, the wall time of each model, the packets simulated and packet hops per
second of wall time.

    python benchmarks/bench_fidelity.py [--markdown] [--switching cut-through]
        [--alpha SECONDS] [CASE ...]

``--alpha`` replaces the machines' calibrated alpha (how the NVLS gap depends on it).
"""

from __future__ import annotations

import argparse
import time

CASES = {
    "ring": ("allreduce", "ring:8", "ring", "ring all-reduce, 8-node ring"),
    "a2a": ("alltoall", "mesh:4x4", "direct", "all-to-all, 4x4 mesh"),
    "tt_ring": ("allgather", "t3000", "tt_ring", "tt_ring all-gather, t3000"),
    "nvls": ("allreduce", "dgx-h100", "innetwork", "NVLS all-reduce, dgx-h100"),
}
SIZES = ["4KiB", "256KiB", "16MiB"]


def _row(case: str, size: str, switching: str, alpha: float | None = None) -> dict:
    from netsim.packet import PacketOptions
    from netsim.run import run_collective
    from netsim.run.models import model_error

    op, spec, algo, label = CASES[case]
    start = time.perf_counter()
    fluid = run_collective(op, spec, algo, size, model="fluid", alpha=alpha)
    fluid_wall = time.perf_counter() - start
    start = time.perf_counter()
    run = run_collective(op, spec, algo, size, model="packet", alpha=alpha,
                         packet=PacketOptions(switching=switching))
    packet_wall = time.perf_counter() - start
    packet = run.result
    error = model_error(fluid.result, packet)
    return {"case": label, "size": size, "fluid_us": fluid.time_s * 1e6,
            "packet_us": packet.makespan * 1e6, "error": error["makespan_error"],
            "worst_op": error["op_error_max"], "fluid_wall_s": fluid_wall,
            "packet_wall_s": packet_wall, "packets": packet.meta["packets"],
            "hops_per_s": packet.meta["packet_hops"] / packet_wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES), metavar="CASE",
                        help=f"cases to run (default: all): {', '.join(CASES)}")
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    parser.add_argument("--switching", default="store-and-forward",
                        choices=["store-and-forward", "cut-through"])
    parser.add_argument("--alpha", type=float, default=None,
                        help="per-message overhead (s) instead of the calibrated one")
    args = parser.parse_args()
    rows = [_row(case, size, args.switching, args.alpha) for case in args.cases for size in SIZES]
    head = ["case", "size", "fluid (us)", "packet (us)", "fluid err", "worst op err",
            "fluid wall (s)", "packet wall (s)", "packets", "hops/s"]
    cells = [[r["case"], r["size"], f"{r['fluid_us']:.2f}", f"{r['packet_us']:.2f}",
              f"{100 * r['error']:+.1f}%", f"{100 * r['worst_op']:+.1f}%",
              f"{r['fluid_wall_s']:.3f}", f"{r['packet_wall_s']:.3f}", str(r["packets"]),
              f"{r['hops_per_s']:.3g}"] for r in rows]
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
    else:
        widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(head)]
        print("  ".join(h.rjust(w) for h, w in zip(head, widths)))
        for c in cells:
            print("  ".join(x.rjust(w) for x, w in zip(c, widths)))


if __name__ == "__main__":
    main()
