"""Reduce, run, expand: the engine's one entry for a run that may be simulated in part.

A caller gives the ways its run can be built (:class:`Forms`): every op (``full``), and
where the algorithm has them, one send per ring step (``blocks``: a
:class:`~netsim.schedule.BlockSchedule`) or a few alike in-network planes per class
(``planes``). :func:`simulate` decides which runs: it finds what cannot be told apart
(the blocks are symmetry classes, :mod:`.blocks`; the planes are alike and independent,
:mod:`.planes`), runs one representative and expands the result to the whole schedule,
exactly; otherwise, or with faults (which break the symmetry), it builds and runs every
op. The caller does not choose engine paths; :attr:`Staged.form` says which ran.

>>> import numpy as np
>>> from netsim import topology, algorithms
>>> four = topology.ring(4, bandwidth=2e9)
>>> opts = algorithms.AlgoOptions(chunks=1, topology=four, extra={"annotate": False})
>>> gather = algorithms.rings.ring_blocks("allgather", 4, 8e9, opts, reduce_scatter=False,
...                                       all_gather=True)
>>> forms = Forms(full=None, blocks=lambda: Placed(four, gather, np.asarray(four.endpoints)),
...               sends=12)
>>> staged = simulate(forms)
>>> staged.form, round(staged.result.makespan, 9)        # (n-1)/n x 8 GB at 2 GB/s
('blocks', 3.0)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .config import EngineConfig
from .result import Result

__all__ = ["Placed", "Forms", "Staged", "simulate", "representative", "TIMELINE_SENDS"]

#: With a timeline recorded, a run of up to this many sends runs op by op (its timeline
#: covers every link); a larger one still runs on its blocks and keeps none.
TIMELINE_SENDS = 50_000


@dataclass(frozen=True)
class Placed:
    """A schedule ready to run: the machine it runs on, the schedule (payload bytes), the
    node of every rank (switch ranks appended), the per-message cost at the sender (s;
    one value or one per op) and the bytes on the wire per payload byte."""

    topology: Any
    schedule: Any
    placement: np.ndarray
    overhead: Any = 0.0
    wire_factor: float = 1.0


@dataclass(frozen=True)
class Forms:
    """The ways one run can be built, each a function returning a :class:`Placed` (or
    None where that form does not exist here): ``full`` every op; ``blocks`` a
    :class:`~netsim.schedule.BlockSchedule`; ``planes`` a schedule that may hold a few
    alike planes per class (described in its ``meta["planes"]``; a schedule without it is
    the full one). ``sends`` is the full schedule's send count (what a timeline would
    cover)."""

    full: Callable[[], Placed]
    blocks: Callable[[], Placed | None] | None = None
    planes: Callable[[], Placed] | None = None
    sends: int = 0


@dataclass(frozen=True)
class Staged:
    """What :func:`simulate` ran: the result (of the whole schedule), the form that ran
    (``'blocks'``, ``'planes'`` or ``'full'``) and its :class:`Placed`."""

    result: Result
    form: str
    placed: Placed


def simulate(forms: Forms, *, router=None, progress=None, tolerance: float = 0.0,
             faults=(), record_timeline: bool = False,
             config: EngineConfig | None = None) -> Staged:
    """Run the cheapest exact form of ``forms`` (module docstring) with the fluid engine.

    ``router``, ``progress``, ``tolerance``, ``faults``, ``record_timeline`` and ``config``
    are :func:`netsim.engine.simulate`'s. Faults run every op; a recorded timeline runs
    every op up to :data:`TIMELINE_SENDS` sends (a timeline needs every link's flows) and
    never a few planes. The result's ``placement`` is every rank's node (switch ranks
    appended)."""
    from . import simulate as simulate_schedule
    from .blocks import simulate_blocks
    from .planes import expand_result

    config = EngineConfig() if config is None else config
    reducible = not faults
    if reducible and forms.blocks is not None and not (record_timeline
                                                       and forms.sends <= TIMELINE_SENDS):
        placed = forms.blocks()
        if placed is not None:
            blocks = placed.schedule.scaled(placed.wire_factor)
            result = simulate_blocks(placed.topology, blocks, placed.placement, router=router,
                                     overhead=placed.overhead, progress=progress,
                                     tolerance=tolerance, config=config)
            if result is not None:
                result.placement = placed.placement
                return Staged(result, "blocks", placed)
    if reducible and not record_timeline:
        placed, planes = representative(forms, router=router)
    else:
        placed, planes = forms.full(), None
    schedule = placed.schedule.scaled(placed.wire_factor)
    result = simulate_schedule(placed.topology, schedule, placed.placement, router=router,
                               overhead=placed.overhead, progress=progress,
                               record_timeline=record_timeline, faults=faults,
                               tolerance=tolerance, config=config)
    if planes is None:
        return Staged(result, "full", placed)
    return Staged(expand_result(result, planes, _ranks(placed)), "planes", placed)


def representative(forms: Forms, *, router=None):
    """(the :class:`Placed` a fault-free run without a timeline simulates when the blocks
    do not run, its :class:`~netsim.engine.planes.PlaneMap` or None): a few planes per
    class when :func:`~netsim.engine.planes.plane_map` finds them alike (the result then
    expands to every plane), else every op. A lower bound of the run is a bound of this
    schedule."""
    from .planes import plane_map

    if forms.planes is None:
        return forms.full(), None
    placed = forms.planes()
    if "planes" not in placed.schedule.meta:        # no planes here: it is the full one
        return placed, None
    planes = plane_map(placed.topology, placed.schedule, _ranks(placed), router)
    return (placed, planes) if planes is not None else (forms.full(), None)


def _ranks(placed: Placed) -> np.ndarray:
    """The nodes of the schedule's ranks, without its switch ranks."""
    schedule = placed.schedule
    return np.asarray(placed.placement[:schedule.num_ranks - len(schedule.extra_nodes)])
