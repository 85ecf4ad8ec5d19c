"""Workloads: a training or inference step as phases of concurrent collectives.

A :class:`Phase` is one collective run by *every* group of one parallel dimension at the
same time (all tp groups all-reduce together), so groups whose traffic crosses the same
links share them max-min fairly inside one simulation. Phases belong to *streams*: the
phases of a stream run one after another, streams run at the same time (compute-
communication overlap puts the gradient all-reduce in its own stream). Without overlap
there is one stream.

A phase occurs ``repeat`` times per step (2 tensor-parallel all-reduces per layer ...).
With one stream, the step is simulated with each phase once and a phase's time is
``repeat x`` its simulated span (exact: the phases are separated by barriers and the
copies are identical). With several streams the copies are in the schedule: a phase is
``min(repeat, max_copies)`` back-to-back collectives of ``repeat / copies`` times the
size, so the bytes are exact and the per-message latency is counted ``copies`` times
instead of ``repeat`` times (see ``docs/placement.md``).

Sizes are bytes with the nccl-tests meaning of the op (all-gather: output, all-to-all: one
rank's send buffer). ``sendrecv`` is the pipeline hand-off: every rank of stage j sends
``size`` bytes to its peer in stage j+1 (and back, with ``both_ways``).

:class:`Transformer` derives the phases of a step from a model description; the formulas
are in ``docs/placement.md``.

>>> from netsim.placement.layout import ParallelLayout
>>> w = Transformer(hidden=8192, seq_len=1, micro_batch=32, layers=80,
...                 mode="decode").workload(ParallelLayout(tp=8, dp=4))
>>> [(p.name, p.op, p.size, p.repeat) for p in w.phases]
[('tp-allreduce', 'allreduce', 524288.0, 160)]
"""

from __future__ import annotations

import functools

import math
from dataclasses import dataclass, field, replace
from typing import Sequence

import numpy as np

from ..errors import InputError, unknown_name
from ..schedule import Schedule, concurrent, sends_from_arrays, sequential
from ..schedule.ops import OPS
from .layout import DIMENSIONS, ParallelLayout

__all__ = ["Phase", "Workload", "Transformer", "PHASE_OPS", "StepSchedule",
           "bytes_workload", "build_step", "phase_schedule", "algorithm_for", "MODES"]

#: Collective ops of the registry, plus the pipeline hand-off.
PHASE_OPS = (*OPS, "sendrecv")
MODES = ("train", "prefill", "decode")
DEFAULT_MAX_COPIES = 8


@dataclass(frozen=True)
class Phase:
    """One collective run by every group of ``dim`` at once.

    ``size`` in bytes (nccl-tests meaning of ``op``); ``algorithm`` a registry name or
    ``'auto'`` (the fastest under each placement, chosen by the evaluator); ``repeat``
    occurrences per step; ``stream`` the stream it belongs to (None: see
    :meth:`Workload.stream_of`); ``chunks`` pipelining slices of the algorithm;
    ``both_ways`` (sendrecv only) sends back as well, as backward passes do.
    """

    name: str
    dim: str
    op: str
    size: float
    algorithm: str = "ring"
    repeat: int = 1
    stream: str | None = None
    chunks: int | None = None      # None: the algorithm picks its pipelining depth
    both_ways: bool = False

    def __post_init__(self) -> None:
        if self.dim not in DIMENSIONS:
            raise unknown_name("parallel dimension", self.dim, DIMENSIONS)
        if self.op not in PHASE_OPS:
            raise unknown_name("phase op", self.op, PHASE_OPS)
        size = float(self.size)
        if not math.isfinite(size) or size < 0:
            raise InputError(f"phase {self.name!r}: size must be a finite number of bytes "
                             f">= 0, got {self.size!r}")
        object.__setattr__(self, "size", size)
        if isinstance(self.repeat, bool) or int(self.repeat) != self.repeat or self.repeat < 1:
            raise InputError(f"phase {self.name!r}: repeat must be an integer >= 1, got "
                             f"{self.repeat!r}")
        object.__setattr__(self, "repeat", int(self.repeat))


@dataclass(frozen=True)
class Workload:
    """The phases of one step. ``overlap``: phases without a ``stream`` each get their own
    stream (all concurrent); otherwise they share stream ``'main'`` (in sequence)."""

    phases: tuple[Phase, ...]
    overlap: bool = False
    name: str = "step"

    def __post_init__(self) -> None:
        object.__setattr__(self, "phases", tuple(self.phases))
        names = [p.name for p in self.phases]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise InputError(f"workload {self.name!r}: phase name {sorted(dup)[0]!r} is used "
                             f"twice")

    def stream_of(self, phase: Phase) -> str:
        if phase.stream is not None:
            return phase.stream
        return phase.name if self.overlap else "main"

    def active(self, layout: ParallelLayout) -> "Workload":
        """The phases that move data on this layout (degree > 1 and size > 0)."""
        keep = tuple(p for p in self.phases if layout.degree(p.dim) > 1 and p.size > 0)
        return replace(self, phases=keep)

    def streams(self) -> dict[str, list[Phase]]:
        """Stream name -> its phases in order."""
        out: dict[str, list[Phase]] = {}
        for p in self.phases:
            out.setdefault(self.stream_of(p), []).append(p)
        return out


def algorithm_for(op: str, algorithm: str) -> str:
    """``algorithm`` for ``op``, except that all-to-all and send/recv have no ring: a ring
    asked for the whole step means ``direct`` for them."""
    if op in ("alltoall", "sendrecv") and algorithm in ("ring", "bidir_ring"):
        return "direct"
    return algorithm


def bytes_workload(*, tp_bytes: float = 0.0, dp_bytes: float = 0.0, cp_bytes: float = 0.0,
                   ep_bytes: float = 0.0, pp_bytes: float = 0.0, algorithm: str = "ring",
                   overlap: bool = False, repeat: dict[str, int] | None = None) -> Workload:
    """A step given in bytes: tp all-reduce, cp all-gather, ep all-to-all, dp all-reduce,
    pp send/recv (phases of 0 bytes are left out), in that order; ``repeat`` maps a
    dimension to its collectives per step."""
    repeat = repeat or {}
    spec = [("tp", "allreduce", tp_bytes), ("cp", "allgather", cp_bytes),
            ("ep", "alltoall", ep_bytes), ("dp", "allreduce", dp_bytes),
            ("pp", "sendrecv", pp_bytes)]
    phases = tuple(Phase(f"{dim}-{op}", dim, op, size, algorithm=algorithm_for(op, algorithm),
                         repeat=repeat.get(dim, 1))
                   for dim, op, size in spec if size)
    return Workload(phases, overlap=overlap)


# -- transformer-derived sizes -------------------------------------------------------------

@dataclass(frozen=True)
class Transformer:
    """A transformer, for the bytes of each collective of a step (``docs/placement.md``).

    ``hidden`` h, ``seq_len`` s (tokens per sequence), ``micro_batch`` b (sequences),
    ``layers`` L, ``bytes_per_element`` e (activations), ``params`` P (parameter count,
    default 12 L h^2), ``grad_bytes_per_element`` (default e), ``kv_hidden`` (K or V width,
    default h; GQA models have fewer), ``experts`` E and ``top_k`` k (MoE, every layer),
    ``micro_batches`` per step, ``mode``: ``train`` (forward + backward + gradient
    all-reduce), ``prefill`` (forward over s tokens) or ``decode`` (forward over one new
    token per sequence). ``tp_comm``: ``allreduce`` or ``rs_ag`` (sequence parallelism:
    a reduce-scatter and an all-gather instead of each all-reduce).
    """

    hidden: int
    seq_len: int
    layers: int
    micro_batch: int = 1
    bytes_per_element: float = 2.0
    params: float | None = None
    grad_bytes_per_element: float | None = None
    kv_hidden: int | None = None
    experts: int = 0
    top_k: int = 1
    micro_batches: int = 1
    mode: str = "train"
    tp_comm: str = "allreduce"

    def __post_init__(self) -> None:
        for key in ("hidden", "seq_len", "layers", "micro_batch", "top_k", "micro_batches"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InputError(f"transformer: {key} must be an integer >= 1, got {value!r}")
        if self.mode not in MODES:
            raise unknown_name("transformer mode", self.mode, MODES)
        if self.tp_comm not in ("allreduce", "rs_ag"):
            raise unknown_name("tp_comm", self.tp_comm, ("allreduce", "rs_ag"))
        if not self.bytes_per_element > 0:
            raise InputError(f"transformer: bytes_per_element must be > 0, got "
                             f"{self.bytes_per_element!r}")

    # -- derived quantities -----------------------------------------------------------
    @property
    def num_params(self) -> float:
        """P, or 12 L h^2 (attention 4 h^2 + MLP 8 h^2 per layer) when not given."""
        return float(self.params) if self.params else 12.0 * self.layers * self.hidden ** 2

    @property
    def passes(self) -> int:
        """Forward only (1) or forward + backward (2)."""
        return 2 if self.mode == "train" else 1

    def tokens(self, cp: int = 1) -> float:
        """Tokens a rank holds per micro-batch: b * s / cp (b / cp when decoding)."""
        return self.micro_batch * (1 if self.mode == "decode" else self.seq_len) / cp

    def activation_bytes(self, cp: int = 1) -> float:
        """b * s/cp * h * e: one layer's activations on a rank, bytes."""
        return self.tokens(cp) * self.hidden * self.bytes_per_element

    def workload(self, layout: ParallelLayout, algorithm: str = "ring",
                 overlap: bool = False) -> Workload:
        """The phases of one step on ``layout`` (degree-1 dimensions give none).

        With ``overlap`` the data-parallel gradient all-reduce runs in its own stream,
        concurrent with the rest of the step (overlap with the backward pass).
        """
        if self.layers % layout.pp:
            raise InputError(f"transformer: layers ({self.layers}) must divide by pp "
                             f"({layout.pp}), one equal share per pipeline stage")
        L_stage = self.layers // layout.pp
        per_mb = self.micro_batches * self.passes
        act = self.activation_bytes(layout.cp)
        e = self.bytes_per_element
        phases: list[Phase] = []
        if layout.tp > 1:
            count = _whole(2 * L_stage * per_mb, "tp collectives")
            if self.tp_comm == "allreduce":
                phases.append(Phase("tp-allreduce", "tp", "allreduce", act, algorithm, count))
            else:
                phases.append(Phase("tp-reducescatter", "tp", "reducescatter", act, algorithm,
                                    count))
                phases.append(Phase("tp-allgather", "tp", "allgather", act, algorithm, count))
        if layout.cp > 1:
            kv = self.kv_hidden or self.hidden
            full_seq = self.tokens(1) * 2 * kv / layout.tp * e       # K and V, whole sequence
            count = _whole(L_stage * self.micro_batches, "cp collectives")
            phases.append(Phase("cp-allgather", "cp", "allgather", full_seq, algorithm, count))
            if self.mode == "train":
                phases.append(Phase("cp-reducescatter", "cp", "reducescatter", full_seq,
                                    algorithm, count))
        if layout.ep > 1 and self.experts > 0:
            routed = self.tokens(layout.cp) * self.top_k * self.hidden * e
            count = _whole(L_stage * per_mb, "ep collectives")
            a2a = algorithm_for("alltoall", algorithm)
            phases.append(Phase("ep-dispatch", "ep", "alltoall", routed, a2a, count))
            phases.append(Phase("ep-combine", "ep", "alltoall", routed, a2a, count))
        if layout.pp > 1:
            phases.append(Phase("pp-sendrecv", "pp", "sendrecv", act / layout.tp, "direct",
                                self.micro_batches, both_ways=self.mode == "train"))
        if layout.dp > 1 and self.mode == "train":
            grad_e = self.grad_bytes_per_element or e
            grads = self.num_params / (layout.tp * layout.pp) * grad_e
            phases.append(Phase("dp-allreduce", "dp", "allreduce", grads, algorithm, 1,
                                stream="grad" if overlap else None))
        return Workload(tuple(phases), overlap=False, name=f"{self.mode} step")


def _whole(count: float, what: str) -> int:
    if abs(count - round(count)) > 1e-9 or round(count) < 1:
        raise InputError(f"transformer: {what} per step = {count:g} is not a whole number")
    return int(round(count))


# -- schedules of a step ---------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class StepSchedule:
    """The schedule of one step under one placement.

    ``placement`` covers the chips' ranks and any switch ranks the algorithms added
    (in-network reduction); ``multiplier[phase]`` turns a phase's simulated span into its
    time per step (``repeat`` with one stream, 1 when the copies are in the schedule);
    ``streams`` lists the phase names of each stream.
    """

    schedule: Schedule
    placement: np.ndarray
    phases: tuple[Phase, ...]
    multiplier: dict[str, float]
    streams: dict[str, list[str]]
    algorithms: dict[str, str] = field(default_factory=dict)

    @property
    def sequential(self) -> bool:
        return len(self.streams) <= 1


def _pipeline_sends(phase: Phase, layout: ParallelLayout) -> Schedule:
    """Stage j -> stage j+1 of every pipeline group (and back with ``both_ways``)."""
    groups = layout.group_array(phase.dim)
    src, dst = groups[:, :-1].ravel(), groups[:, 1:].ravel()
    if phase.both_ways:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    return sends_from_arrays(layout.num_ranks, src, dst, phase.size)


@functools.lru_cache(maxsize=4096)
def _group_schedule(op: str, name: str, n: int, size: float, chunks, gamma, topology,
                    nodes: tuple[int, ...]) -> Schedule:
    """One group's schedule on its own ranks, built once per (algorithm, group, nodes): a
    placement search evaluates thousands of placements that differ in a few groups only
    (schedules are immutable; the topology is keyed by identity). An algorithm whose
    schedule depends on the nodes only through its rank order (rings: ``order_only``) is
    built once per size in the natural order and relabelled by this group's order."""
    from ..algorithms import AlgoOptions, build_schedule, get_algorithm
    from ..algorithms.orders import rank_order

    options = AlgoOptions(chunks=chunks, gamma=gamma, topology=topology,
                          placement=np.asarray(nodes, dtype=np.int64),
                          extra={"annotate": False})
    if get_algorithm(op, name).order_only:
        order = rank_order(options.order, n, options)
        return _natural_schedule(op, name, n, size, chunks, gamma).relabel(order, n)
    return build_schedule(op, name, n, size, options)


@functools.lru_cache(maxsize=256)
def _natural_schedule(op: str, name: str, n: int, size: float, chunks, gamma) -> Schedule:
    """The schedule of an ``order_only`` algorithm in the natural rank order."""
    from ..algorithms import AlgoOptions, build_schedule

    return build_schedule(op, name, n, size, AlgoOptions(chunks=chunks, gamma=gamma,
                                                         order="natural",
                                                         extra={"annotate": False}))


def phase_schedule(phase: Phase, topology, layout: ParallelLayout, placement: np.ndarray,
                   algorithm: str | None = None, size: float | None = None,
                   first_extra_rank: int | None = None, gamma: float | None = None,
                   groups: np.ndarray | None = None) -> tuple[Schedule, list[int]]:
    """Every group of ``phase.dim`` running the phase at once, on global ranks, tagged
    with the phase name; and the nodes of the switch ranks it added (in order).

    Each group's schedule is built by the registry with the group's nodes as placement
    (so topology-aware algorithms see where their ranks are), then relabelled. ``size``
    overrides the phase's bytes; ``gamma`` is the reduction rate of a rank (bytes/s, None:
    free); ``groups`` (rows of ``layout.group_array(phase.dim)``) runs only those groups,
    as one pipeline stage does.
    """
    size = phase.size if size is None else size
    if phase.op == "sendrecv":
        return _pipeline_sends(replace(phase, size=size), layout).with_tag(phase.name), []
    name = algorithm or phase.algorithm
    next_rank = layout.num_ranks if first_extra_rank is None else first_extra_rank
    parts, extra_nodes = [], []
    for group in (layout.group_array(phase.dim) if groups is None else groups):
        sched = _group_schedule(phase.op, name, int(group.size), float(size), phase.chunks,
                                gamma, topology,
                                tuple(np.asarray(placement)[group].tolist()))
        extra = list(sched.extra_nodes)
        mapping = np.concatenate([group, np.arange(next_rank, next_rank + len(extra))])
        parts.append(sched.relabel(mapping, max(next_rank + len(extra), layout.num_ranks)))
        extra_nodes += extra
        next_rank += len(extra)
    return concurrent(*parts).with_tag(phase.name), extra_nodes


def build_step(topology, layout: ParallelLayout, workload: Workload, placement: Sequence[int],
               algorithms: dict[str, str] | None = None,
               max_copies: int = DEFAULT_MAX_COPIES, gamma: float | None = None
               ) -> StepSchedule:
    """The step of ``workload`` with rank r on node ``placement[r]``, as one schedule.

    ``algorithms`` maps phase names to the algorithm to use (needed for phases whose
    algorithm is ``'auto'``); ``gamma`` is the reduction rate of a rank (bytes/s, None:
    free). See the module docstring for streams and repeats.
    """
    placement = np.asarray(placement, dtype=np.int64)
    layout.check_fits(placement.size, "the placement")
    work = workload.active(layout)
    if not work.phases:
        raise InputError(f"workload {workload.name!r}: no phase moves data on layout "
                         f"{layout.describe()}")
    chosen = {p.name: (algorithms or {}).get(p.name, p.algorithm) for p in work.phases}
    auto = [n for n, a in chosen.items() if a == "auto"]
    if auto:
        raise InputError(f"phase {auto[0]!r}: algorithm 'auto' must be resolved first "
                         f"(netsim.placement.evaluate resolves it)")
    streams = work.streams()
    expand = len(streams) > 1
    extra_nodes: list[int] = []
    chains, multiplier = [], {}
    for phases in streams.values():
        steps = []
        for phase in phases:
            copies = min(phase.repeat, max(1, int(max_copies))) if expand else 1
            size = phase.size * phase.repeat / copies if expand else phase.size
            sched, extra = phase_schedule(phase, topology, layout, placement,
                                          chosen[phase.name], size,
                                          layout.num_ranks + len(extra_nodes), gamma)
            extra_nodes += extra
            steps += [sched] * copies
            multiplier[phase.name] = 1.0 if expand else float(phase.repeat)
        chains.append(sequential(*steps) if len(steps) > 1 else steps[0])
    schedule = concurrent(*chains) if len(chains) > 1 else chains[0]
    full = np.concatenate([placement, np.asarray(extra_nodes, dtype=np.int64)])
    return StepSchedule(schedule, full, work.phases, multiplier,
                        {s: [p.name for p in ps] for s, ps in streams.items()}, chosen)
