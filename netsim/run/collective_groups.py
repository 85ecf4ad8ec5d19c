"""Collectives on part of a machine: every line along a grid axis at once, or named nodes.

tt-metal runs a CCL along one axis of a mesh (``cluster_axis``): every line of that axis
runs the collective at the same time, each line its own group, sharing links where they
cross. :func:`axis_groups` gives those lines (node indices in coordinate order),
:func:`run_groups` simulates one algorithm on all of them in one run of the engine and
reports every group's time (from 0 to its last op) and the slowest; :func:`parse_nodes`
reads ``--nodes A,B,...`` or ``@FILE`` (one collective on those endpoints, in that order).

>>> from netsim.topology import mesh
>>> [g.tolist() for g in axis_groups(mesh((2, 3)), 0)]      # the three columns
[[0, 3], [1, 4], [2, 5]]
>>> run = run_groups("allgather", mesh((2, 3), bandwidth=1e9), "ring", 2e6,
...                  axis_groups(mesh((2, 3), bandwidth=1e9), 1), alpha=0.0)
>>> run.groups, [round(t * 1e3, 6) for t in run.group_times]    # (n-1)/n S / B each
(['0_0..0_2', '1_0..1_2'], [1.333333, 1.333333])
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import numpy as np

from ..algorithms.bounds import algorithm_bound, group_links, lower_bound, reduction_bound
from ..errors import InputError
from ..schedule import concurrent
from ..units import parse_size
from .checks import check_op, check_order, check_scale, machine_costs
from .models import model_fields, simulate_model
from .placed import fabric_topology, node_bytes, used_links
from .record import make_run
from .search import default_options, fastest, resolve_algorithms

__all__ = ["axis_groups", "parse_nodes", "run_groups"]


def axis_groups(topology, axis: int) -> list[np.ndarray]:
    """The lines of a mesh/torus/ring along grid axis ``axis``: node indices, one array
    per line, each in coordinate order (lines ordered by their other coordinates)."""
    dims = topology.grid_dims
    if dims is None:
        raise InputError(f"--axis needs a mesh, torus or ring machine; {topology.name!r} is "
                         f"a {topology.family!r} (use --nodes to name the endpoints)")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
            or not 0 <= axis < len(dims):
        raise InputError(f"--axis must be a grid axis 0..{len(dims) - 1} of "
                         f"{topology.name!r} ({'x'.join(map(str, dims))}), got {axis!r}")
    cells = np.asarray(topology.endpoints, dtype=np.int64).reshape(dims)
    lines = np.moveaxis(cells, int(axis), -1).reshape(-1, dims[int(axis)])
    return [line.copy() for line in lines]


def parse_nodes(topology, nodes: Sequence[int | str] | str) -> np.ndarray:
    """Endpoint indices of ``nodes``: names or indices, ``'A,B,C'`` or ``'@FILE'`` (names
    separated by commas, spaces or lines; ``#`` starts a comment). Each endpoint once."""
    where = "--nodes"
    if isinstance(nodes, str):
        text = nodes
        if text.startswith("@"):
            from .._inputs.yamlio import read_text

            where = text[1:]
            # the input kit's reader: bounded (`@/dev/zero` is refused, not read forever)
            text = read_text(where, "the --nodes list")
            text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
        items: list[Any] = text.replace(",", " ").split()
    else:
        items = list(nodes)
    if not items:
        raise InputError(f"{where}: no nodes given")
    endpoints = set(np.asarray(topology.endpoints).tolist())
    out = []
    for item in items:
        index = _node_index(topology, item, where)
        if index not in endpoints:
            raise InputError(f"{where}: {item!r} is a switch of {topology.name!r}, not an "
                             f"endpoint")
        out.append(index)
    if len(set(out)) != len(out):
        twice = next(topology.node_names[i] for i in out if out.count(i) > 1)
        raise InputError(f"{where}: node {twice!r} is named twice")
    return np.asarray(out, dtype=np.int64)


def _node_index(topology, item, where: str) -> int:
    from ..errors import did_you_mean

    if isinstance(item, (int, np.integer)) and not isinstance(item, bool):
        if not 0 <= int(item) < topology.num_nodes:
            raise InputError(f"{where}: no node number {item} in {topology.name!r}")
        return int(item)
    name = str(item)
    if name in topology.node_index:
        return int(topology.node_index[name])
    raise InputError(f"{where}: {topology.name!r} has no node {name!r}"
                     f"{did_you_mean(name, topology.node_names)}")


def _label(topology, nodes: np.ndarray) -> str:
    names = topology.node_names
    return f"{names[nodes[0]]}..{names[nodes[-1]]}" if nodes.size > 1 else names[nodes[0]]


def run_groups(op: str, topology, algorithm, size, groups: Sequence[Sequence[int]], *,
               options=None, alpha: float | None = None, router=None, progress=None,
               faults: Sequence = (), tolerance: float = 0.0, model: str = "fluid",
               packet=None):
    """Run collective ``op`` on every group of ``groups`` (node indices, in rank order) at
    the same time, with one algorithm (``'auto'``: the one whose slowest group is fastest).

    Returns a :class:`~netsim.run.collective.CollectiveRun` for one group's collective
    (``ranks`` = group size, busbw per group) whose ``time_s`` is the slowest group's,
    with ``groups`` (labels) and ``group_times`` (s). The bounds are the largest of the
    groups' own: the machine's on the links each group can use
    (:func:`~netsim.algorithms.bounds.group_links`), the algorithm's on those its run used
    (:func:`~netsim.algorithms.bounds.algorithm_bound`). Calibrated alpha and gamma apply
    as in ``run_collective``, and so do ``model`` and ``packet`` (:mod:`netsim.run.models`;
    with ``'both'`` the group times are the fluid model's).
    """
    from ..topology import parse_topology
    from .faultspec import fault_summary, rerouted_flows, resolve_faults

    check_op(op)
    topo = parse_topology(topology) if isinstance(topology, str) else topology
    size = parse_size(size, "collective size")
    if size < 0:
        raise InputError(f"collective size must be >= 0 bytes, got {size!r}")
    groups = [np.asarray(g, dtype=np.int64) for g in groups]
    if not groups or len({g.size for g in groups}) != 1:
        raise InputError("groups must be one or more groups of the same size")
    everyone = np.concatenate(groups)
    if np.unique(everyone).size != everyone.size:
        raise InputError("groups must not share a node")
    n = int(groups[0].size)
    options = replace(options if options is not None else default_options(), topology=topo)
    alpha, options = machine_costs(topo, alpha, options)
    options.check(n)
    check_order(options.order)
    check_scale(op, n, int(options.chunks or 1), topo)
    candidates, pick = resolve_algorithms(op, algorithm)
    faults = resolve_faults(faults, topo)
    per_group = [replace(options, placement=g) for g in groups]
    runs: dict[str, tuple[Any, list[float], Any]] = {}

    def run(algo):
        parts, extra_nodes, next_rank = [], [], len(groups) * n
        for g, group_options in enumerate(per_group):
            if not algo.applies(n, group_options):
                raise InputError(f"{op} algorithm {algo.name!r} does not apply to group "
                                 f"{_label(topo, groups[g])}")
            sched = algo.build(n, size, group_options)
            extra = list(sched.extra_nodes)
            mapping = np.concatenate([np.arange(g * n, (g + 1) * n),
                                      np.arange(next_rank, next_rank + len(extra))])
            parts.append(sched.relabel(mapping, next_rank + len(extra)))
            extra_nodes += extra
            next_rank += len(extra)
        schedule = concurrent(*parts)
        machine = fabric_topology(topo, parts[0])
        placement = np.concatenate([everyone, np.asarray(extra_nodes, dtype=np.int64)])
        result = simulate_model(machine, schedule, placement, router=router, overhead=alpha,
                                tolerance=tolerance, progress=progress, faults=faults,
                                model=model, packet=packet)
        if "record" in parts[0].meta:     # what the algorithm chose (tt_metal: ring or line)
            result.meta["record"] = dict(parts[0].meta["record"])
        # concurrent() stacks the parts' ops in order: group g owns one contiguous range
        ends = np.cumsum([p.num_ops for p in parts])
        times = [float(result.op_finish[start:end].max()) if end > start else 0.0
                 for start, end in zip(np.concatenate([[0], ends[:-1]]), ends)]
        runs[algo.name] = (result, times, machine,
                           (bool(extra_nodes), node_bytes(machine, schedule, placement),
                            reduction_bound(machine, schedule, placement)))
        return result

    best, result, outcomes = fastest(candidates, pick, n, per_group[0], run,
                                     f"{op} algorithm",
                                     f"{len(groups)} groups of {n} ranks on {topo.name!r}")
    _, times, machine, (in_network, traffic, chain) = runs[best.name]
    # Each group is bounded on the links it can use (its routes, and whatever the run
    # used), not on the whole machine; the time is the slowest group's, so the largest of
    # the groups' bounds holds. The algorithm's bound adds what its own run needed.
    used = used_links(machine, result)
    reach = [group_links(machine, g, router=router, used=used) for g in groups]
    machine_bound = max((lower_bound(op, machine, size, n, g, alpha=float(alpha),
                                     gamma=options.gamma, root=options.root, links=links)
                         for g, links in zip(groups, reach)), key=lambda b: b.seconds)
    bound = machine_bound if used is None else max(
        (algorithm_bound(op, machine, size, n, g, used=used, in_network=in_network,
                         traffic=traffic, alpha=float(alpha), gamma=options.gamma,
                         root=options.root, machine=machine_bound, extra=[chain])
         for g in groups),
        key=lambda b: b.seconds)
    made = make_run(op, best.name, topo, n, size, result, bound,
                    {a.name: r.makespan for a, r in outcomes} if pick else None,
                    machine_bound=machine_bound)
    made.groups = [_label(topo, g) for g in groups]
    made.group_times = times
    made.machine = machine
    if faults:
        made.faults, made.rerouted = fault_summary(faults), rerouted_flows(result)
    made.model = model_fields(result) or None
    return made
