"""One algorithm built, placed on a machine's nodes and simulated, with its bounds.

:func:`simulate_algorithm` builds an algorithm's schedule for a resolved request's
nodes (:mod:`netsim.run.request`; a ring's blocks where they stand for it exactly; alike
in-network planes a few per class; a group run's groups side by side), runs it on the
fabric the schedule asks for (:func:`fabric_topology`) and returns the engine's result;
:func:`run_bounds` gives the algorithm's and the machine's lower bounds of that run,
:func:`built_bound` the bound of a built schedule before it is simulated.

>>> from netsim.topology import ring
>>> fabric_topology(ring(4), type("S", (), {"meta": {}})()).name
'ring-4'
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..algorithms.bounds import Bound, lower_bound, reduction_bound
from ..engine import Result
from ..errors import InputError
from .checks import check_built, check_scale, ring_sends
from .models import simulate_model, timelines_recorded

__all__ = ["simulate_algorithm", "algorithm_forms", "run_bounds", "built_bound",
           "fabric_topology", "node_bytes", "used_links", "unannotated", "group_label", "Built",
           "KEEP_BUILT_OPS"]


def simulate_algorithm(request, algo, size: float, *, progress=None, builds=None,
                       used: dict | None = None, kinds: dict | None = None,
                       spans: dict | None = None) -> Result:
    """Build ``algo``'s schedule for the resolved ``request`` (a
    :class:`~netsim.run.request.CollectiveRequest`) at ``size`` bytes, place it (switch
    ranks appended) and simulate it on the fabric it runs on (:func:`fabric_topology`;
    noted in ``used``). The fluid model runs through the engine's reduce-run-expand stage
    (:func:`netsim.engine.stage.simulate`, given the forms the algorithm has:
    :func:`algorithm_forms`), which picks what it runs; the packet model runs every op.
    ``kinds`` gets ``algo.name -> (reduces in-network, its bytes out of and into each node
    or None, its chain of reductions or None)``: what the algorithm's own bound needs
    (:func:`run_bounds`); ``spans`` (a group run) ``algo.name ->`` the end of every group's
    ops in the schedule."""
    from ..engine.stage import simulate

    forms = algorithm_forms(request, algo, size, builds=builds)
    if request.model == "fluid":
        staged = simulate(forms, router=request.router, progress=progress,
                          tolerance=request.tolerance, faults=request.faults,
                          record_timeline=timelines_recorded(), config=request.engine)
        result, form, placed = staged.result, staged.form, staged.placed
    else:
        placed, form = forms.full(), "full"
        result = simulate_model(placed.topology, placed.schedule.scaled(placed.wire_factor),
                                placed.placement, router=request.router,
                                overhead=placed.overhead, progress=progress,
                                faults=request.faults, model=request.model,
                                packet=request.packet, tolerance=request.tolerance,
                                config=request.engine)
    machine, schedule = placed.topology, placed.schedule
    if used is not None:
        used[algo.name] = machine
    if kinds is not None:           # payload bytes (before the protocol's wire factor)
        if form == "blocks":        # a ring's blocks: its volume is the op's closed form
            kinds[algo.name] = (False, None, None)
        else:                       # a few planes per class stand for all of them: then
            # the closed form only (a chain of reductions in one plane is one in the run)
            kinds[algo.name] = (bool(schedule.extra_nodes),
                                None if form == "planes" else node_bytes(machine, schedule,
                                                                         placed.placement),
                                reduction_bound(machine, schedule, placed.placement))
    if spans is not None and "group_ops" in schedule.meta:
        spans[algo.name] = schedule.meta["group_ops"]
    if form != "blocks" and "record" in schedule.meta:
        result.meta["record"] = schedule.meta["record"]
    note_overhead(result, placed.overhead)
    return result


def algorithm_forms(request, algo, size: float, *, builds=None):
    """The :class:`~netsim.engine.stage.Forms` of ``algo`` in a run of ``request`` at
    ``size`` bytes: every op; a ring's blocks where it has a block form (one collective,
    not groups); a few alike in-network planes per class where it builds them. Each is
    built only if the engine asks for it, on the fabric it runs on, its memory checked
    before the build (counting the chunks the algorithm resolves to at this size) and
    after it. ``builds`` (a :class:`~netsim.run.scaled_builds.ScaledBuilds`) builds through
    the schedules kept from a sweep's other sizes. Hooks: an algorithm may set its own
    per-message cost (``meta["overhead"]``; nccl: the protocol's step latency) and bytes
    on the wire per payload byte (``meta["wire_factor"]``; nccl: the protocol's lines)."""
    from ..engine.stage import Forms

    options = unannotated(request.options)
    if request.faults and getattr(algo.build, "plans_at_start", False):
        options = _as_found(options, request.topology, request.faults)
    chunks = _chunks(algo, size, options)
    one = request.groups is None
    return Forms(full=lambda: _placed(request, algo, size, options, chunks, builds=builds),
                 blocks=(lambda: _blocks(request, algo, size, options, chunks))
                 if one and getattr(algo, "blocks", None) is not None else None,
                 planes=(lambda: _placed(request, algo, size, options, chunks, builds=builds,
                                         planes=True))
                 if one and "planes" not in options.extra else None,
                 sends=ring_sends(algo.op, request.ranks, chunks))


def _ready(machine, schedule, placement, alpha: float):
    from ..engine.stage import Placed

    return Placed(machine, schedule, placement, schedule.meta.get("overhead", alpha),
                  float(schedule.meta.get("wire_factor", 1.0)))


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


def run_bounds(request, machine, size: float, result: Result, kind, *,
               alpha: float) -> tuple[Bound, Bound]:
    """(the algorithm's bound, the machine's bound) of ``result``, a run of ``request``
    at ``size`` bytes on ``machine`` (its fabric) with per-message cost ``alpha`` (s): the
    machine's on the links the ranks can use (all of them when the ranks hold every
    endpoint; :func:`~netsim.algorithms.bounds.group_links`), the algorithm's on the links
    its run used (:func:`~netsim.algorithms.bounds.algorithm_bound`). A group run's time
    is its slowest group's, so its bounds are the largest of the groups' own."""
    from ..algorithms.bounds import algorithm_bound, group_links

    op, n, options, router = request.op, request.ranks, request.options, request.router
    groups = request.groups if request.groups is not None else (request.nodes,)
    used = used_links(machine, result)
    machine_bound = max((lower_bound(op, machine, size, n, g, alpha=alpha,
                                     gamma=options.gamma, root=options.root,
                                     links=group_links(machine, g, router=router, used=used))
                         for g in groups), key=lambda b: b.seconds)
    if used is None or kind is None:
        return machine_bound, machine_bound
    in_network, traffic, chain = kind
    own = max((algorithm_bound(op, machine, size, n, g, used=used, in_network=in_network,
                               traffic=traffic, alpha=alpha, gamma=options.gamma,
                               root=options.root, machine=machine_bound, extra=[chain])
               for g in groups), key=lambda b: b.seconds)
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


def _placed(request, algo, size: float, options, chunks: int, *, builds=None,
            planes: bool = False):
    """``algo``'s schedule as runs of ``request`` build it, ready to run
    (:class:`~netsim.engine.stage.Placed`); with ``planes``, asked to build a few alike
    in-network planes per class (an algorithm without them builds every op). A group run
    builds the algorithm on every group and runs them at once (:func:`_group_build`)."""
    topology, nodes, router = request.topology, request.nodes, request.router
    budget = request.memory_budget
    check_scale(algo.op, request.ranks, chunks, topology,  # before building
                all_pairs=getattr(algo, "all_pairs", False), name=algo.name, budget=budget)
    if request.groups is not None:
        schedule, placement = _group_build(request, algo, size, options)
        machine = fabric_topology(topology, schedule)
        check_built(f"{algo.op} {algo.name} on {request.where}", schedule, machine,
                    placement, router, budget=budget)
        return _ready(machine, schedule, placement, request.alpha)
    build = algo.build if builds is None or isinstance(algo, Built) else \
        (lambda n, size, options: builds.build(algo, n, size, options))
    schedule = build(nodes.size, size, replace(
        options, extra={**options.extra, "planes": True}) if planes else options)
    machine = fabric_topology(topology, schedule)
    extra = schedule.extra_nodes
    placement = nodes if not extra else np.concatenate([nodes, np.asarray(extra, np.int64)])
    check_built(f"{algo.op} {algo.name} on {nodes.size} ranks", schedule, machine,
                placement, router, budget=budget)
    return _ready(machine, schedule, placement, request.alpha)


def _blocks(request, algo, size: float, options, chunks: int):
    """``algo``'s block schedule (:class:`~netsim.engine.stage.Placed`), or None where it
    has none for these ranks; its memory is that of one entry per block (n sends)."""
    from ..engine.blocks import BYTES_PER_BLOCK

    nodes = request.nodes
    check_scale(algo.op, nodes.size, chunks, request.topology,
                per_send=BYTES_PER_BLOCK / max(nodes.size, 1), name=algo.name,
                budget=request.memory_budget)
    blocks = algo.blocks(nodes.size, size, options)
    if blocks is None or blocks.num_ranks != nodes.size:
        return None
    # (its per-op times stay per block until read: engine.result.PerBlock)
    return _ready(fabric_topology(request.topology, blocks), blocks, nodes, request.alpha)


def _group_build(request, algo, size: float, options):
    """(schedule, placement) of ``algo`` on every group of ``request`` at once: group g's
    ranks are g n .. (g+1) n - 1, the switch ranks of every group follow them all; the
    schedule's meta is the first group's, with ``group_ops`` the end of each group's ops
    (:func:`~netsim.schedule.concurrent` stacks them in order)."""
    from ..schedule import concurrent

    groups, n, topology = request.groups, request.ranks, request.topology
    parts, extra_nodes, next_rank = [], [], len(groups) * n
    for g, group in enumerate(groups):
        group_options = replace(options, placement=group)
        if not algo.applies(n, group_options):
            raise InputError(f"{request.op} algorithm {algo.name!r} does not apply to group "
                             f"{group_label(topology, group)}")
        part = algo.build(n, size, group_options)
        extra = list(part.extra_nodes)
        mapping = np.concatenate([np.arange(g * n, (g + 1) * n),
                                  np.arange(next_rank, next_rank + len(extra))])
        parts.append(part.relabel(mapping, next_rank + len(extra)))
        extra_nodes += extra
        next_rank += len(extra)
    schedule = concurrent(*parts)
    meta = {**parts[0].meta, "group_ops": np.cumsum([p.num_ops for p in parts]).tolist()}
    placement = np.concatenate([request.nodes, np.asarray(extra_nodes, dtype=np.int64)])
    return replace(schedule, meta=meta), placement


def group_label(topology, nodes: np.ndarray) -> str:
    """``'0_1..7_1'``: a group by its first and last node."""
    names = topology.node_names
    return f"{names[nodes[0]]}..{names[nodes[-1]]}" if nodes.size > 1 else names[nodes[0]]


def _chunks(algo, size: float, options) -> int:
    """The pipelining depth ``algo`` will build with: the caller's, else the algorithm's
    default for this size (:meth:`~netsim.algorithms.registry.Algorithm.resolve`), so that
    the memory estimate counts the chunks the build will make."""
    resolve = getattr(algo, "resolve", None)
    chunks = (resolve(size, options) if resolve is not None else options).chunks
    return int(chunks or 1)


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


def built_bound(request, algo, size: float, *, builds=None):
    """(schedule, lower bound on its simulated makespan in s) of ``algo``, built and placed
    as a fluid run of ``request`` without faults simulates it when its blocks do not run
    (:func:`netsim.engine.stage.representative`: alike in-network planes a few per class)
    (:mod:`netsim.algorithms.lower_bound`: the schedule's bound less what the engine's
    event merging can take off)."""
    from ..algorithms.lower_bound import engine_floor, schedule_bound
    from ..engine.stage import representative

    placed, _ = representative(algorithm_forms(request, algo, size, builds=builds),
                               router=request.router)
    scaled = placed.schedule.scaled(placed.wire_factor)
    low = schedule_bound(placed.topology, scaled, placed.placement, router=request.router,
                         overhead=placed.overhead)
    return placed.schedule, engine_floor(low, scaled)
