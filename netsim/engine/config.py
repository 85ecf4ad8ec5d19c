"""What the engine may do, and the one function that decides what it does.

Every choice the engine makes between its event loops (the numpy loop of
:mod:`.executor`, the compiled loop of :mod:`.loop` with the solver of :mod:`.kernel` or
:mod:`.classes`) and whether it looks for symmetry classes (:mod:`.symmetry`) is a function
of the input's sizes and of an :class:`EngineConfig` passed in: :func:`choose_path`. Free
memory never switches paths (a path whose work space does not fit is refused with an
estimate: :func:`require_work_space`), and nothing a process did before changes a run, so
the same input gives the same bits on every machine and in every process. The choice is
recorded in ``Result.meta["engine"]``.

>>> path = choose_path(EngineConfig(), ops=10, subflows=10, incidences=20,
...                    dependencies=0, compiled=True)
>>> path.loop, path.solver, path.numpy_work
('classes', 'rate classes', 5000000)
>>> choose_path(EngineConfig(loop="reference"), ops=10, subflows=10, incidences=20,
...             dependencies=0, compiled=True).solver
'cold'
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from ..errors import InputError

__all__ = ["EngineConfig", "EnginePath", "LOOPS", "choose_path", "require_work_space",
           "compiled_available", "describe"]

#: Values of :attr:`EngineConfig.loop`: ``auto`` lets :func:`choose_path` pick; the others
#: force one path (the conformance tests run each against ``reference``).
LOOPS = ("auto", "reference", "numpy", "kernel", "classes")

#: Work space of the compiled loop with engine.classes, on top of the run's own arrays: per
#: incidence an entry (9 x 8 B), its hash slot (up to 32 B) and its place in the per-link
#: flow lists; per sub-flow its class rows, member links and heap places.
WORK_SPACE = {"classes": (112, 300)}   # B per incidence, per sub-flow


@dataclass(frozen=True, kw_only=True)
class EngineConfig:
    """The engine's tunables. Frozen and picklable: pass one to
    :func:`netsim.engine.simulate` or :func:`~netsim.engine.execute` (default: this
    class's defaults).

    ``loop``: one of :data:`LOOPS`. ``auto`` (default) picks by size (:func:`choose_path`);
    ``reference`` is the numpy loop solving cold over every draining flow at every event,
    with no symmetry search: what every other path is tested against; ``numpy`` the numpy
    loop throughout; ``kernel`` and ``classes`` the compiled loop with that solver after
    the first event.
    A run that records a timeline takes engine.kernel's loop (its solver keeps every
    flow's rate, which the links' loads are summed from), or the numpy loop where
    ``classes`` is forced; with faults the compiled loop stops at each
    fault, which the numpy loop applies (rerouting calls the router).

    ``warm``: the numpy loop and engine.kernel start each solve from the last one (below
    ``warm_min_incidences`` draining incidences a cold solve is cheaper).

    ``numpy_work``: under ``auto`` the numpy loop runs first and hands over to the compiled
    loop once its work (draining incidences summed over events, plus ``event_work`` per
    event, a numpy event's fixed cost in incidences) passes this: runs with few events end
    in numpy without loading the compiled loop. The work counts only this run's events, so
    the hand-over point is a function of the input.

    ``incremental_min_subflows``: the compiled loop refills only what each event changes
    (engine.classes) for runs of at least this many sub-flows (after symmetry
    classes), or of any size without dependencies when ``incremental_flat``; None: never.
    Below it an event's full re-solve (engine.kernel) is cheap and is the reference's own
    arithmetic. With dependencies a rounding-level difference can move a completion across
    the merge window and, through the successors it releases, an op's finish by more than
    the window; without them a completion moves by at most the window.
    ``incremental_max_incidences``: above this many path incidences, engine.kernel.
    ``link_scan_factor``: engine.kernel fills one bottleneck link at a time when (links
    carrying flows)^2 is below this times the flows to fill, else in parallel passes.

    ``symmetry``: look for symmetry classes (engine.symmetry) and simulate one flow per
    class. ``symmetry_min_subflows``: below this many sub-flows the search costs more than
    it saves. ``symmetry_max_class_share``: give up when the classes are more than this
    share of the sub-flows. ``symmetry_max_rounds``: refinement rounds before giving up.
    ``symmetry_max_incidences``: above this many path incidences the search is skipped
    (below it, a search that would not fit in memory is refused: netsim.budget's
    ``require_search``). ``symmetry_compiled_from``: the search runs compiled
    from this many incidences (path links + dependencies + sub-flows), on numpy below,
    where it costs less than loading numba: both find the same arrays. None: numpy always.

    ``memory_budget``: bytes the run may use (None: :func:`netsim.budget.memory_budget`,
    ``--max-memory`` or what the machine has). Only ever refuses a run, never changes it.

    The defaults' figures are in benchmarks/RESULTS.md ("engine defaults").
    """

    loop: str = "auto"
    warm: bool = True
    warm_min_incidences: int = 2048
    numpy_work: int = 5_000_000
    event_work: int = 20_000
    incremental_min_subflows: int | None = 20_000
    incremental_flat: bool = True
    incremental_max_incidences: int = 16_000_000
    link_scan_factor: float = 64.0
    symmetry: bool = True
    symmetry_min_subflows: int = 512
    symmetry_max_class_share: float = 0.5
    symmetry_max_rounds: int = 48
    symmetry_max_incidences: int = 128_000_000
    symmetry_compiled_from: int | None = 500_000
    memory_budget: int | None = None

    def __post_init__(self) -> None:
        if self.loop not in LOOPS:
            raise InputError(f"engine loop must be one of {', '.join(LOOPS)}, got "
                             f"{self.loop!r}")

    @property
    def searches_symmetry(self) -> bool:
        """Whether runs look for symmetry classes (every path but the reference)."""
        return self.symmetry and self.loop != "reference"


@dataclass(frozen=True)
class EnginePath:
    """What runs: ``loop`` (``numpy``, ``kernel`` or ``classes``), its ``solver``
    (``cold``: progressive filling over every draining flow at every event; ``warm``: from
    the last solution; ``rate classes``: refill what the event changed, on classes of
    flows that move together) and ``numpy_work``,
    the numpy loop's work after which the compiled ``loop`` takes over (0: after the first
    event; None for the numpy loop)."""

    loop: str
    solver: str
    numpy_work: int | None


def compiled_available() -> bool:
    """Whether numba is installed (the compiled loops and search can run)."""
    return importlib.util.find_spec("numba") is not None


def choose_path(config: EngineConfig, *, ops: int, subflows: int, incidences: int,
                dependencies: int, timeline: bool = False,
                compiled: bool | None = None) -> EnginePath:
    """The path a run takes, from the sizes of what it simulates (after symmetry classes:
    ``ops``, ``subflows``, path ``incidences``, ``dependencies`` (edges), a recorded
    ``timeline``), ``config`` and whether the compiled loops can run
    (``compiled``; default: numba installed). Nothing else: faults do not change it (the
    compiled loop stops at each, and the numpy loop applies it)."""
    if config.loop == "reference":
        return EnginePath("numpy", "cold", None)
    numpy_path = EnginePath("numpy", "warm" if config.warm else "cold", None)
    if compiled is None:
        compiled = compiled_available()
    # a timeline sums the links' loads from every flow's rate: engine.kernel keeps them,
    # engine.classes keeps rates per class
    if config.loop == "numpy" or (timeline and config.loop == "classes"):
        return numpy_path
    if not compiled:
        if config.loop != "auto":
            raise InputError(f"engine loop {config.loop!r} needs numba (pip install numba)")
        return numpy_path
    if config.loop == "auto":
        loop = "kernel"
        threshold = config.incremental_min_subflows
        if not timeline and threshold is not None and \
                incidences <= config.incremental_max_incidences and (
                    subflows >= threshold or (config.incremental_flat and dependencies == 0)):
            loop = "classes"
        work = config.numpy_work
    else:
        loop, work = config.loop, 0
    solver = {"kernel": "warm" if config.warm else "cold", "classes": "rate classes"}[loop]
    return EnginePath(loop, solver, work)


def require_work_space(config: EngineConfig, path: EnginePath, *, subflows: int,
                       incidences: int) -> None:
    """Refuse, with one line giving the estimate, a run whose loop's work space does not
    fit in ``config.memory_budget`` (:data:`WORK_SPACE`)."""
    if path.loop not in WORK_SPACE:
        return
    from ..budget import require_memory

    per_incidence, per_sub = WORK_SPACE[path.loop]
    require_memory(incidences * per_incidence + subflows * per_sub,
                   f"the engine's {path.loop} loop on {subflows:,} flows ({incidences:,} "
                   f"path links)", advice="a smaller case", budget=config.memory_budget)


def describe(engine: dict) -> str:
    """``Result.meta["engine"]`` in one line (what ``-v`` prints).

    >>> describe({"loop": "kernel", "solver": "warm", "numpy_events": 3,
    ...           "tolerance": 0.0, "symmetry": {"classes": False, "flows": 72}})
    'engine: loop kernel after 3 numpy events, solver warm; 72 flows, no symmetry classes; exact'
    >>> describe({"loop": "packet", "solver": "cut-through packets (SimPy)", "events": 2400,
    ...           "symmetry": {"classes": False, "flows": 4}})
    'engine: packet model, cut-through packets (SimPy), 2,400 packet hops; 4 flows'
    """
    loop = engine.get("loop", "?")
    text = f"engine: loop {loop}"
    if loop == "packet":          # the packet model: no fluid solver, no numpy phase
        return (f"engine: packet model, {engine.get('solver', '?')}, "
                f"{engine.get('events', 0):,} packet hops; "
                f"{(engine.get('symmetry') or {}).get('flows', 0):,} flows")
    if loop != "numpy":
        text += f" after {engine.get('numpy_events', 0)} numpy events"
    text += f", solver {engine.get('solver', '?')}"
    sym = engine.get("symmetry") or {}
    if sym.get("classes"):
        text += (f"; {sym['flows']:,} flows as {sym['simulated']:,} classes "
                 f"(x{sym['reduction']:.4g})")
    elif "flows" in sym:
        text += f"; {sym['flows']:,} flows, no symmetry classes"
    tolerance = engine.get("tolerance", 0.0)
    return text + (f"; tolerance {tolerance:g}" if tolerance else "; exact")
