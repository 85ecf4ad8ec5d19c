"""Run a collective on a machine and report it as nccl-tests would, against two bounds.

:func:`run_collective` builds the schedule of one algorithm (or of every algorithm that
applies, with ``algorithm="auto"``), places rank r on ``placement[r]`` (by default the
r-th endpoint), simulates it and returns a :class:`CollectiveRun`: the time, nccl-tests'
algbw and busbw (GB/s, GB = 1e9 B) and two lower bounds of
:mod:`netsim.algorithms.bounds` (s):

* the algorithm's (``bound_s``, ``efficiency = bound_s / time``): what the links its run
  used allow an algorithm of its kind, with its own bytes per node
  (:func:`~netsim.algorithms.bounds.algorithm_bound`); for ``auto`` and NCCL's model,
  that of the algorithm that ran at that size;
* the machine's (``machine_bound_s``, ``machine_efficiency``): the best any algorithm
  could do on the links these ranks can use (every link when they hold every endpoint;
  :func:`~netsim.algorithms.bounds.group_links` otherwise).

:func:`run_sweep` does the same over sizes, e.g. ``sweep_sizes("1KiB:4GiB")``.

Sizes follow nccl-tests: all-reduce buffer, all-gather output, reduce-scatter input, one
rank's all-to-all send buffer, broadcast/reduce buffer (bytes).

>>> run = run_collective("allreduce", "ring:8,bw=10GB/s", "ring", "80MB")
>>> round(run.time_s * 1e3, 6), round(run.busbw_GBps, 6)
(14.0, 10.0)
>>> round(run.efficiency, 6), run.bound_name   # a one-way ring meets its own bound ...
(1.0, 'injection')
>>> round(run.machine_efficiency, 6)    # ... which uses half of each rank's two-way links
0.5
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

import numpy as np

from ..algorithms.bounds import Bound, lower_bound, reduction_bound
from ..engine import Result
from ..errors import InputError, RoutingError, unknown_name
from .collective_groups import group_records
from .faultspec import fault_summary, resolve_faults, rerouted_flows
from .library import resolve_default
from .models import check_model, model_fields, simulate_model
from ..report.nccl import BUSBW_FACTOR, algbw_GBps, busbw_GBps
from ..schedule import MAX_SENDS   # a cap on typos; memory is the gate (_check_scale)
from ..units import format_time, parse_size

__all__ = ["CollectiveRun", "run_collective", "run_sweep", "sweep_sizes", "resolve_algorithms",
           "requirement_text"]

# Sweeps longer than this are almost certainly a typo (a factor of 1.0001, say).
_MAX_SWEEP_POINTS = 4096


@dataclass(eq=False)
class CollectiveRun:
    """One simulated collective: times in s, bandwidths in GB/s (nccl-tests' 1e9 B)."""

    op: str
    algorithm: str
    topology: str
    ranks: int
    size_bytes: float
    time_s: float
    algbw_GBps: float | None
    busbw_GBps: float | None
    bound_s: float
    bound_name: str
    bound_detail: str
    efficiency: float | None
    max_link_util: float
    events: int
    flows: int
    result: Result = field(repr=False)
    # The machine's bound: the best any algorithm could do on the links these ranks can
    # use (bound_s and efficiency are the bound of the algorithm that ran).
    machine_bound_s: float | None = None
    machine_bound_name: str | None = None
    machine_bound_detail: str | None = None
    machine_efficiency: float | None = None
    candidates: dict[str, float] | None = None   # auto: every simulated candidate's time, s
    faults: str | None = None        # the faults applied ('fail 0_0->0_1; ...'), if any
    rerouted: int | None = None      # flows moved off failed links, when there were faults
    groups: list[str] | None = None        # --axis: every group's label ('0_1..7_1')
    group_times: list[float] | None = None  # ... and its time (s); time_s is the slowest
    machine: Any = field(default=None, repr=False)   # the topology run on (its fabric)
    model: dict | None = None        # packet or both: run.models.model_fields of the result
    pruned: dict[str, float] | None = None   # auto: candidates not simulated -> lower bound, s

    def candidates_list(self) -> list[dict[str, Any]] | None:
        """``auto``'s candidates (auto runs only): the simulated ones fastest first as
        ``{"algorithm", "time_s"}``, then those skipped because their lower bound already
        exceeded the winner's time as ``{"algorithm", "bound_s"}``, smallest bound first."""
        if not self.candidates:
            return None
        return ([{"algorithm": name, "time_s": float(t)} for name, t in
                 sorted(self.candidates.items(), key=lambda kv: kv[1])]
                + [{"algorithm": name, "bound_s": float(t)} for name, t in
                   sorted((self.pruned or {}).items(), key=lambda kv: kv[1])])

    def candidates_text(self) -> str | None:
        """:func:`candidates_text` of :meth:`candidates_list`."""
        return candidates_text(self.candidates_list())

    def record(self) -> dict[str, Any]:
        """A flat dict of plain values for tables, JSON and CSV."""
        row = {"op": self.op, "algorithm": self.algorithm, "topology": self.topology,
               "ranks": self.ranks, "size_bytes": _whole(self.size_bytes),
               "time_s": self.time_s,
               "algbw_GBps": self.algbw_GBps, "busbw_GBps": self.busbw_GBps,
               "bound_s": self.bound_s, "bound": self.bound_name,
               "efficiency": self.efficiency,
               "machine_bound_s": self.machine_bound_s, "machine_bound": self.machine_bound_name,
               "machine_efficiency": self.machine_efficiency,
               "max_link_util": self.max_link_util,
               "events": self.events, "flows": self.flows, "bound_detail": self.bound_detail,
               "machine_bound_detail": self.machine_bound_detail}
        row.update(self.result.meta.get("record", {}))   # hook: what the algorithm chose
        if "engine" in self.result.meta:                 # the engine's path (json, csv)
            row["engine"] = self.result.meta["engine"]
        if self.candidates:
            row["candidates"] = self.candidates_list()
        if self.faults:
            row["faults"] = self.faults
            row["rerouted"] = self.rerouted
        if self.groups:
            row.update(group_records(self.groups, self.group_times))
        if self.model:
            row.update(self.model)
        return row


def candidates_text(entries) -> str | None:
    """``'ring=1.2ms,tree=3.4ms,direct>=5.6ms'``: a record's ``candidates`` list as tables
    show it (``name>=bound`` for one skipped by its lower bound).

    >>> candidates_text([{"algorithm": "ring", "time_s": 1.2e-3},
    ...                  {"algorithm": "direct", "bound_s": 5.6e-3}])
    'ring=1.2ms,direct>=5.6ms'
    """
    if not entries:
        return None
    if isinstance(entries, str):            # a record written before the list
        return entries
    text = lambda t: format_time(t).replace(" ", "")    # noqa: E731
    return ",".join(f"{e['algorithm']}={text(e['time_s'])}" if "time_s" in e
                    else f"{e['algorithm']}>={text(e['bound_s'])}" for e in entries)


def _whole(size: float) -> int | float:
    """A byte count as an int where it is whole (tables and Parquet get an integer column)."""
    return int(size) if float(size).is_integer() else float(size)


# -- choosing algorithms ---------------------------------------------------------------

def _check_op(op: str) -> str:
    if op not in BUSBW_FACTOR:
        raise unknown_name("collective", op, BUSBW_FACTOR)
    return op


def resolve_algorithms(op: str, algorithm) -> tuple[list, bool]:
    """(candidate algorithms, whether to pick the fastest) for a name, ``'auto'``, an
    algorithm object or a list of them (a list is searched like ``'auto'``)."""
    from ..interop.schedule_files import file_algorithm, is_schedule_file

    if is_schedule_file(algorithm):     # a schedule file (MSCCL .xml, netsim .json)
        return [file_algorithm(op, algorithm)], False
    if not isinstance(algorithm, str):
        if isinstance(algorithm, (list, tuple)):
            return list(algorithm), True
        return [algorithm], False
    from ..algorithms.registry import algorithms_for

    known = list(algorithms_for(op))
    if algorithm == "auto":   # hook: builders marked auto=False (nccl) are not candidates
        return [a for a in known if getattr(a.build, "auto", True)], True
    for candidate in known:
        if candidate.name == algorithm:
            return [candidate], False
    raise unknown_name(f"{op} algorithm", algorithm, [a.name for a in known] + ["auto"])


def requirement_text(algo) -> str:
    """What an algorithm needs, in words ('' when nothing special)."""
    needs = []
    if getattr(algo, "power_of_two", False):
        needs.append("a power-of-two number of ranks")
    requires = getattr(algo, "requires", None)
    needs.append({None: "", "grid": "ranks placed on a mesh or torus",
                  "reducing-switch": "a switch that reduces in-network",
                  "groups": "rank groups (options.groups)"}.get(requires, str(requires)))
    return " and ".join(n for n in needs if n)


def _default_options():
    from ..algorithms.options import AlgoOptions

    return AlgoOptions()


# -- running ---------------------------------------------------------------------------

def _rank_nodes(topology, ranks: int | None, placement) -> np.ndarray:
    """Node index of every rank (names allowed in ``placement``)."""
    if placement is not None:
        nodes = np.asarray([topology.node(p) if isinstance(p, str) else int(p)
                            for p in placement], dtype=np.int64)
        if ranks is not None and int(ranks) != nodes.size:
            raise InputError(f"placement has {nodes.size} nodes but {ranks} ranks were asked")
        return nodes
    return topology.first_endpoints(topology.num_endpoints if ranks is None else int(ranks))


def _simulate(algo, topology, size: float, nodes: np.ndarray, options, alpha: float, router,
              progress, faults=(), used: dict | None = None,
              model: str = "fluid",
              packet=None, tolerance: float = 0.0, builds=None, *,
              kinds: dict | None = None) -> Result:
    """Build ``algo``'s schedule, append its switch ranks to the placement, simulate it
    on the fabric the schedule runs on (:func:`fabric_topology`; noted in ``used``).
    ``kinds`` gets ``algo.name -> (reduces in-network, its bytes out of and into each
    node or None, its chain of reductions or None)``: what the algorithm's own bound
    needs (:func:`_bounds`)."""
    from ..algorithms.innetwork_planes import expand_result

    options = _unannotated(options)
    result = _simulate_blocks(algo, topology, size, nodes, options, alpha, router, progress,
                              faults, used, model, tolerance)
    if result is not None:
        if kinds is not None:       # a ring's blocks: its volume is the op's closed form
            kinds[algo.name] = (False, None, None)
        return result
    schedule, machine, placement, planes = _placed_build(
        algo, topology, size, nodes, options, router,
        by_class=not faults and model == "fluid", builds=builds)
    if used is not None:
        used[algo.name] = machine
    if kinds is not None:           # payload bytes (before the protocol's wire factor);
        # a few planes per class stand for all of them: then the closed form only (a
        # chain of reductions in one plane is one in the whole run)
        kinds[algo.name] = (bool(schedule.extra_nodes),
                            None if planes is not None else _traffic(machine, schedule,
                                                                     placement),
                            reduction_bound(machine, schedule, placement))
    # Hook: an algorithm may set its own per-message cost (nccl: the protocol's step latency),
    # bytes on the wire per payload byte (nccl: the protocol's lines) and record fields.
    schedule = schedule.scaled(schedule.meta.get("wire_factor", 1.0))
    result = simulate_model(machine, schedule, placement, router=router,
                            overhead=schedule.meta.get("overhead", alpha), progress=progress,
                            faults=faults, model=model, packet=packet, tolerance=tolerance)
    result = result if planes is None else expand_result(result, planes, nodes)
    result.meta.update({"record": schedule.meta["record"]} if "record" in schedule.meta else {})
    _note_overhead(result, schedule.meta.get("overhead", alpha))
    return result


def _traffic(machine, schedule, placement: np.ndarray):
    """(bytes out of, bytes into) every node of ``schedule``'s sends placed on ``placement``."""
    from ..algorithms.bounds import node_traffic
    from ..schedule import SEND

    sends = np.flatnonzero(schedule.kind == SEND)
    return node_traffic(machine, placement[schedule.src[sends]],
                        placement[schedule.dst[sends]], schedule.nbytes[sends])


def _used_links(machine, result: Result) -> np.ndarray | None:
    """Links that carried bytes in ``result`` (None if its links are not the machine's)."""
    carried = np.asarray(result.link_bytes, dtype=np.float64)
    return carried > 0 if carried.size == machine.num_links else None


def _bounds(op: str, machine, size: float, nodes: np.ndarray, result: Result, kind,
            *, alpha: float, gamma, root: int, router) -> tuple[Bound, Bound]:
    """(the algorithm's bound, the machine's bound) of a run of ``nodes.size`` ranks on
    ``nodes``: the machine's on the links these ranks can use (all of them when the ranks
    hold every endpoint; :func:`~netsim.algorithms.bounds.group_links`), the algorithm's
    on the links its run used (:func:`~netsim.algorithms.bounds.algorithm_bound`)."""
    from ..algorithms.bounds import algorithm_bound, group_links

    used = _used_links(machine, result)
    reach = group_links(machine, nodes, router=router, used=used)
    machine_bound = lower_bound(op, machine, size, nodes.size, nodes, alpha=alpha,
                                gamma=gamma, root=root, links=reach)
    if used is None or kind is None:
        return machine_bound, machine_bound
    in_network, traffic, chain = kind
    own = algorithm_bound(op, machine, size, nodes.size, nodes, used=used,
                          in_network=in_network, traffic=traffic, alpha=alpha, gamma=gamma,
                          root=root, machine=machine_bound, extra=[chain])
    return own, machine_bound


def _note_overhead(result: Result, overhead) -> None:
    """Keep the per-message cost the run used (an algorithm may set its own: nccl's step
    latency replaces alpha), for the bound printed beside it (:func:`run_collective`)."""
    result.meta["overhead_s"] = float(np.min(overhead)) if np.size(overhead) else 0.0


def _placed_build(algo, topology, size: float, nodes: np.ndarray, options, router, *,
                  by_class: bool, builds=None):
    """``algo``'s schedule as runs build it: (schedule, the machine it runs on (its
    fabric), the placement with its switch ranks appended, the plane map or None).

    Memory is checked before and after the build. With ``by_class`` (no fault and the
    fluid model, which treat alike planes alike), alike independent in-network planes are
    built a few per class when the run-time check (:func:`plane_map`) finds them alike,
    and the result is expanded (:func:`expand_result`; exact), else every plane.
    ``builds`` (a :class:`~netsim.run.scaled_builds.ScaledBuilds`) builds through the
    schedules kept from a sweep's other sizes."""
    from ..algorithms.innetwork_planes import plane_map

    _check_scale(algo.op, nodes.size, int(options.chunks or 1), topology,   # before building
                 all_pairs=getattr(algo, "all_pairs", False), name=algo.name)
    by_class = by_class and "planes" not in options.extra
    build = algo.build if builds is None or isinstance(algo, _Built) else \
        (lambda n, size, options: builds.build(algo, n, size, options))
    schedule = build(nodes.size, size, replace(
        options, extra={**options.extra, "planes": True}) if by_class else options)
    machine = fabric_topology(topology, schedule)
    planes = plane_map(machine, schedule, nodes, router) if by_class else None
    if by_class and planes is None and "planes" in schedule.meta:     # not alike: all of them
        schedule = build(nodes.size, size, options)
        machine = fabric_topology(topology, schedule)
    extra = schedule.extra_nodes
    placement = nodes if not extra else np.concatenate([nodes, np.asarray(extra, np.int64)])
    _check_built(f"{algo.op} {algo.name} on {nodes.size} ranks", schedule, machine,
                 placement, router)
    return schedule, machine, placement, planes


def _simulate_blocks(algo, topology, size: float, nodes: np.ndarray, options, alpha: float,
                     router, progress, faults, used: dict | None, model: str,
                     tolerance: float) -> Result | None:
    """The run of ``algo`` on one send per block (:mod:`netsim.engine.blocks`) when it has
    a block form here (a ring without timed reductions) and its blocks are symmetry
    classes; None otherwise (the caller builds the full schedule). Fluid model only, and
    no faults: a fault breaks the symmetry the blocks rely on."""
    from ..engine.blocks import BYTES_PER_BLOCK, simulate_blocks

    if getattr(algo, "blocks", None) is None or model != "fluid" or faults:
        return None
    # the block schedule itself: a few arrays of one entry per block (n sends)
    _check_scale(algo.op, nodes.size, int(options.chunks or 1), topology,
                 per_send=BYTES_PER_BLOCK / max(nodes.size, 1), name=algo.name)
    blocks = algo.blocks(nodes.size, size, options)
    if blocks is None or blocks.num_ranks != nodes.size:
        return None
    # (its per-op times stay per block until read: engine.result.PerBlock)
    machine = fabric_topology(topology, blocks)
    blocks = blocks.scaled(blocks.meta.get("wire_factor", 1.0))
    result = simulate_blocks(machine, blocks, nodes, router=router,
                             overhead=blocks.meta.get("overhead", alpha), progress=progress,
                             tolerance=tolerance)
    if result is None:
        return None
    result.placement = nodes
    if used is not None:
        used[algo.name] = machine
    _note_overhead(result, blocks.meta.get("overhead", alpha))
    return result


def fabric_topology(topology, schedule):
    """The machine as ``schedule`` sees it: with a calibration of ``fabric: auto``, the
    ring-fabric rates for schedules that say ``meta['fabric'] == 'ring'`` (tt_ring); and
    ``meta['links']`` parallel links per neighbour pair where it says so (tt_metal's
    ``num_links``)."""
    from ..topology.calibration import on_fabric

    machine = on_fabric(topology, schedule.meta.get("fabric"))
    if schedule.meta.get("links") is not None:
        from ..algorithms.tenstorrent import links_topology

        machine = links_topology(machine, int(schedule.meta["links"]))
    return machine


def _check_scale(op: str, n: int, chunks: int, topology, *,
                 per_send: float | None = None, all_pairs: bool = False,
                 name: str | None = None) -> None:
    """Refuse runs whose schedules would not fit in memory, before building them.

    The sends are a ring's (``chunks`` x n x (n-1), twice for an all-reduce). Every send
    crosses at least one link, and a ring laid on the machine's own ring crosses exactly
    one, so the estimate counts one link per send: what cannot fit even so is refused
    (an all-to-all's sends, and those of an algorithm whose every rank sends to every
    other, ``all_pairs``, cross the mean distance). A block run (``per_send``: its
    memory per block, spread over the block's sends) needs memory per ring step, not per
    send. :data:`MAX_SENDS` stays as a cap on typos (a billion chunks) when
    ``--max-memory`` allows almost anything; for a block run it counts ring steps.
    """
    from ..budget import require_memory, require_sends

    sends = _ring_sends(op, n, chunks)
    what = " ".join(filter(None, (op, name))) + f" on {n} ranks" + \
        (f" in {chunks} chunks" if chunks > 1 else "")
    advice = "fewer ranks or fewer chunks" if chunks > 1 else "fewer ranks"
    if per_send is not None:
        require_memory(sends * per_send, f"{what} ({sends:.3g} sends)", advice=advice)
    else:
        require_sends(sends, topology, what, hops=None if op == "alltoall" or all_pairs else 1.0,
                      advice=advice)
    # a block run simulates one send per block (a ring step: n sends), so the cap on typos
    # counts its steps
    count, unit = (sends, "sends") if per_send is None else \
        (sends // max(n, 1), "ring steps")
    if count > MAX_SENDS:
        raise InputError(f"{what} needs about {count:.3g} {unit} "
                         f"(more than the limit of {MAX_SENDS}): use fewer chunks or ranks")


def _ring_sends(op: str, n: int, chunks: int) -> int:
    """The sends of a ring of ``op`` on n ranks in ``chunks`` chunks: what
    :func:`_check_scale` counts."""
    if op in ("broadcast", "reduce"):
        return chunks * max(n - 1, 1)
    return chunks * n * max(n - 1, 1) * (2 if op == "allreduce" else 1)


def _unannotated(options):
    """``options`` without annotation unless asked for: what each send carries is for
    verify and export only, and costs a collective run its build time."""
    if "annotate" in options.extra:
        return options
    return replace(options, extra={**options.extra, "annotate": False})


def _check_built(what: str, schedule, topology, placement: np.ndarray, router) -> None:
    """After the build, before the engine: the memory of the schedule's own sends and of
    the links they cross (an algorithm may send more, or farther, than the ring that
    :func:`_check_scale` counted)."""
    from ..budget import require_sends

    require_sends(schedule.num_sends, topology, what,
                  hops=lambda: _mean_links(schedule, topology, placement, router),
                  advice="fewer ranks or fewer chunks")


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


def _check_alpha(alpha) -> float:
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


def _check_order(order) -> None:
    from ..algorithms.orders import ORDERS

    if isinstance(order, str) and order not in ORDERS:
        raise unknown_name("rank order", order, ORDERS)


def _attempt(algo, n: int, options, run: Callable[[Any], Result], strict: bool,
             refusals: list[Exception] | None = None):
    """``run(algo)``, or None if ``algo`` refuses these ranks/topology and not ``strict``
    (a refusal raised while building or running it is added to ``refusals``). A failure
    that leaves some of its sends no path (RoutingError: in-network reduction through a
    dead switch) refuses that candidate only: the others may still route around it."""
    if not algo.applies(n, options):
        if not strict:
            return None
        why = algo.why_not(n, options) if hasattr(algo, "why_not") else None
        needs = f": {why}" if why else (f" (it needs {requirement_text(algo)})"
                                         if requirement_text(algo) else "")
        raise InputError(f"{algo.op} algorithm {algo.name!r} does not apply to {n} ranks on "
                         f"{options.topology.name!r}{needs}")
    try:
        return run(algo)
    except (InputError, RoutingError) as err:
        if strict:
            raise
        if refusals is not None:
            refusals.append(err)
        return None


def _fastest(candidates, pick: bool, n: int, options, run: Callable[[Any], Result],
             what: str, where: str, bound: Callable[[Any], float] | None = None,
             pruned: dict[str, float] | None = None):
    """Run every candidate that applies (all must when one was named: ``not pick``);
    return (fastest, its result, every (algorithm, result) simulated). The fastest is the
    first of equal times in registry order: ties break deterministically.

    With ``bound`` (``bound(algo)``: a lower bound on the makespan ``run(algo)`` would
    give, s, already less what the engine's event merging can take off:
    :func:`~netsim.algorithms.lower_bound.engine_floor`) and ``pick``, candidates are
    simulated smallest bound first, and one is skipped when its bound already exceeds the
    best time simulated (or equals it, for a candidate later in registry order, which
    would lose the tie): it cannot be the fastest, so the pick and its time are those of
    simulating every candidate. Skipped ones go to ``pruned`` (name -> bound)."""
    refusals: list[tuple[int, Exception]] = []     # (registry index, why)
    if bound is None or not pick:
        texts: list[Exception] = []
        outcomes = [(algo, _attempt(algo, n, options, run, not pick, texts))
                    for algo in candidates]
        outcomes = [(algo, result) for algo, result in outcomes if result is not None]
        refusals = list(enumerate(texts))
    else:
        outcomes = _pruned_search(candidates, n, options, run, bound, refusals, pruned)
    if not outcomes:
        tried = ", ".join(a.name for a in candidates) or "none registered"
        # The first refusal says why when the run itself was refused (a size limit, say),
        # not only which algorithms did not apply.
        first = min(refusals, key=lambda r: r[0])[1] if refusals else None
        why = f": {first}" if first is not None else ""
        # cut off by a failure (no path), not refused for its input: the error (and exit
        # code) a named algorithm gives there
        error = RoutingError if isinstance(first, RoutingError) else InputError
        raise error(f"no {what} applies to {where} (tried {tried}){why}")
    best, result = min(outcomes, key=lambda pair: pair[1].makespan)
    return best, result, outcomes


def _pruned_search(candidates, n: int, options, run, bound, refusals: list,
                   pruned: dict[str, float] | None) -> list:
    """:func:`_fastest` with bounds: (algorithm, result) of the candidates simulated, in
    registry order."""
    bounds = []
    for index, algo in enumerate(candidates):
        if not algo.applies(n, options):
            continue
        try:
            bounds.append((float(bound(algo)), index, algo))
        except InputError as err:       # refused while building: as _attempt would
            refusals.append((index, err))
    done: list[tuple[int, Any, Result]] = []
    best: tuple[float, int] | None = None
    for low, index, algo in sorted(bounds, key=lambda b: (b[0], b[1])):
        if best is not None and (low > best[0] or (low >= best[0] and index > best[1])):
            if pruned is not None:
                pruned[algo.name] = low
            continue
        attempt: list[Exception] = []
        result = _attempt(algo, n, options, run, False, attempt)
        refusals.extend((index, err) for err in attempt)
        if result is None:
            continue
        done.append((index, algo, result))
        if best is None or (result.makespan, index) < best:
            best = (float(result.makespan), index)
    return [(algo, result) for _, algo, result in sorted(done, key=lambda d: d[0])]


#: Candidates' schedules up to this many ops (about 20 MB each) are kept from their bound
#: to their simulation (built once); larger ones are built again if simulated, so that
#: memory holds one of them at a time.
_KEEP_BUILT_OPS = 300_000


class _Built:
    """An algorithm whose schedule for this run is already built: ``build`` returns it."""

    def __init__(self, algo, schedule) -> None:
        self._algo, self._schedule = algo, schedule

    def __getattr__(self, name: str):
        return getattr(self._algo, name)

    def build(self, *args, **kwargs):
        return self._schedule


def _schedule_bound(algo, topo, size: float, nodes: np.ndarray, options, alpha: float,
                    router, builds=None):
    """(schedule, lower bound on its simulated makespan in s) of ``algo``, built and placed
    as :func:`_simulate` builds and places it for a fluid run without faults (alike
    in-network planes a few per class: the run simulates that schedule too)
    (:mod:`netsim.algorithms.lower_bound`: the schedule's bound less what the engine's
    event merging can take off)."""
    from ..algorithms.lower_bound import engine_floor, schedule_bound

    schedule, machine, placement, _ = _placed_build(algo, topo, size, nodes,
                                                    _unannotated(options), router,
                                                    by_class=True, builds=builds)
    scaled = schedule.scaled(schedule.meta.get("wire_factor", 1.0))
    low = schedule_bound(machine, scaled, placement, router=router,
                         overhead=scaled.meta.get("overhead", alpha))
    return schedule, engine_floor(low, scaled)


def run_collective(op: str, topology, algorithm, size, *, ranks: int | None = None,
                   placement: Sequence[int | str] | None = None, options=None,
                   alpha: float | None = None, router=None, progress=None,
                   faults: Sequence = (), axis: int | None = None,
                   nodes: Sequence[int | str] | str | None = None,
                   model: str = "fluid", packet=None,
                   tolerance: float = 0.0, prune: bool = True,
                   builds=None) -> CollectiveRun:
    """Simulate collective ``op`` of ``size`` bytes (or ``'64MiB'``) with ``algorithm``.

    ``topology`` is a Topology or a spec string; ``algorithm`` a registered name,
    ``'default'`` (what the machine's own library runs: the preset's ``library:`` block,
    :mod:`netsim.run.library`; ``'auto'`` where it names none; the record's ``library``
    says which library), ``'auto'`` (every algorithm that applies, fastest returned, all
    times in ``candidates``), or an algorithm object (or a list of them, searched like
    auto). ``ranks`` defaults to every
    endpoint, ``placement`` to the first ``ranks`` endpoints; ``options`` is an
    ``AlgoOptions`` (its topology and placement are filled in here); ``alpha`` is the
    per-message overhead at the sender (s). Without ``alpha`` (or ``options.gamma``) the
    topology's calibration gives them (:mod:`netsim.topology.calibration`; 0 and None without one).
    ``faults`` are links that fail or degrade during the run (engine
    :class:`~netsim.engine.faults.Fault` objects, or :class:`~netsim.run.faultspec.FaultSpec`
    resolved on this topology); the record then shows them and the number of re-routed
    flows. The lower bound stays the healthy machine's. ``model`` is ``'fluid'``,
    ``'packet'`` or ``'both'`` (:mod:`netsim.run.models`; auto then picks by fluid time and
    the record adds the packet time and the fluid model's error); ``packet`` the packet
    model's :class:`~netsim.packet.PacketOptions`; ``tolerance`` the fluid engine's
    approximate mode (relative window, default 0: exact; :func:`netsim.engine.simulate`).

    ``prune`` (auto, fluid model, exact, no faults): a candidate whose lower bound on this
    schedule's makespan (:mod:`netsim.algorithms.lower_bound`) is already above the best
    time simulated is not simulated; it stays in the record's candidates as
    ``name>=bound`` (``pruned``: name -> bound, s). The pick and its time are the same as
    with ``prune=False``, which simulates every candidate.

    Part of a machine: ``nodes`` (names or indices, ``'A,B,C'`` or ``'@FILE'``) runs it on
    those endpoints in that order (the placement); ``axis`` runs it on every line of the
    grid along axis ``axis`` at once (:func:`~netsim.run.collective_groups.run_groups`:
    per-group times, ``time_s`` the slowest).

    ``builds`` (:class:`~netsim.run.scaled_builds.ScaledBuilds`, which :func:`run_sweep`
    passes) reuses schedules built for other sizes of a sweep, scaled exactly.
    """
    from ..topology.calibration import calibrated_alpha, calibrated_gamma
    from ..topology import parse_topology
    from ..engine.tolerance import check_tolerance

    _check_op(op)
    check_model(model, packet)
    tolerance = check_tolerance(tolerance)      # before any build: nan is no window
    if algorithm == "synth" and model != "fluid":   # its search runs thousands of fluid runs
        raise InputError(f"--model {model} does not apply to --algo synth (it searches with "
                         f"the fluid model): use --model fluid")
    if algorithm == "synth":    # hook: synthesise, compare with the fixed ones, fall back
        from .synth import run_synth

        return run_synth(op, topology, size, ranks=ranks, placement=placement,
                         options=options, alpha=alpha, router=router, progress=progress,
                         faults=faults)
    topo = parse_topology(topology) if isinstance(topology, str) else topology
    resolved = resolve_default(op, topo, algorithm)
    if resolved.library is not None:    # the machine's own library: its options, under the user's
        base = options if options is not None else _default_options()
        options = replace(base, extra={**resolved.extra, **base.extra})
        run = run_collective(op, topo, resolved.algorithm, size, ranks=ranks,
                             placement=placement, options=options, alpha=alpha, router=router,
                             progress=progress, faults=faults, axis=axis, nodes=nodes,
                             model=model, packet=packet, tolerance=tolerance, prune=prune,
                             builds=builds)
        run.result.meta["record"] = {**run.result.meta.get("record", {}),
                                     "library": resolved.library}
        return run
    algorithm = resolved.algorithm
    if axis is not None or nodes is not None:
        from .collective_groups import axis_groups, parse_nodes, run_groups

        if (axis is not None) + (nodes is not None) + (placement is not None) > 1 \
                or (ranks is not None and axis is not None):
            raise InputError("give one of axis, nodes and placement (and no ranks with axis)")
        if axis is not None:
            return run_groups(op, topo, algorithm, size, axis_groups(topo, axis),
                              options=options, alpha=alpha, router=router,
                              progress=progress, faults=faults, tolerance=tolerance,
                              model=model, packet=packet)
        placement = parse_nodes(topo, nodes).tolist()
    size = parse_size(size, "collective size")
    if size < 0:
        raise InputError(f"collective size must be >= 0 bytes, got {size!r}")
    nodes = _rank_nodes(topo, ranks, placement)
    options = replace(options if options is not None else _default_options(),
                      topology=topo, placement=nodes)
    alpha = calibrated_alpha(topo) if alpha is None else alpha
    if options.gamma is None and calibrated_gamma(topo) is not None:
        options = replace(options, gamma=calibrated_gamma(topo))
    options.check(nodes.size)
    alpha = _check_alpha(alpha)
    _check_order(options.order)
    candidates, pick = resolve_algorithms(op, algorithm)
    faults = resolve_faults(faults, topo)

    used: dict[str, Any] = {}       # algorithm -> the machine it ran on (its fabric)
    if router is None:              # one router for every candidate: its caches stay warm
        from ..routing import default_router

        router = default_router(topo)
    built: dict[str, Any] = {}      # algorithm -> its schedule, built once for its bound
    kinds: dict[str, Any] = {}      # algorithm -> what its own bound needs (_simulate)

    def run(algo) -> Result:
        if algo.name in built:
            algo = _Built(algo, built.pop(algo.name))
        return _simulate(algo, topo, size, nodes, options, alpha, router, progress, faults,
                         used, model, packet, tolerance, builds, kinds=kinds)

    def bound_of(algo) -> float:
        if getattr(algo, "blocks", None) is not None and \
                _ring_sends(op, nodes.size, int(options.chunks or 1)) > _KEEP_BUILT_OPS:
            return 0.0      # runs on its blocks, never built in full: simulated, not bounded
        schedule, low = _schedule_bound(algo, topo, size, nodes, options, alpha, router,
                                        builds)
        if schedule.num_ops <= _KEEP_BUILT_OPS:
            built[algo.name] = schedule
        return low

    # Exact pruning needs exact times from the fluid engine on the healthy machine.
    exact = prune and model == "fluid" and not faults and not tolerance
    pruned: dict[str, float] = {}
    best, result, outcomes = _fastest(candidates, pick, nodes.size, options, run,
                                      f"{op} algorithm", f"{nodes.size} ranks on {topo.name!r}",
                                      bound=bound_of if exact else None, pruned=pruned)
    def bounds_at(cost: float) -> tuple[Bound, Bound]:
        return _bounds(op, used.get(best.name, topo), size, nodes, result,
                       kinds.get(best.name), alpha=cost, gamma=options.gamma,
                       root=options.root, router=router)

    bound, machine_bound = bounds_at(float(alpha))
    paid = float(result.meta.get("overhead_s", alpha))
    if paid < alpha and result.makespan < bound.seconds:
        # The algorithm set a smaller per-message cost of its own (nccl's step latency
        # replaces alpha; its base latency usually keeps it above alpha's bound): alpha's
        # bound is no bound on a run that did not pay it (alpha = 1 ms: 130 us against
        # 1 ms), that of the cost it paid is.
        bound, machine_bound = bounds_at(paid)
    made = _make_run(op, best.name, topo, nodes.size, size, result, bound,
                     {a.name: r.makespan for a, r in outcomes} if pick else None,
                     machine_bound=machine_bound)
    made.machine = used.get(best.name, topo)
    made.pruned = pruned or None
    if faults:
        made.faults, made.rerouted = fault_summary(faults), rerouted_flows(result)
    made.model = model_fields(result) or None
    if tolerance:                   # an approximate time says so in its record
        made.model = {**(made.model or {}), "tolerance": float(tolerance)}
    return made


def _make_run(op: str, name: str, topo, n: int, size: float, result: Result, bound: Bound,
              candidates: dict[str, float] | None, *,
              machine_bound: Bound | None = None) -> CollectiveRun:
    """The run's record: ``bound`` the algorithm's (efficiency = bound / time),
    ``machine_bound`` the machine's (machine_efficiency; the same bound when not given)."""
    time = float(result.makespan)
    machine_bound = bound if machine_bound is None else machine_bound
    check_above_bound(f"{op} {name} on {n} ranks of {topo.name!r}", time, machine_bound,
                      float(result.events) + float(result.num_flows))
    check_above_bound(f"{op} {name} on {n} ranks of {topo.name!r}", time, bound,
                      float(result.events) + float(result.num_flows))
    return CollectiveRun(
        op=op, algorithm=name, topology=topo.name, ranks=n, size_bytes=size, time_s=time,
        algbw_GBps=algbw_GBps(size, time), busbw_GBps=busbw_GBps(op, size, time, n),
        bound_s=bound.seconds, bound_name=bound.name, bound_detail=bound.detail,
        efficiency=bound.seconds / time if time > 0 else None,
        max_link_util=result.max_link_utilization, events=int(result.events),
        flows=int(result.num_flows), result=result, candidates=candidates,
        machine_bound_s=machine_bound.seconds, machine_bound_name=machine_bound.name,
        machine_bound_detail=machine_bound.detail,
        machine_efficiency=machine_bound.seconds / time if time > 0 else None)


def check_above_bound(what: str, time: float, bound: Bound, steps: float = 0.0) -> None:
    """Refuse to report a time below the lower bound printed beside it: that is a bug
    (an algorithm that does not perform the collective, or an engine that moves bytes
    faster than its links), never an answer. Rounding may take 1e-6 relative, or 2e-9 per
    event and flow (the engine's merging of close events,
    :func:`netsim.algorithms.lower_bound.engine_floor`)."""
    from ..algorithms.lower_bound import SLACK
    from ..errors import SimulationError

    floor = bound.seconds * (1.0 - max(SLACK, 2e-9 * steps))
    if not time >= floor:       # nan too
        raise SimulationError(f"internal error: {what} took {format_time(time)}, below its "
                              f"lower bound of {format_time(bound.seconds)} ({bound.name}): "
                              f"please report it")


# -- sweeps ----------------------------------------------------------------------------

def sweep_sizes(spec: str | float | Sequence) -> list[float]:
    """Sizes in bytes: ``'1KiB:8KiB'`` -> [1024, 2048, 4096, 8192] (doubling, stop included);
    ``'START:STOP:F'`` multiplies by F; ``'1KiB,1MiB'`` or a list is taken as given."""
    if not isinstance(spec, str):
        items = list(spec) if isinstance(spec, (list, tuple)) else [spec]
        return [parse_size(s, "size") for s in items]
    if "," in spec:
        return [parse_size(s.strip(), "size") for s in spec.split(",")]
    parts = spec.split(":")
    if len(parts) == 1:
        return [parse_size(spec, "size")]
    if len(parts) > 3:
        raise InputError(f"size sweep {spec!r}: expected START:STOP or START:STOP:FACTOR")
    start, stop = parse_size(parts[0], "sweep start"), parse_size(parts[1], "sweep stop")
    factor = float(parts[2]) if len(parts) == 3 and _number(parts[2]) else 2.0
    if len(parts) == 3 and not _number(parts[2]):
        raise InputError(f"size sweep {spec!r}: factor {parts[2]!r} is not a number")
    if not np.isfinite(factor):          # nan fails every comparison below; inf loops nowhere
        raise InputError(f"size sweep {spec!r}: factor {parts[2]!r} is not a finite number")
    if not (0 < start <= stop) or factor <= 1:
        raise InputError(f"size sweep {spec!r}: need 0 < START <= STOP and FACTOR > 1")
    count = int(np.floor(np.log(stop / start) / np.log(factor) + 1e-9)) + 1
    if count > _MAX_SWEEP_POINTS:
        raise InputError(f"size sweep {spec!r} has {count} points (at most "
                         f"{_MAX_SWEEP_POINTS})")
    return [start * factor ** i for i in range(count)]


def _number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def run_sweep(op: str, topology, algorithm, sizes, *,
              each: Callable[[CollectiveRun], None] | None = None,
              **kwargs) -> list[CollectiveRun]:
    """:func:`run_collective` for each size (a list or a ``sweep_sizes`` spec);
    ``each(run)`` is called after every size's run (a progress bar's tick).

    The sizes share one router (its per-topology caches stay warm) and the schedules of
    the algorithms that scale with the size (:mod:`netsim.run.scaled_builds`: built once
    per pipelining depth, exactly the same schedules)."""
    from ..topology import parse_topology

    topo = parse_topology(topology) if isinstance(topology, str) else topology
    if kwargs.get("router") is None:    # one router for every size: its caches stay warm
        from ..routing import default_router

        kwargs["router"] = default_router(topo)
    if kwargs.get("builds") is None:
        from .scaled_builds import ScaledBuilds

        kwargs["builds"] = ScaledBuilds()
    runs = []
    for size in sweep_sizes(sizes):
        runs.append(run_collective(op, topo, algorithm, size, **kwargs))
        if each is not None:
            each(runs[-1])
    return runs
