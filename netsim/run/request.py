"""A collective run's request, resolved once: the first step of the run pipeline.

:func:`resolve_request` takes what a caller asks (an op, sizes, a machine or its spec, an
algorithm or ``'default'``, ranks or a placement or groups, options, alpha, the model,
faults, the engine's configuration) and returns a :class:`CollectiveRequest` in which
everything the later steps need is settled and checked: the machine parsed, the library's
default algorithm and options applied, the candidates found, every rank's node, the
machine's calibrated alpha and gamma (:func:`machine_costs`, called from here only), the
faults placed on the machine, one router for every candidate and size. The steps after
it (build, place, simulate, bound, record: :mod:`.placed`, :mod:`.machine`) take the
resolved request and named parameters, and never default a cost again.

>>> request = resolve_request("allreduce", "galaxy-wh", "ring", ["1MiB", "4MiB"])
>>> request.sizes, request.ranks, request.alpha > 0, request.options.gamma is not None
((1048576.0, 4194304.0), 32, True, True)
>>> [a.name for a in resolve_request("allreduce", "dgx-h100", "default", 1e6).candidates]
['nccl']
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Sequence

import numpy as np

from ..errors import InputError

__all__ = ["CollectiveRequest", "resolve_request", "machine_costs", "check_size", "axis_groups",
           "parse_nodes"]


@dataclass(frozen=True, kw_only=True, eq=False)
class CollectiveRequest:
    """One collective request after :func:`resolve_request`: every value the pipeline
    reads, checked, with the machine's calibrated defaults applied.

    ``sizes`` in bytes; ``topology`` the parsed machine; ``nodes`` every rank's node in
    rank order (a group run: every group's nodes, group after group); ``groups`` the
    groups of a group run (``--axis``: each line's nodes) or None; ``candidates`` the
    algorithm objects to run and ``pick`` whether the fastest is picked (``auto``, a
    list); ``options`` the algorithms' :class:`~netsim.algorithms.options.AlgoOptions`
    with the topology, the placement (a group run: the first group's) and the calibrated
    ``gamma`` (s/B) filled in; ``alpha`` the per-message overhead at the sender (s);
    ``model``, ``packet`` the network model (:mod:`netsim.run.models`); ``faults`` engine
    faults on this topology; ``tolerance`` the fluid engine's approximate window; ``router``
    one router for every candidate and size; ``engine`` the engine's configuration
    (:class:`~netsim.engine.config.EngineConfig`; None: its defaults); ``prune`` whether
    candidates may be skipped by their lower bound; ``library`` the library whose default
    this is (None unless ``'default'`` named one).
    """

    op: str
    sizes: tuple[float, ...]
    topology: Any
    nodes: np.ndarray
    groups: tuple[np.ndarray, ...] | None = None
    candidates: tuple = ()
    pick: bool = False
    options: Any = None
    alpha: float = 0.0
    model: str = "fluid"
    packet: Any = None
    faults: tuple = ()
    tolerance: float = 0.0
    router: Any = None
    engine: Any = None
    prune: bool = True
    library: str | None = None

    @property
    def ranks(self) -> int:
        """Ranks of one collective (a group run: of one group)."""
        return int(self.groups[0].size if self.groups else self.nodes.size)

    @property
    def memory_budget(self) -> int | None:
        """Bytes the run may use: its engine configuration's budget (None: the process's,
        :func:`netsim.budget.memory_budget`)."""
        return getattr(self.engine, "memory_budget", None)

    @property
    def where(self) -> str:
        """Where the collective runs, in words (for refusals)."""
        if self.groups:
            return f"{len(self.groups)} groups of {self.ranks} ranks on {self.topology.name!r}"
        return f"{self.ranks} ranks on {self.topology.name!r}"

    @property
    def exact(self) -> bool:
        """Whether candidates may be pruned by their lower bounds: that needs exact times
        of the fluid engine on the healthy machine (and one collective, not groups, whose
        records list every candidate's time)."""
        return (self.prune and self.model == "fluid" and not self.faults
                and not self.tolerance and self.groups is None)


def machine_costs(topology, alpha, options):
    """(per-message overhead in s, ``options`` with its reduction cost ``gamma`` in s/B):
    the values given, else the machine's calibration (:mod:`netsim.topology.calibration`;
    0 and None without one). The one place the run layer takes a machine's calibrated
    costs: :func:`resolve_request` for collective runs, and the runs that are not one
    collective (workloads, placement steps, flow files: ``options=None``).

    >>> from netsim.algorithms import AlgoOptions
    >>> from netsim.topology import parse_topology
    >>> alpha, options = machine_costs(parse_topology("galaxy-wh"), None, AlgoOptions())
    >>> alpha > 0, options.gamma is not None
    (True, True)
    """
    from ..topology.calibration import calibrated_alpha, calibrated_gamma
    from .checks import check_alpha

    alpha = check_alpha(calibrated_alpha(topology) if alpha is None else alpha)
    if options is None:                 # a run of flows: no algorithm, no reduction cost
        return alpha, None
    if options.gamma is None and calibrated_gamma(topology) is not None:
        options = replace(options, gamma=calibrated_gamma(topology))
    return alpha, options


def check_size(size) -> float:
    """A collective size in bytes (``'64MiB'`` or a number), refused below 0."""
    from ..units import parse_size

    size = parse_size(size, "collective size")
    if size < 0:
        raise InputError(f"collective size must be >= 0 bytes, got {size!r}")
    return size


def resolve_request(op: str, topology, algorithm, sizes, *, ranks: int | None = None,
                    placement: Sequence[int | str] | None = None, options=None,
                    alpha: float | None = None, router=None, faults: Sequence = (),
                    axis: int | None = None,
                    nodes: Sequence[int | str] | str | None = None,
                    groups: Sequence[Sequence[int]] | None = None,
                    model: str = "fluid", packet=None, tolerance: float = 0.0,
                    prune: bool = True, engine=None) -> CollectiveRequest:
    """The :class:`CollectiveRequest` of these arguments (those of
    :func:`~netsim.run.collective.run_collective`; ``sizes`` one size or a list of them;
    ``groups`` node indices of groups that run the collective at once, as ``axis`` makes
    them), checked in one pass: one-line :class:`InputError` naming the value.

    ``algorithm`` may be ``'default'`` (the machine's library: its algorithm and options,
    under the caller's), a name, ``'auto'``, a schedule file, an algorithm object or a
    list of them; not ``'synth'``, which searches over requests
    (:func:`~netsim.run.synthesis.run_synth`)."""
    from ..engine.tolerance import check_tolerance
    from ..topology import parse_topology
    from .checks import check_op, check_order, rank_nodes
    from .faultspec import resolve_faults
    from .library import resolve_default
    from .models import check_model
    from .search import default_options, resolve_algorithms

    check_op(op)
    check_model(model, packet)
    tolerance = check_tolerance(tolerance)      # before any build: nan is no window
    topo = parse_topology(topology) if isinstance(topology, str) else topology
    resolved = resolve_default(op, topo, algorithm)
    if resolved.library is not None:    # the library's options, under the caller's
        base = options if options is not None else default_options()
        options = replace(base, extra={**resolved.extra, **base.extra})
    if (axis is not None) + (nodes is not None) + (placement is not None) \
            + (groups is not None) > 1 or (ranks is not None and axis is not None):
        raise InputError("give one of axis, nodes and placement (and no ranks with axis)")
    if axis is not None:
        groups = axis_groups(topo, axis)
    elif nodes is not None:
        placement = parse_nodes(topo, nodes).tolist()
    sizes = tuple(check_size(s) for s in (sizes if isinstance(sizes, (list, tuple))
                                          else [sizes]))
    if groups is not None:
        groups = tuple(np.asarray(g, dtype=np.int64) for g in groups)
        if not groups or len({g.size for g in groups}) != 1:
            raise InputError("groups must be one or more groups of the same size")
        everyone = np.concatenate(groups)
        if np.unique(everyone).size != everyone.size:
            raise InputError("groups must not share a node")
        first = groups[0]
    else:
        everyone = first = rank_nodes(topo, ranks, placement)
    options = replace(options if options is not None else default_options(),
                      topology=topo, placement=first)
    alpha, options = machine_costs(topo, alpha, options)
    options.check(int(first.size))
    check_order(options.order)
    candidates, pick = resolve_algorithms(op, resolved.algorithm)
    faults = tuple(resolve_faults(faults, topo))
    if router is None:          # one router for every candidate and size: its caches stay warm
        from ..routing import default_router

        router = default_router(topo)
    return CollectiveRequest(op=op, sizes=sizes, topology=topo, nodes=everyone, groups=groups,
                             candidates=tuple(candidates), pick=pick, options=options,
                             alpha=alpha, model=model, packet=packet, faults=faults,
                             tolerance=tolerance, router=router, engine=engine, prune=prune,
                             library=resolved.library)


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
