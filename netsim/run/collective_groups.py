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

from typing import Sequence

from .request import axis_groups, parse_nodes

__all__ = ["axis_groups", "parse_nodes", "run_groups"]


def run_groups(op: str, topology, algorithm, size, groups: Sequence[Sequence[int]], *,
               options=None, alpha: float | None = None, router=None, progress=None,
               faults: Sequence = (), tolerance: float = 0.0, model: str = "fluid",
               packet=None, engine=None):
    """Run collective ``op`` on every group of ``groups`` (node indices, in rank order) at
    the same time, with one algorithm (``'auto'``: the one whose slowest group is fastest).

    Returns a :class:`~netsim.run.collective.CollectiveRun` for one group's collective
    (``ranks`` = group size, busbw per group) whose ``time_s`` is the slowest group's,
    with ``groups`` (labels) and ``group_times`` (s). The bounds are the largest of the
    groups' own: the machine's on the links each group can use
    (:func:`~netsim.algorithms.bounds.group_links`), the algorithm's on those its run used
    (:func:`~netsim.algorithms.bounds.algorithm_bound`). The request is resolved as any
    (:func:`~netsim.run.request.resolve_request`: calibrated alpha and gamma, ``model``
    and ``packet``; with ``'both'`` the group times are the fluid model's) and runs
    through the same pipeline (:func:`~netsim.run.machine.run_request`), the groups
    being its placement.
    """
    from .machine import run_request
    from .request import resolve_request

    request = resolve_request(op, topology, algorithm, size, groups=groups, options=options,
                              alpha=alpha, router=router, faults=faults, model=model,
                              packet=packet, tolerance=tolerance, engine=engine)
    return run_request(request, request.sizes[0], progress=progress)
