"""What an event changes in a log-normal all-to-all, and how it is grouped.

Replays the k x k mesh all-to-all with log-normal per-pair sizes of
``bench_engine_events.py lognormal<k>`` (50 GB/s, XY routing, zero latency, sigma 1,
seed 0) with a cold max-min solve (``max_min_rates_csr``) at every completion, and prints
per sampled event:

* ``moved``: draining flows whose rate changed (beyond 1e-9 relative);
* ``blocks``: how many groups they form by (old rate, new rate);
* ``incidences``: flow-link incidences of the moved flows (what a per-flow update
  touches: a flow-by-flow refill re-lists each moved flow on each of its links);
* ``block_links``: distinct (block, link) pairs (what an update per group of flows
  sharing a rate would touch);
* ``classes`` / ``split``: old rates (classes of flows at one rate) that moved, and how
  many of them did not move as a whole (their flows went to different new rates).

    python benchmarks/measure_ripple.py K [EVENTS] [EVERY]

8x8, every event (20 s): moved 188, blocks 13.9, incidences 975, block_links 130 (7.5x),
classes 13.5, split 0.4. 12x12, every 10th event (about 7 min): moved 962, blocks 30.8,
incidences 7,548, block_links 540 (14x).
"""

from __future__ import annotations

import sys

import numpy as np


def main(k: int, events: int, every: int) -> None:
    from netsim.engine import route_schedule
    from netsim.engine.maxmin import max_min_rates_csr
    from netsim.schedule import sends_from_arrays
    from netsim.topology import mesh

    n = k * k
    topology = mesh((k, k), bandwidth=50e9, latency=0.0)
    src, dst = np.divmod(np.arange(n * n), n)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    rng = np.random.default_rng(0)
    nbytes = np.maximum(np.rint(rng.lognormal(np.log(1 << 20), 1.0, src.size)), 1.0)
    routes = route_schedule(topology, sends_from_arrays(n, src, dst, nbytes, tag="a2a"),
                            topology.endpoints)
    ptr, links = routes.path_ptr, routes.path_links
    length = np.diff(ptr)
    capacity = np.asarray(topology.bandwidth, dtype=float)
    remaining = nbytes.copy()
    rate = np.zeros(src.size)
    active = np.arange(src.size)
    totals = dict.fromkeys(["moved", "blocks", "incidences", "block_links", "classes",
                            "split"], 0)
    sampled = 0
    for event in range(events):
        if not active.size:
            break
        csr = np.concatenate([links[ptr[f]:ptr[f + 1]] for f in active])
        new = max_min_rates_csr(length[active], csr, capacity)
        if event and event % every == 0:
            old = rate[active]
            moved = np.abs(new - old) > 1e-9 * old
            if moved.any():
                sampled += 1
                flows = active[moved]
                # rates to the mB/s: equal rates of a max-min solution agree far closer
                old_key, new_key = np.round(old / 1e-3), np.round(new / 1e-3)
                _, block = np.unique(np.stack([old_key[moved], new_key[moved]]), axis=1,
                                     return_inverse=True)
                block = block.ravel()
                hops = length[flows]
                flow_links = np.concatenate([links[ptr[f]:ptr[f + 1]] for f in flows])
                pairs = np.repeat(block, hops).astype(np.int64) * capacity.size + flow_links
                totals["moved"] += flows.size
                totals["blocks"] += int(block.max()) + 1
                totals["incidences"] += int(hops.sum())
                totals["block_links"] += np.unique(pairs).size
                for value in np.unique(old_key[moved]):
                    totals["classes"] += 1
                    totals["split"] += np.unique(new_key[old_key == value]).size > 1
        rate[active] = new
        step = (remaining[active] / new).min()
        remaining[active] -= new * step
        active = active[remaining[active] > 1e-9 * nbytes[active]]
    per = max(sampled, 1)
    print(f"mesh {k}x{k}: {sampled} events sampled, per event: "
          + "  ".join(f"{name}={value / per:.1f}" for name, value in totals.items())
          + f"  incidences/block_links={totals['incidences'] / max(totals['block_links'], 1):.1f}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]] or [8]
    main(args[0], args[1] if len(args) > 1 else 10**9, args[2] if len(args) > 2 else 1)
