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

from typing import Callable, Sequence

import numpy as np

from ..errors import InputError
from ..units import parse_size
from .checks import check_op
from .machine import run_request
from .models import check_model
from .record import CollectiveRun, candidates_text, check_above_bound
from .request import resolve_request
from .search import requirement_text, resolve_algorithms
from .synthesis import run_synth

__all__ = ["CollectiveRun", "run_collective", "run_sweep", "sweep_sizes", "resolve_algorithms",
           "requirement_text", "candidates_text", "check_above_bound"]

# Sweeps longer than this are almost certainly a typo (a factor of 1.0001, say).
_MAX_SWEEP_POINTS = 4096


def run_collective(op: str, topology, algorithm, size, *, ranks: int | None = None,
                   placement: Sequence[int | str] | None = None, options=None,
                   alpha: float | None = None, router=None, progress=None,
                   faults: Sequence = (), axis: int | None = None,
                   nodes: Sequence[int | str] | str | None = None,
                   model: str = "fluid", packet=None,
                   tolerance: float = 0.0, prune: bool = True,
                   builds=None, engine=None) -> CollectiveRun:
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
    passes) reuses schedules built for other sizes of a sweep, scaled exactly; ``engine``
    is the engine's :class:`~netsim.engine.config.EngineConfig` (None: its defaults).

    The request is resolved once (:func:`~netsim.run.request.resolve_request`) and run
    (:func:`~netsim.run.machine.run_request`).
    """
    if algorithm == "synth":    # hook: synthesise, compare with the fixed ones, fall back
        return _synth(op, topology, size, ranks=ranks, placement=placement, options=options,
                      alpha=alpha, router=router, progress=progress, faults=faults,
                      model=model, packet=packet, tolerance=tolerance, axis=axis, nodes=nodes,
                      engine=engine)
    request = resolve_request(op, topology, algorithm, size, ranks=ranks, placement=placement,
                              options=options, alpha=alpha, router=router, faults=faults,
                              axis=axis, nodes=nodes, model=model, packet=packet,
                              tolerance=tolerance, prune=prune, engine=engine)
    return run_request(request, request.sizes[0], progress=progress, builds=builds)


def _synth(op: str, topology, size, *, model: str, packet, tolerance, axis=None, nodes=None,
           **kwargs):
    """``--algo synth``: its search runs thousands of fluid runs of requests it resolves
    (:func:`~netsim.run.synthesis.run_synth`), on one group of ranks: ``axis`` and
    ``nodes`` are refused."""
    from ..engine.tolerance import check_tolerance

    check_op(op)
    if axis is not None or nodes is not None:
        raise InputError(f"--algo synth synthesises for one group of ranks: "
                         f"{'--axis' if axis is not None else '--nodes'} does not apply "
                         f"(use --ranks, or a fixed algorithm)")
    check_model(model, packet)
    check_tolerance(tolerance)
    if model != "fluid":
        raise InputError(f"--model {model} does not apply to --algo synth (it searches with "
                         f"the fluid model): use --model fluid")
    return run_synth(op, topology, size, **kwargs)


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
              ranks: int | None = None, placement: Sequence[int | str] | None = None,
              options=None, alpha: float | None = None, router=None, progress=None,
              faults: Sequence = (), axis: int | None = None,
              nodes: Sequence[int | str] | str | None = None, model: str = "fluid",
              packet=None, tolerance: float = 0.0, prune: bool = True,
              builds=None, engine=None) -> list[CollectiveRun]:
    """:func:`run_collective` for each size (a list or a ``sweep_sizes`` spec), the other
    arguments as there; ``each(run)`` is called after every size's run (a progress bar's
    tick).

    The request is resolved once for every size (:func:`~netsim.run.request.resolve_request`),
    so the sizes share one router (its per-topology caches stay warm), and the schedules of
    the algorithms that scale with the size are kept (:mod:`netsim.run.scaled_builds`:
    built once per pipelining depth, exactly the same schedules)."""
    from .scaled_builds import ScaledBuilds

    if algorithm == "synth":
        runs = []
        for size in sweep_sizes(sizes):
            runs.append(_synth(op, topology, size, ranks=ranks, placement=placement,
                               options=options, alpha=alpha, router=router, progress=progress,
                               faults=faults, model=model, packet=packet, tolerance=tolerance,
                               axis=axis, nodes=nodes, engine=engine))
            if each is not None:
                each(runs[-1])
        return runs
    request = resolve_request(op, topology, algorithm, sweep_sizes(sizes), ranks=ranks,
                              placement=placement, options=options, alpha=alpha,
                              router=router, faults=faults, axis=axis, nodes=nodes,
                              model=model, packet=packet, tolerance=tolerance, prune=prune,
                              engine=engine)
    builds = ScaledBuilds() if builds is None else builds
    runs = []
    for size in request.sizes:
        runs.append(run_request(request, size, progress=progress, builds=builds))
        if each is not None:
            each(runs[-1])
    return runs
