"""One algorithm built, placed on a machine's nodes and simulated, with its bounds.

:func:`simulate_algorithm` builds an algorithm's schedule for the ranks' nodes (a ring's
blocks where they stand for it exactly; alike in-network planes a few per class), runs
it on the fabric the schedule asks for (:func:`fabric_topology`) and returns the engine's
result; :func:`run_bounds` gives the algorithm's and the machine's lower bounds of that
run, :func:`built_bound` the bound of a built schedule before it is simulated.

>>> from netsim.topology import ring
>>> fabric_topology(ring(4), type("S", (), {"meta": {}})()).name
'ring-4'
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algorithms.bounds import Bound, lower_bound, reduction_bound
from ..engine import Result
from .checks import check_built, check_scale, ring_sends
from .models import simulate_model, timelines_recorded

__all__ = ["simulate_algorithm", "run_bounds", "built_bound", "fabric_topology",
           "node_bytes", "used_links", "unannotated", "Built", "KEEP_BUILT_OPS"]


def simulate_algorithm(algo, topology, size: float, nodes: np.ndarray, options, alpha: float,
                       router, progress, faults=(), used: dict | None = None,
                       model: str = "fluid", packet=None, tolerance: float = 0.0, builds=None,
                       *, kinds: dict | None = None) -> Result:
    """Build ``algo``'s schedule, append its switch ranks to the placement, simulate it
    on the fabric the schedule runs on (:func:`fabric_topology`; noted in ``used``).
    ``kinds`` gets ``algo.name -> (reduces in-network, its bytes out of and into each
    node or None, its chain of reductions or None)``: what the algorithm's own bound
    needs (:func:`run_bounds`)."""
    from ..algorithms.innetwork_planes import expand_result

    options = unannotated(options)
    if faults and getattr(algo.build, "plans_at_start", False):
        options = _as_found(options, topology, faults)
    result = simulate_blocks_of(algo, topology, size, nodes, options, alpha, router, progress,
                                faults, used, model, tolerance)
    if result is not None:
        if kinds is not None:       # a ring's blocks: its volume is the op's closed form
            kinds[algo.name] = (False, None, None)
        return result
    schedule, machine, placement, planes = placed_build(
        algo, topology, size, nodes, options, router,
        by_class=not faults and model == "fluid" and not timelines_recorded(),
        builds=builds)
    if used is not None:
        used[algo.name] = machine
    if kinds is not None:           # payload bytes (before the protocol's wire factor);
        # a few planes per class stand for all of them: then the closed form only (a
        # chain of reductions in one plane is one in the whole run)
        kinds[algo.name] = (bool(schedule.extra_nodes),
                            None if planes is not None else node_bytes(machine, schedule,
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
    note_overhead(result, schedule.meta.get("overhead", alpha))
    return result


def node_bytes(machine, schedule, placement: np.ndarray):
    """(bytes out of, bytes into) every node of ``schedule``'s sends placed on ``placement``."""
    from ..algorithms.bounds import node_traffic
    from ..schedule import SEND

    sends = np.flatnonzero(schedule.kind == SEND)
    return node_traffic(machine, placement[schedule.src[sends]],
                        placement[schedule.dst[sends]], schedule.nbytes[sends])


def used_links(machine, result: Result) -> np.ndarray | None:
    """Links that carried bytes in ``result`` (None if its links are not the machine's)."""
    carried = np.asarray(result.link_bytes, dtype=np.float64)
    return carried > 0 if carried.size == machine.num_links else None


def run_bounds(op: str, machine, size: float, nodes: np.ndarray, result: Result, kind,
               *, alpha: float, gamma, root: int, router) -> tuple[Bound, Bound]:
    """(the algorithm's bound, the machine's bound) of a run of ``nodes.size`` ranks on
    ``nodes``: the machine's on the links these ranks can use (all of them when the ranks
    hold every endpoint; :func:`~netsim.algorithms.bounds.group_links`), the algorithm's
    on the links its run used (:func:`~netsim.algorithms.bounds.algorithm_bound`)."""
    from ..algorithms.bounds import algorithm_bound, group_links

    used = used_links(machine, result)
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


def note_overhead(result: Result, overhead) -> None:
    """Keep the per-message cost the run used (an algorithm may set its own: nccl's step
    latency replaces alpha), for the bound printed beside it (:func:`run_collective`)."""
    result.meta["overhead_s"] = float(np.min(overhead)) if np.size(overhead) else 0.0


def _as_found(options, topology, faults):
    """``options`` whose topology lacks the links failed from time 0: what an algorithm that
    plans at start (nccl: NCCL's init reads the links there are) builds on."""
    from ..routing.reroute import surviving_topology

    failed = np.zeros(topology.num_links, dtype=bool)
    for fault in faults:
        if fault.is_failure and fault.time <= 0.0:
            failed[list(fault.links)] = True
    if not failed.any():
        return options
    return replace(options, topology=surviving_topology(topology, failed)[0])


def placed_build(algo, topology, size: float, nodes: np.ndarray, options, router, *,
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

    check_scale(algo.op, nodes.size, _chunks(algo, size, options), topology,  # before building
                all_pairs=getattr(algo, "all_pairs", False), name=algo.name)
    by_class = by_class and "planes" not in options.extra
    build = algo.build if builds is None or isinstance(algo, Built) else \
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
    check_built(f"{algo.op} {algo.name} on {nodes.size} ranks", schedule, machine,
                placement, router)
    return schedule, machine, placement, planes


def _chunks(algo, size: float, options) -> int:
    """The pipelining depth ``algo`` will build with: the caller's, else the algorithm's
    default for this size (:meth:`~netsim.algorithms.registry.Algorithm.resolve`), so that
    the memory estimate counts the chunks the build will make."""
    resolve = getattr(algo, "resolve", None)
    chunks = (resolve(size, options) if resolve is not None else options).chunks
    return int(chunks or 1)


def simulate_blocks_of(algo, topology, size: float, nodes: np.ndarray, options, alpha: float,
                       router, progress, faults, used: dict | None, model: str,
                       tolerance: float) -> Result | None:
    """The run of ``algo`` on one send per block (:mod:`netsim.engine.blocks`) when it has
    a block form here (a ring without timed reductions) and its blocks are symmetry
    classes; None otherwise (the caller builds the full schedule). Fluid model only, and
    no faults: a fault breaks the symmetry the blocks rely on."""
    from ..engine.blocks import BYTES_PER_BLOCK, simulate_blocks

    if getattr(algo, "blocks", None) is None or model != "fluid" or faults:
        return None
    if timelines_recorded() and ring_sends(algo.op, nodes.size, _chunks(algo, size, options)) \
            <= TIMELINE_SENDS:              # a timeline needs every link's flows
        return None
    # the block schedule itself: a few arrays of one entry per block (n sends)
    check_scale(algo.op, nodes.size, _chunks(algo, size, options), topology,
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
    note_overhead(result, blocks.meta.get("overhead", alpha))
    return result


#: Inside recording_timelines(), a ring of up to this many sends is simulated send by send
#: (its timeline covers every link); a larger one still runs on its blocks and keeps none.
TIMELINE_SENDS = 50_000


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


def unannotated(options):
    """``options`` without annotation unless asked for: what each send carries is for
    verify and export only, and costs a collective run its build time."""
    if "annotate" in options.extra:
        return options
    return replace(options, extra={**options.extra, "annotate": False})


#: Candidates' schedules up to this many ops (about 20 MB each) are kept from their bound
#: to their simulation (built once); larger ones are built again if simulated, so that
#: memory holds one of them at a time.
KEEP_BUILT_OPS = 300_000


class Built:
    """An algorithm whose schedule for this run is already built: ``build`` returns it."""

    def __init__(self, algo, schedule) -> None:
        self._algo, self._schedule = algo, schedule

    def __getattr__(self, name: str):
        return getattr(self._algo, name)

    def build(self, *args, **kwargs):
        return self._schedule


def built_bound(algo, topo, size: float, nodes: np.ndarray, options, alpha: float,
                router, builds=None):
    """(schedule, lower bound on its simulated makespan in s) of ``algo``, built and placed
    as :func:`simulate_algorithm` builds and places it for a fluid run without faults (alike
    in-network planes a few per class: the run simulates that schedule too)
    (:mod:`netsim.algorithms.lower_bound`: the schedule's bound less what the engine's
    event merging can take off)."""
    from ..algorithms.lower_bound import engine_floor, schedule_bound

    schedule, machine, placement, _ = placed_build(algo, topo, size, nodes,
                                                   unannotated(options), router,
                                                   by_class=True, builds=builds)
    scaled = schedule.scaled(schedule.meta.get("wire_factor", 1.0))
    low = schedule_bound(machine, scaled, placement, router=router,
                         overhead=scaled.meta.get("overhead", alpha))
    return schedule, engine_floor(low, scaled)
