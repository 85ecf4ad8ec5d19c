"""Which algorithms a run tries, and the fastest of them.

:func:`resolve_algorithms` turns a name, ``'auto'``, an algorithm object, a list of them or
a schedule file into candidates; :func:`fastest` simulates those that apply (with lower
bounds, skipping the candidates that cannot win) and returns the fastest.

>>> [a.name for a in resolve_algorithms("allreduce", "ring")[0]]
['ring']
"""

from __future__ import annotations

from typing import Any, Callable

from ..engine import Result
from ..errors import InputError, RoutingError, unknown_name

__all__ = ["resolve_algorithms", "requirement_text", "default_options", "fastest"]


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


def default_options():
    from ..algorithms.options import AlgoOptions

    return AlgoOptions()


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


def fastest(candidates, pick: bool, n: int, options, run: Callable[[Any], Result],
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
    """:func:`fastest` with bounds: (algorithm, result) of the candidates simulated, in
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
