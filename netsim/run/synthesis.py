"""Synthesised collectives, tried against the fixed algorithms: never slower than the best.

:func:`run_synth` builds synthesised schedules (:mod:`netsim.algorithms.synth`) for a few
pipelining depths and seeds within a time budget, simulates each, simulates every fixed
algorithm that applies (as ``auto`` does) and returns the faster of the two. When a fixed
algorithm wins, the run says so (``fallback``) and reports the fixed algorithm's time: a
synthesised schedule is only ever used where it helps. :func:`synthesise` returns the
chosen schedule itself, with the bound it was built against in its meta, for
``netsim synth ... -o schedule.json``.

>>> run = run_synth("allgather", "torus:4x4,bw=1GB/s", "16MB", alpha=0.0)
>>> run.algorithm, run.fallback, round(run.efficiency, 3)   # 15 blocks over 4 links
('synth', False, 1.0)
>>> run.best_fixed_s > 1.5 * run.time_s     # the best fixed algorithm uses 2 of 4 ports
True
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, replace
from typing import Any, Sequence

from ..errors import InputError
from ..units import format_time
from .machine import run_on_machine, run_request
from .record import CollectiveRun
from .request import resolve_request

__all__ = ["SynthRun", "run_synth", "synthesise", "schedule_document", "run_schedule_file",
           "SYNTH_CHUNKS", "SYNTH_WAVES", "SYNTH_OPS", "SYNTH_BUDGET_S"]

#: The collectives synthesis builds.
SYNTH_OPS = ("allgather", "reducescatter", "allreduce")
#: Chunks per rank tried, in this order, while the budget lasts (when none is given).
SYNTH_CHUNKS = (1, 2, 4, 8)
#: With reductions that cost time (gamma), also reduce the data in this many waves, so
#: that reducing one wave overlaps gathering the one before (chunks x waves <= 16).
SYNTH_WAVES = (1, 2, 4, 8, 16)
#: (chunks, waves, balance) tried in this order for reducing ops when reductions cost time
#: (balance: ``extra["balance"]`` of :mod:`netsim.algorithms.synth`, reductions spread
#: over the ranks).
GAMMA_SHAPES = ((2, 8, 0.4), (1, 4, 0.0), (2, 4, 0.0), (1, 8, 0.0), (1, 1, 0.0),
                (2, 8, 0.0), (1, 4, 0.4), (1, 16, 0.0), (4, 4, 0.0), (2, 1, 0.0),
                (4, 1, 0.0), (8, 1, 0.0))
#: Default time budget of the search over depths and seeds (s of wall time).
SYNTH_BUDGET_S = 10.0


@dataclass(eq=False)
class SynthRun(CollectiveRun):
    """A :class:`CollectiveRun` that also tells the synthesised and best fixed times (s)."""

    synth_s: float | None = None
    synth_chunks: int | None = None
    synth_waves: int | None = None
    synth_balance: float | None = None
    synth_seed: int | None = None
    synthesis_s: float | None = None      # wall time spent synthesising and simulating
    best_fixed: str | None = None
    best_fixed_s: float | None = None
    fallback: bool = False

    def record(self) -> dict[str, Any]:
        row = super().record()
        row.update(synth_s=self.synth_s, synth_chunks=self.synth_chunks,
                   synth_waves=self.synth_waves, synth_balance=self.synth_balance,
                   best_fixed=self.best_fixed, best_fixed_s=self.best_fixed_s,
                   fallback=self.fallback, synthesis_s=self.synthesis_s)
        return row


def _synth_variant(op: str, chunks: int, seed: int, waves: int = 1, balance: float = 0.0):
    """The registered synth algorithm with fixed ``chunks``, ``seed``, ``waves`` and
    ``balance``."""
    from ..algorithms import get_algorithm

    base = get_algorithm(op, "synth")

    def build(num_ranks, size, options):
        # Runs need no symbolic data (the tests verify synthesised schedules): without it
        # a 64-rank synthesis is about twice as fast.
        extra = {"annotate": False, **options.extra, "seed": seed, "waves": waves,
                 "balance": balance}
        return base.build(num_ranks, size, replace(options, chunks=chunks, extra=extra))

    return replace(base, build=build)


def _fixed(op: str) -> list:
    from ..algorithms import algorithms_for

    # As auto: builders marked auto=False (nccl, a model of another library) are not tried.
    return [a for a in algorithms_for(op)
            if a.name != "synth" and getattr(a.build, "auto", True)]


def _check(op: str, seeds: int, budget_s: float) -> None:
    if op not in SYNTH_OPS:
        raise InputError(f"synthesis builds {', '.join(SYNTH_OPS)}, not {op!r}")
    if isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1:
        raise InputError(f"seeds must be a positive integer, got {seeds!r}")
    if not (isinstance(budget_s, (int, float)) and budget_s > 0):
        raise InputError(f"synthesis time budget must be > 0 s, got {budget_s!r}")


def _shapes(op: str, options) -> list[tuple[int, int, float]]:
    """(chunks, waves, balance) to try, most promising first: waves and balance only for
    reductions that take time (``options``: the resolved request's, with its gamma)."""
    chunk_list = (int(options.chunks),) if options.chunks else SYNTH_CHUNKS
    gamma = options.gamma
    if op == "allgather" or not gamma:
        return [(c, 1, 0.0) for c in chunk_list]
    if options.chunks:
        return [(chunk_list[0], w, b) for w in SYNTH_WAVES for b in (0.0, 0.4)
                if w == 1 or chunk_list[0] * w <= 16]
    # Waves matter more than depth when reductions dominate: try them first, the shape
    # that wins on galaxy-wh all-reduce (2 x 8, 90% of the bound) before the cheaper ones,
    # so that a search whose budget one simulation exhausts (a loaded machine) finds it.
    return list(GAMMA_SHAPES)


def _search(request, size: float, *, seeds: int, budget_s: float,
            progress=None) -> tuple[CollectiveRun, tuple[int, int, float, int], float]:
    """The fastest synthesised run of the resolved ``request`` over shapes x seeds within
    ``budget_s`` (at least one): (run, (chunks, waves, balance, seed), wall seconds)."""
    op = request.op
    started = _time.perf_counter()
    best, error, last, last_work = None, None, 0.0, 1
    for chunks, waves, balance in _shapes(op, request.options):
        for seed in range(seeds):
            # Work grows with chunks x waves: do not start what will not fit the budget.
            now = _time.perf_counter() - started
            guess = 1.1 * last * chunks * waves / last_work
            if best is not None and now + guess > budget_s:
                break
            variant = _synth_variant(op, chunks, seed, waves, balance)
            begun = _time.perf_counter()
            try:
                run = run_request(replace(request, candidates=(variant,), pick=True), size,
                                  progress=progress)
            except InputError as err:     # e.g. too many sends at this depth: try the next
                error = err
                continue
            finally:
                last, last_work = _time.perf_counter() - begun, chunks * waves
            if best is None or run.time_s < best[0].time_s:
                best = (run, (chunks, waves, balance, seed))
    if best is None:
        raise error if error is not None else InputError(f"no synthesised {op} ran here")
    return best[0], best[1], _time.perf_counter() - started


def _request(op: str, topology, size, *, ranks, placement, options, alpha, router, faults,
             engine=None):
    """The resolved request of a synthesis run: the fixed algorithms as candidates, and
    ``alpha`` and ``router`` in the options' extras, which the synthesiser reads."""
    from ..algorithms import AlgoOptions
    from ..topology import parse_topology

    topo = parse_topology(topology) if isinstance(topology, str) else topology
    options = options if options is not None else AlgoOptions()
    extra = dict(options.extra)
    if alpha is not None:
        extra["alpha"] = float(alpha)
    if router is not None:
        extra["router"] = router
    return resolve_request(op, topo, _fixed(op), size, ranks=ranks, placement=placement,
                           options=replace(options, extra=extra), alpha=alpha, router=router,
                           faults=faults, engine=engine)


def run_synth(op: str, topology, size, *, ranks: int | None = None,
              placement: Sequence[int | str] | None = None, options=None,
              alpha: float | None = None, router=None, progress=None, faults: Sequence = (),
              seeds: int = 1, budget_s: float = SYNTH_BUDGET_S, engine=None) -> SynthRun:
    """Synthesise ``op`` for the machine, simulate it and the fixed algorithms, keep the
    faster (the fixed one, marked ``fallback``, when synthesis does not help).

    Arguments as :func:`~netsim.run.run_collective`; ``options.chunks`` fixes the chunks
    per rank (else :data:`SYNTH_CHUNKS` are tried), ``seeds`` seeds are tried per depth,
    and the search stops trying new ones after ``budget_s`` seconds. With a reduction rate
    (gamma) reducing ops also try reducing in waves (:data:`SYNTH_WAVES`) and with the
    reductions spread over the ranks (``GAMMA_SHAPES``: chunks, waves, balance).
    ``engine`` is the engine's :class:`~netsim.engine.config.EngineConfig` of every run of
    the search (None: its defaults).
    """
    _check(op, seeds, budget_s)
    request = _request(op, topology, size, ranks=ranks, placement=placement, options=options,
                       alpha=alpha, router=router, faults=faults, engine=engine)
    size = request.sizes[0]
    synth, (chunks, waves, balance, seed), spent = _search(request, size, seeds=seeds,
                                                          budget_s=budget_s,
                                                          progress=progress)
    fixed = run_request(request, size, progress=progress)
    best_fixed = min(fixed.candidates.items(), key=lambda kv: kv[1])
    fallback = fixed.time_s < synth.time_s
    chosen = fixed if fallback else synth
    fields = {name: getattr(chosen, name) for name in CollectiveRun.__dataclass_fields__}
    fields.update(algorithm=best_fixed[0] if fallback else "synth",
                  candidates={**fixed.candidates, "synth": synth.time_s})
    return SynthRun(**fields, synth_s=synth.time_s, synth_chunks=chunks, synth_waves=waves,
                    synth_balance=balance,
                    synth_seed=seed,
                    synthesis_s=spent, best_fixed=best_fixed[0], best_fixed_s=best_fixed[1],
                    fallback=fallback)


def synthesise(op: str, topology, size, *, ranks: int | None = None,
               placement: Sequence[int | str] | None = None, options=None,
               alpha: float | None = None, router=None, seeds: int = 1,
               budget_s: float = SYNTH_BUDGET_S, engine=None):
    """(schedule, run): the best synthesised schedule found by :func:`run_synth`'s search,
    its meta carrying the lower bound it was built against, the simulated time and the best
    fixed algorithm's; and the :class:`SynthRun`. The schedule is the synthesised one even
    when a fixed algorithm is faster (``run.fallback`` then says so)."""
    run = run_synth(op, topology, size, ranks=ranks, placement=placement, options=options,
                    alpha=alpha, router=router, seeds=seeds, budget_s=budget_s, engine=engine)
    request = _request(op, topology, size, ranks=ranks, placement=placement, options=options,
                       alpha=alpha, router=router, faults=())
    topo, nodes = request.topology, request.nodes
    built_options = replace(request.options, extra={"alpha": request.alpha,
                                                    **request.options.extra,
                                                    "annotate": False})
    schedule = _synth_variant(op, run.synth_chunks, run.synth_seed, run.synth_waves,
                              run.synth_balance).build(
        run.ranks, run.size_bytes, built_options)
    meta = dict(schedule.meta)
    meta.update(op=op, algorithm="synth", size=run.size_bytes, ranks=run.ranks,
                topology=topo.name, placement=[topo.node_names[i] for i in nodes.tolist()],
                # built against the machine's bound (what any schedule could do there)
                bound={"name": run.machine_bound_name, "seconds": run.machine_bound_s,
                       "detail": run.machine_bound_detail},
                simulated_s=run.synth_s,
                best_fixed={"algorithm": run.best_fixed, "seconds": run.best_fixed_s},
                note=(f"{run.best_fixed} is faster here "
                      f"({format_time(run.best_fixed_s)} < {format_time(run.synth_s)})"
                      if run.fallback else "faster than every fixed algorithm"))
    return replace(schedule, meta=meta), run


def schedule_document(schedule) -> dict:
    """The JSON form of a synthesised ``schedule`` for a file: bytes as fractions of the
    size it was built for (``meta["built_for_size"]``), so it runs at any size."""
    size = float(schedule.meta["size"])
    meta = {k: v for k, v in schedule.meta.items() if k != "size"}
    meta["built_for_size"] = size
    return replace(schedule, meta=meta).to_dict(message_size=size)


def run_schedule_file(op: str, topology, path, size=None, *, placement=None, alpha=None,
                      router=None, progress=None, faults: Sequence = (),
                      engine=None) -> CollectiveRun:
    """Simulate the schedule file at ``path`` (e.g. written by ``netsim synth -o``) as
    collective ``op`` of ``size`` bytes (default: the size it was built for), rank r on
    ``placement[r]`` (default: the placement stored in the file, else the first endpoints),
    and bound it like any collective run."""
    from pathlib import Path

    from ..algorithms import Algorithm
    from ..schedule import load_schedule, read_json
    from ..topology import parse_topology
    from ..units import parse_size

    topo = parse_topology(topology) if isinstance(topology, str) else topology
    doc = read_json(path)
    meta = doc.get("meta", {}) if isinstance(doc, dict) else {}
    if size is None:
        size = meta.get("built_for_size")
        if size is None:
            raise InputError(f"{path}: no meta.built_for_size: give the size to run it at")
    size = parse_size(size, "collective size")
    schedule = load_schedule(path, message_size=size)
    if meta.get("op") not in (None, op):
        raise InputError(f"{path}: the file is a {meta['op']} schedule, not {op}")
    if placement is None and meta.get("placement") and meta.get("topology") == topo.name:
        placement = list(meta["placement"])
    name = f"file:{Path(path).name}"
    from ..algorithms.verify import check_import

    n = schedule.num_ranks - len(schedule.extra_nodes)
    check_import(replace(schedule, meta={**schedule.meta, "size": float(size)}), op, n,
                 source=str(path))

    def build(num_ranks, size_, options):
        return schedule

    algo = Algorithm(op, name, f"schedule file {path}", build)
    return run_on_machine(op, topo, algo, size, ranks=schedule.num_ranks,
                          placement=placement, alpha=alpha, router=router, progress=progress,
                          faults=faults, engine=engine)
