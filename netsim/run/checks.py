"""Checks of a collective run's request, before anything is built or simulated.

The collective's name, the per-message overhead, the rank order, the ranks' nodes, and
the memory a schedule will need (:func:`check_scale` before building, :func:`check_built`
after), refused in one line naming the value.

>>> check_alpha(1e-6)
1e-06
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError, unknown_name
from ..report.nccl import BUSBW_FACTOR
from ..schedule import MAX_SENDS   # a cap on typos; memory is the gate (check_scale)

__all__ = ["check_op", "check_alpha", "check_order", "check_scale", "check_built",
           "ring_sends", "rank_nodes", "MEAN_LINKS_SAMPLE"]


def check_op(op: str) -> str:
    if op not in BUSBW_FACTOR:
        raise unknown_name("collective", op, BUSBW_FACTOR)
    return op


def check_alpha(alpha) -> float:
    if isinstance(alpha, (bool, np.bool_)):     # float(True) is 1 s
        raise InputError(f"alpha (per-message overhead) must be a time in s, got {alpha!r}")
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise InputError(f"alpha (per-message overhead) must be a time in s, got {alpha!r}") \
            from None
    if not (np.isfinite(value) and value >= 0):
        raise InputError(f"alpha (per-message overhead) must be a finite time >= 0, got "
                         f"{alpha!r}")
    return value


def check_order(order) -> None:
    from ..algorithms.orders import ORDERS

    if isinstance(order, str) and order not in ORDERS:
        raise unknown_name("rank order", order, ORDERS)


def rank_nodes(topology, ranks: int | None, placement) -> np.ndarray:
    """Node index of every rank (names allowed in ``placement``)."""
    if placement is not None:
        nodes = np.asarray([topology.node(p) if isinstance(p, str) else int(p)
                            for p in placement], dtype=np.int64)
        if ranks is not None and int(ranks) != nodes.size:
            raise InputError(f"placement has {nodes.size} nodes but {ranks} ranks were asked")
        return nodes
    return topology.first_endpoints(topology.num_endpoints if ranks is None else int(ranks))


def check_scale(op: str, n: int, chunks: int, topology, *,
                per_send: float | None = None, all_pairs: bool = False,
                name: str | None = None, budget: int | None = None) -> None:
    """Refuse runs whose schedules would not fit in memory, before building them.

    The sends are a ring's (``chunks`` x n x (n-1), twice for an all-reduce). Every send
    crosses at least one link, and a ring laid on the machine's own ring crosses exactly
    one, so the estimate counts one link per send: what cannot fit even so is refused
    (an all-to-all's sends, and those of an algorithm whose every rank sends to every
    other, ``all_pairs``, cross the mean distance). A block run (``per_send``: its
    memory per block, spread over the block's sends) needs memory per ring step, not per
    send. :data:`MAX_SENDS` stays as a cap on typos (a billion chunks) when
    ``--max-memory`` allows almost anything; for a block run it counts ring steps.
    ``budget`` is the run's memory budget in bytes (its engine configuration's; None:
    :func:`netsim.budget.memory_budget`).
    """
    from ..budget import require_memory, require_sends

    sends = ring_sends(op, n, chunks)
    what = " ".join(filter(None, (op, name))) + f" on {n} ranks" + \
        (f" in {chunks} chunks" if chunks > 1 else "")
    advice = "fewer ranks or fewer chunks" if chunks > 1 else "fewer ranks"
    if per_send is not None:
        require_memory(sends * per_send, f"{what} ({sends:.3g} sends)", advice=advice,
                       budget=budget)
    else:
        require_sends(sends, topology, what, hops=None if op == "alltoall" or all_pairs else 1.0,
                      advice=advice, budget=budget)
    # a block run simulates one send per block (a ring step: n sends), so the cap on typos
    # counts its steps
    count, unit = (sends, "sends") if per_send is None else \
        (sends // max(n, 1), "ring steps")
    if count > MAX_SENDS:
        raise InputError(f"{what} needs about {count:.3g} {unit} "
                         f"(more than the limit of {MAX_SENDS}): use fewer chunks or ranks")


def ring_sends(op: str, n: int, chunks: int) -> int:
    """The sends of a ring of ``op`` on n ranks in ``chunks`` chunks: what
    :func:`check_scale` counts."""
    if op in ("broadcast", "reduce"):
        return chunks * max(n - 1, 1)
    return chunks * n * max(n - 1, 1) * (2 if op == "allreduce" else 1)


def check_built(what: str, schedule, topology, placement: np.ndarray, router, *,
                budget: int | None = None) -> None:
    """After the build, before the engine: the memory of the schedule's own sends and of
    the links they cross (an algorithm may send more, or farther, than the ring that
    :func:`check_scale` counted), within ``budget`` bytes (as :func:`check_scale`'s)."""
    from ..budget import require_sends

    require_sends(schedule.num_sends, topology, what,
                  hops=lambda: _mean_links(schedule, topology, placement, router),
                  advice="fewer ranks or fewer chunks", budget=budget)


#: Above this many sends, :func:`_mean_links` estimates from a uniform sample of this
#: many (seeded): path lengths of at most a few hundred links put the estimate within a
#: fraction of a link, plenty for a memory check, and counting the pairs of every send
#: cost 0.4 s per candidate of `auto` on 4,096 ranks (33.5M sends of `direct`).
MEAN_LINKS_SAMPLE = 1 << 16


def _mean_links(schedule, topology, placement: np.ndarray, router) -> float | None:
    """Mean path incidences per send of ``schedule`` (its distinct rank pairs routed once;
    over a sample of :data:`MEAN_LINKS_SAMPLE` sends when it has more), or the endpoints'
    mean distance when it has too many distinct pairs to route cheaply."""
    from ..budget import _mean_hops
    from ..routing import route
    from ..routing.core import segment_sum
    from ..schedule import SEND

    count, n = schedule.num_sends, int(schedule.num_ranks)
    if not count:
        return _mean_hops(topology)
    sends = np.flatnonzero(schedule.kind == SEND) if count < schedule.num_ops else None
    if count > MEAN_LINKS_SAMPLE:
        pick = np.random.default_rng(0).integers(0, count, MEAN_LINKS_SAMPLE)
        sends = pick if sends is None else sends[pick]
        count = MEAN_LINKS_SAMPLE
    elif n * n > max(4 * count, 1 << 20):
        return _mean_hops(topology)
    src, dst = schedule.src, schedule.dst
    if sends is not None:
        src, dst = src[sends], dst[sends]
    pairs, counts = np.unique(src * n + dst, return_counts=True)
    routes = route(topology, placement[pairs // n], placement[pairs % n], router=router)
    links = segment_sum(routes.hops.astype(np.float64), routes.sub_ptr)
    return float((counts * links).sum() / count)
