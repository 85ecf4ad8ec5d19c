"""The registry of collective algorithms: every algorithm is a schedule builder.

An algorithm is a function ``build(num_ranks, size, options) -> Schedule`` registered under
an op and a name::

    @register("allreduce", "ring", "bandwidth-optimal ring: reduce-scatter + all-gather")
    def ring(num_ranks, size, options): ...

``size`` follows nccl-tests, in bytes:

* ``allreduce``: the buffer S (every rank's input and output);
* ``allgather``: the OUTPUT size S (each rank contributes S/n);
* ``reducescatter``: the INPUT size S (each rank keeps S/n);
* ``alltoall``: one rank's send buffer S (S/n to each peer);
* ``broadcast`` / ``reduce``: the buffer S.

:func:`build_schedule` checks the arguments, refuses algorithms that cannot run here with a
one-line :class:`~netsim.errors.InputError`, and stores ``{"op", "algorithm", "size",
"ranks"}`` in the schedule's ``meta``. A schedule that needs ranks on switches (in-network
reduction) lists their node indices in ``Schedule.extra_nodes``: ranks n, n+1, ...
run there, and the caller appends those nodes to the placement.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from typing import Callable

from ..errors import InputError, positive_int, unknown_name
from ..schedule import Schedule
from ..schedule.ops import OPS
from .options import AlgoOptions

__all__ = ["OPS", "REQUIREMENTS", "Algorithm", "register", "get_algorithm", "algorithms_for",
           "build_schedule", "default_chunks", "reason_from"]

#: What an algorithm may require beyond a rank count (see :meth:`Algorithm.why_not`).
REQUIREMENTS = (None, "grid", "reducing-switch", "groups")

Builder = Callable[[int, float, AlgoOptions], Schedule]
#: ``check(num_ranks, options)`` -> None if the algorithm can run, else the reason.
Check = Callable[[int, AlgoOptions], "str | None"]

_REGISTRY: dict[str, dict[str, "Algorithm"]] = {op: {} for op in OPS}


@dataclass(frozen=True)
class Algorithm:
    """A registered algorithm of one collective op.

    ``summary`` is one line for ``netsim coll --list``; ``power_of_two`` marks algorithms
    that refuse other rank counts; ``requires`` is None, ``"grid"`` (a mesh, torus or ring
    topology), ``"reducing-switch"`` (a switch with ``reduce: True``) or ``"groups"``
    (options.groups, or groups inferred from the topology). ``check`` tells, for the
    requirement, why an algorithm cannot run with these options.
    """

    op: str
    name: str
    summary: str
    build: Builder
    power_of_two: bool = False
    requires: str | None = None
    check: Check | None = None
    pipelined: bool = False
    #: Optional: the same schedule as a :class:`~netsim.schedule.BlockSchedule` (identical
    #: blocks of sends, simulated with one send per block when they are one symmetry
    #: class), or None where it is not made of such blocks. Runners try it first.
    blocks: Callable | None = None
    #: True: the schedule depends on the placement only through the rank order
    #: (``options.order`` resolved by :func:`~netsim.algorithms.orders.rank_order`), so
    #: the natural order's schedule relabelled by that order is the same schedule, op for
    #: op (placement search builds each such algorithm once per size).
    order_only: bool = False
    #: True: for a fixed pipelining depth (``chunks``, resolved) the schedule has the same
    #: ops, dependencies, tags and meta at every size, and its bytes and compute seconds
    #: are the size times fixed factors (no size-independent term, no threshold), so the
    #: schedule of ``S * 2**k`` is that of ``S`` scaled, bit for bit: a size sweep builds
    #: it once per depth (:mod:`netsim.run.scaled_builds`; tests/test_sweep_reuse.py
    #: checks every algorithm that says so). A callable ``(num_ranks, options) -> bool``
    #: says it where it holds (tt_*: where the machine has no fixed launch cost).
    size_linear: bool | Callable[[int, AlgoOptions], bool] = False
    #: True: every rank sends to every other rank (direct, one-shot), so its sends cross
    #: the machine's mean distance, not the one link of a ring's: the memory check before
    #: the build counts that many links per send and refuses, in a moment, what would
    #: otherwise be built for seconds and then refused (``--algo auto`` on 4,096 ranks).
    all_pairs: bool = False

    def why_not(self, num_ranks: int, options: AlgoOptions) -> str | None:
        """None if the algorithm can run on ``num_ranks`` ranks with ``options``, else why not."""
        if self.power_of_two and not _is_power_of_two(num_ranks):
            return f"{self.name} needs a power of two number of ranks, got {num_ranks}"
        if self.check is not None:
            reason = self.check(num_ranks, options)
            if reason:
                return f"{self.name} {reason}"
        return None

    def resolve(self, size: float, options: AlgoOptions) -> AlgoOptions:
        """``options`` with the pipelining depth filled in when the caller gave none."""
        if options.chunks is not None:
            return options
        return replace(options, chunks=default_chunks(size) if self.pipelined else 1)

    def scales_with_size(self, num_ranks: int, options: AlgoOptions) -> bool:
        """Whether :attr:`size_linear` holds for these ranks and options."""
        if callable(self.size_linear):
            return bool(self.size_linear(num_ranks, options))
        return bool(self.size_linear)

    def applies(self, num_ranks: int, options: AlgoOptions) -> bool:
        """Can it run on ``num_ranks`` ranks with ``options``?"""
        return self.why_not(num_ranks, options) is None


def reason_from(checker: Callable[[int, AlgoOptions], object], name: str) -> Check:
    """A :data:`Check` from ``checker(num_ranks, options)``, which raises a one-line
    InputError when algorithm ``name`` cannot run: the reason is its message without the
    leading name (:meth:`Algorithm.why_not` puts the name back), or ``'cannot run: ...'``
    for a message that does not start with it.

    >>> def needs_two(n, options):
    ...     if n != 2:
    ...         raise InputError(f"pair needs 2 ranks, got {n}")
    >>> reason_from(needs_two, "pair")(3, AlgoOptions()), reason_from(needs_two, "pair")(2, None)
    ('needs 2 ranks, got 3', None)
    """
    def check(num_ranks: int, options: AlgoOptions) -> str | None:
        try:
            checker(num_ranks, options)
        except InputError as err:
            text = str(err)
            return text[len(name) + 1:] if text.startswith(f"{name} ") else f"cannot run: {text}"
        return None
    return check


def _is_power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def register(op: str, name: str, summary: str, *, power_of_two: bool = False,
             requires: str | None = None, check: Check | None = None,
             pipelined: bool = False, blocks: Callable | None = None,
             order_only: bool = False,
             size_linear: bool | Callable[[int, AlgoOptions], bool] = False,
             all_pairs: bool = False):
    """Decorator registering ``build(num_ranks, size, options)`` as algorithm ``op``/``name``.

    ``blocks(num_ranks, size, options)``, when given, returns the same schedule as a
    :class:`~netsim.schedule.BlockSchedule` (or None where it has no such form): runners
    simulate that without building the full schedule (:mod:`netsim.engine.blocks`).
    ``order_only`` declares that the placement enters the schedule only through the rank
    order (see :class:`Algorithm`); ``size_linear`` that bytes and compute seconds scale
    with the size at a fixed depth (see :class:`Algorithm`); ``all_pairs`` that every rank
    sends to every other (see :class:`Algorithm`). The registry is open: a user
    module may register more algorithms the same way.
    """
    if op not in _REGISTRY:
        raise unknown_name("collective op", op, OPS)
    if requires not in REQUIREMENTS:
        raise InputError(f"unknown requirement {requires!r} (choose from "
                         f"{', '.join(map(str, REQUIREMENTS))})")

    def decorate(build: Builder) -> Builder:
        algorithm = Algorithm(op, name, summary, build, power_of_two, requires, check, pipelined,
                              order_only=order_only, size_linear=size_linear,
                              all_pairs=all_pairs)

        @functools.wraps(build)
        def build_with_defaults(num_ranks: int, size: float, options: AlgoOptions) -> Schedule:
            # Callers of Algorithm.build may leave chunks=None: the algorithm's own depth.
            return build(num_ranks, size, algorithm.resolve(size, options))

        def blocks_with_defaults(num_ranks: int, size: float, options: AlgoOptions):
            return blocks(num_ranks, size, algorithm.resolve(size, options))

        _REGISTRY[op][name] = replace(algorithm, build=build_with_defaults,
                                      blocks=blocks_with_defaults if blocks else None)
        return build

    return decorate


def get_algorithm(op: str, name: str) -> Algorithm:
    """The algorithm ``name`` of ``op``; an unknown op or name raises a 'did you mean' error."""
    if op not in _REGISTRY:
        raise unknown_name("collective op", op, OPS)
    try:
        return _REGISTRY[op][name]
    except KeyError:
        raise unknown_name(f"{op} algorithm", name, _REGISTRY[op]) from None


def algorithms_for(op: str) -> list[Algorithm]:
    """Every registered algorithm of ``op``, in registration order."""
    if op not in _REGISTRY:
        raise unknown_name("collective op", op, OPS)
    return list(_REGISTRY[op].values())


def _check_args(num_ranks, size) -> tuple[int, float]:
    """``num_ranks`` as an int >= 1 and ``size`` as bytes >= 0, else a one-line InputError."""
    ranks = positive_int(num_ranks, "number of ranks")
    try:
        size = float(size)
    except (TypeError, ValueError):
        raise InputError(f"size must be a number of bytes, got {size!r}") from None
    if not math.isfinite(size) or size < 0:
        raise InputError(f"size must be a finite number of bytes >= 0, got {size!r}")
    return ranks, size


#: Pipelining depth when none is given: about sqrt(S / 256 KiB) chunks, 1 to 64. The best
#: depth of a pipeline grows with the square root of the message (fill time against
#: per-chunk overhead); on dgx-h100 NVLS this picks 16 chunks at 64 MiB and 64 at 1 GiB,
#: the best of {1, 8, 16, 32, 64} at both sizes.
_CHUNK_SCALE, _MAX_CHUNKS = 256 * 1024, 64


def default_chunks(size: float) -> int:
    """Chunks a pipelined algorithm uses for ``size`` bytes when the caller names none."""
    return int(min(_MAX_CHUNKS, max(1, math.ceil(math.sqrt(size / _CHUNK_SCALE)))))


def build_schedule(op: str, name: str, num_ranks: int, size: float,
                   options: AlgoOptions = AlgoOptions()) -> Schedule:
    """Build the schedule of algorithm ``name`` for ``op`` on ``num_ranks`` ranks.

    ``size`` in bytes, as nccl-tests defines it for ``op`` (module docstring). Raises
    InputError when the algorithm cannot run here, naming the algorithms that can.
    """
    algorithm = get_algorithm(op, name)
    num_ranks, size = _check_args(num_ranks, size)
    options = algorithm.resolve(size, options)
    options.check(num_ranks)
    reason = algorithm.why_not(num_ranks, options)
    if reason:
        usable = [a.name for a in algorithms_for(op) if a.applies(num_ranks, options)]
        hint = f"; use {', '.join(usable)}" if usable else ""
        raise InputError(f"{reason}{hint}")
    schedule = algorithm.build(num_ranks, size, options)
    meta = dict(schedule.meta)
    meta.update(op=op, algorithm=name, size=size, ranks=num_ranks)
    return replace(schedule, meta=meta)
