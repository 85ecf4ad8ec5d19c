"""One training step of a parallel layout as ONE netsim schedule, and its memory per chip.

A :class:`TrainLayout` is a split of the chips (``tp x cp x ep x dp x pp``, ranks numbered
as :class:`~netsim.placement.layout.ParallelLayout` does) with the micro-batch size, the
global batch (sequences), the ZeRO stage (0-3; 3 is FSDP) and activation recomputation.
Experts are carved out of the data dimension, as in Megatron-core: a step's sequences are
split over ``dp x ep`` data ranks, and each data rank runs ``micro_batches = batch / (dp x ep
x micro_batch)`` micro-batches.

:func:`build_train_step` turns a model, a layout, a machine and a placement into a schedule:

* per pipeline stage, micro-batch and pass (forward, backward) a *block*: one compute op on
  every chip of the stage (a roofline: FLOPs over peak x :data:`COMPUTE_EFFICIENCY` against
  bytes over memory bandwidth, :func:`block_seconds`), then the collectives of the block,
  in sequence (on the critical path: a layer waits for its tensor-parallel reduction):
  tensor parallel (all-reduce, or reduce-scatter + all-gather with sequence parallelism),
  context parallel (all-gather of K and V forward, reduce-scatter backward), expert parallel
  (all-to-all dispatch and combine). The collectives of all layers of the stage are one
  collective of their summed bytes (bytes exact, per-message latency counted once per block;
  ``docs/plan.md``). Collectives are built by the registry for each group's nodes, as
  ``netsim place`` builds them (:func:`netsim.placement.workload.phase_schedule`);
* pipeline hand-offs (send/recv between the peers of adjacent stages) between blocks;
* the 1F1B order: stage ``s`` runs ``min(p - s - 1, m)`` forwards, then alternates one
  forward and one backward, then drains its backwards; a forward waits for the previous
  stage's hand-off, a backward for the next stage's. The bubble is what the simulation
  gives, not a formula;
* data parallel: the gradient reduction of a stage (all-reduce at ZeRO 0, reduce-scatter
  above) starts with the stage's last backward and runs beside it (overlapped with the
  backward pass, as Megatron's ``--overlap-grad-reduce``); at ZeRO 1-2 the updated
  parameters' all-gather runs beside the stage's first forward (overlapped with the
  forward, ``--overlap-param-gather``); at ZeRO 3 every block also all-gathers the
  stage's parameters beside its compute (prefetch) and cannot end before it.

:func:`memory_per_chip` counts weights, gradients, Adam state (16 B per parameter at ZeRO
0: bf16 weights and gradients, fp32 master, momentum and variance) and activations.

>>> from netsim.planning.models import load_model
>>> from netsim.topology import parse_topology
>>> m = load_model("llama3-8b")
>>> lay = TrainLayout(tp=2, pp=2, dp=2, batch=8)
>>> lay.micro_batches
4
>>> step = build_train_step(m, lay, parse_topology("dgx-h100"))
>>> step.schedule.num_ranks, len(step.blocks)
(8, 16)
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ..errors import InputError, unknown_name
from ..placement.layout import DIMENSIONS, ParallelLayout
from ..placement.workload import Phase, algorithm_for, phase_schedule
from ..schedule import BARRIER, Schedule, ScheduleBuilder, sends_from_arrays
from ..schedule.ir import roots_wait_for
from .models import ModelSpec

__all__ = ["algorithm_of", "TrainLayout", "parse_train_layout", "Chip", "chip_of",
           "memory_per_chip", "block_seconds", "build_train_step", "TrainStep",
           "StepBreakdown", "breakdown", "block_collectives", "handoff_bytes", "dp_bytes",
           "step_phases", "collective_times", "COMPUTE_EFFICIENCY", "MEMORY_USABLE",
           "ACTIVATION_FACTOR"]

#: Fraction of the dense peak that a transformer block's compute sustains (matrix products
#: with their element-wise work, kernel launches, the optimizer step). FITTED: one number
#: for the five Megatron-LM runs of ``benchmarks/training/megatron.csv`` (A100, 1.7B
#: to 39B parameters), with the network simulated: mean error 3.7%, max 8.4%
#: (``benchmarks/bench_plan.py``; 0.6 would overstate them by 17-28%). See ``docs/plan.md``.
COMPUTE_EFFICIENCY = 0.5
#: Fraction of a chip's memory a job may fill (the rest: runtime, communication buffers,
#: fragmentation).
MEMORY_USABLE = 0.9
#: Activation bytes stored per token and hidden unit of one layer, over the tensor-parallel
#: degree: Korthikanti et al. 2022 (arXiv:2205.05198) eq. 2 with sequence parallelism, 34
#: s b h / t, without the 5 a s / h term of the attention matrix (flash attention keeps none).
ACTIVATION_FACTOR = 34.0
#: Adam with mixed precision: bf16 weights (2) and gradients (2), fp32 master weights,
#: momentum and variance (12), bytes per parameter.
WEIGHT_BYTES, GRAD_BYTES, OPTIMIZER_BYTES = 2.0, 2.0, 12.0


# -- layout ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class TrainLayout:
    """Degrees, micro-batch size (sequences), global batch (sequences), ZeRO stage and
    recomputation; see the module docstring."""

    tp: int = 1
    cp: int = 1
    ep: int = 1
    dp: int = 1
    pp: int = 1
    batch: int = 1
    micro_batch: int = 1
    zero: int = 1
    recompute: bool = False
    virtual: int = 1          # model chunks per pipeline stage (interleaved 1F1B)

    def __post_init__(self) -> None:
        for key in (*DIMENSIONS, "batch", "micro_batch", "virtual"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise InputError(f"layout: {key} must be an integer >= 1, got {value!r}")
        if self.zero not in (0, 1, 2, 3):
            raise InputError(f"layout: zero must be 0, 1, 2 or 3, got {self.zero!r}")
        if self.batch % (self.dp * self.ep * self.micro_batch):
            raise InputError(f"layout: batch {self.batch} does not split into micro-batches "
                             f"of {self.micro_batch} over dp x ep = {self.dp * self.ep} data "
                             f"ranks")
        if self.virtual > 1 and (self.pp == 1 or self.micro_batches % self.pp):
            raise InputError(f"layout: vp={self.virtual} (interleaved 1F1B) needs pp > 1 and "
                             f"micro-batches ({self.micro_batches}) divisible by pp "
                             f"({self.pp})")

    @property
    def chips(self) -> int:
        return self.tp * self.cp * self.ep * self.dp * self.pp

    @property
    def micro_batches(self) -> int:
        return self.batch // (self.dp * self.ep * self.micro_batch)

    def parallel(self) -> ParallelLayout:
        return ParallelLayout(tp=self.tp, cp=self.cp, ep=self.ep, dp=self.dp, pp=self.pp)

    def describe(self) -> str:
        """``tp=8 pp=4 dp=8 mb=1 zero=1`` (degree-1 dimensions left out; ``rc`` with
        recomputation)."""
        dims = " ".join(f"{d}={getattr(self, d)}" for d in DIMENSIONS if getattr(self, d) > 1)
        return (f"{dims or 'dp=1'}" + (f" vp={self.virtual}" if self.virtual > 1 else "")
                + f" mb={self.micro_batch} zero={self.zero}"
                + (" rc" if self.recompute else ""))


_LAYOUT_KEYS = (*DIMENSIONS, "vp", "mb", "zero", "recompute")


def parse_train_layout(text: str, *, batch: int, chips: int | None = None) -> TrainLayout:
    """``'tp=8,pp=4,dp=8,mb=1,zero=1,recompute=0'`` -> a :class:`TrainLayout` (one-line
    errors). A missing ``dp`` fills the chips; the product must equal ``chips`` when given.

    >>> parse_train_layout("tp=8,pp=4", batch=64, chips=256).describe()
    'tp=8 dp=8 pp=4 mb=1 zero=1'
    """
    values: dict[str, int] = {}
    for token in re.split(r"[,\s]+", text.strip()):
        if not token:
            continue
        key, eq, raw = token.partition("=")
        key = key.strip().lower()
        if key not in _LAYOUT_KEYS:
            raise unknown_name("layout key", key, _LAYOUT_KEYS)
        try:
            values[key] = int(raw)
        except ValueError:
            raise InputError(f"--layout {token!r}: expected KEY=INTEGER") from None
    degrees = {d: values.get(d, 1) for d in DIMENSIONS}
    if any(values.get(k, 1) < 1 for k in (*DIMENSIONS, "vp", "mb")):
        raise InputError(f"--layout {text!r}: degrees, vp and mb must be >= 1")
    if chips is not None:
        rest = math.prod(v for d, v in degrees.items() if d != "dp")
        if "dp" not in values:
            if chips % rest:
                raise InputError(f"--layout {text!r}: tp x cp x ep x pp = {rest} does not "
                                 f"divide the {chips} chips")
            degrees["dp"] = chips // rest
        if math.prod(degrees.values()) != chips:
            raise InputError(f"--layout {text!r}: the degrees multiply to "
                             f"{math.prod(degrees.values())}, not to the {chips} chips")
    return TrainLayout(**degrees, batch=batch, micro_batch=values.get("mb", 1),
                       zero=values.get("zero", 1), recompute=bool(values.get("recompute", 0)),
                       virtual=values.get("vp", 1))


# -- the chip ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Chip:
    """Dense FLOP/s of the model's dtype, memory (bytes) and memory bandwidth (bytes/s)."""

    name: str
    flops: float
    memory: float
    memory_bandwidth: float


def chip_of(topology, dtype: str = "bf16") -> Chip:
    """The preset's ``chip:`` figures (one line if the machine has none)."""
    chip = (getattr(topology, "meta", None) or {}).get("chip")
    where = (topology.meta or {}).get("source_file", topology.name)
    if not chip:
        raise InputError(f"{where}: no chip: block (compute and memory figures): the planner "
                         f"needs bf16, memory and memory_bandwidth of the chip")
    key = "fp8" if dtype == "fp8" else "bf16"
    if not chip.get(key):
        raise InputError(f"{where}: chip.{key}: the chip has no {key} figure")
    return Chip(str(chip.get("name", topology.name)), float(chip[key]), float(chip["memory"]),
                float(chip["memory_bandwidth"]))


# -- memory ------------------------------------------------------------------------------------

def _params_per_chip(model: ModelSpec, lay: TrainLayout) -> float:
    """The parameters of the busiest chip: its stage's share of the layers and one
    embedding matrix (both at pp=1), over tp; routed experts also over ep."""
    ends = model.embedding_params if lay.pp == 1 else model.vocab * model.hidden
    dense = (model.layer_params / lay.pp + ends) / lay.tp
    return dense + model.expert_params / (lay.pp * lay.ep * lay.tp)


def _layer_activation_bytes(model: ModelSpec, lay: TrainLayout) -> float:
    """One layer's stored activations for one micro-batch on one chip (bytes)."""
    tokens = lay.micro_batch * model.seq_len / lay.cp
    full = ACTIVATION_FACTOR * tokens * model.hidden / lay.tp
    return full


def memory_per_chip(model: ModelSpec, lay: TrainLayout) -> dict[str, float]:
    """Bytes on the busiest chip: ``weights``, ``grads``, ``optimizer`` (sharded over dp
    from ZeRO 3, 2 and 1 on), ``activations`` (1F1B keeps ``min(pp, m)`` micro-batches in
    flight on the first stage, interleaved 1F1B its warm-up chunks; with recomputation a layer keeps its 2-byte input only, plus
    one layer's working set) and ``total``."""
    p = _params_per_chip(model, lay)
    weights = WEIGHT_BYTES * p / (lay.dp if lay.zero >= 3 else 1)
    grads = GRAD_BYTES * p / (lay.dp if lay.zero >= 2 else 1)
    optimizer = OPTIMIZER_BYTES * p / (lay.dp if lay.zero >= 1 else 1)
    layers = model.layers / lay.pp
    per_layer = _layer_activation_bytes(model, lay)
    inflight = min(lay.pp, lay.micro_batches)
    if lay.virtual > 1:
        # interleaved: the first stage warms up (p - 1) 2 + (v - 1) p chunks of 1/v
        # of its layers before its first backward
        chunks = min((lay.pp - 1) * 2 + (lay.virtual - 1) * lay.pp + 1,
                     lay.micro_batches * lay.virtual)
        inflight = chunks / lay.virtual
    if lay.recompute:
        kept = 2.0 * lay.micro_batch * model.seq_len / lay.cp * model.hidden / lay.tp
        activations = inflight * layers * kept + per_layer
    else:
        activations = inflight * layers * per_layer
    total = weights + grads + optimizer + activations
    return {"weights": weights, "grads": grads, "optimizer": optimizer,
            "activations": activations, "total": total}


# -- compute ------------------------------------------------------------------------------------

def _stage_forward_flops(model: ModelSpec, lay: TrainLayout, last: bool) -> float:
    """Forward FLOPs of one micro-batch on one chip of a stage (the last stage also runs
    the output layer): a third of :meth:`ModelSpec.flops_per_token` per layer."""
    tokens = lay.micro_batch * model.seq_len
    per_layer = (model.flops_per_token() - 6.0 * _head_params(model)) / 3.0 / model.layers
    flops = per_layer * model.layers / lay.pp * tokens
    if last:
        flops += 2.0 * _head_params(model) * tokens
    return flops / (lay.tp * lay.cp)


def _head_params(model: ModelSpec) -> float:
    return float(model.vocab * model.hidden)


def block_seconds(model: ModelSpec, lay: TrainLayout, chip: Chip, *, last: bool = False,
                  efficiency: float = COMPUTE_EFFICIENCY) -> tuple[float, float]:
    """(forward, backward) compute seconds of one micro-batch on one chip of a stage: the
    roofline max(FLOPs / (peak x efficiency), bytes / memory bandwidth); bytes are the
    stage's weights read once and its activations written once per pass. Backward is
    twice the forward, plus one forward with recomputation."""
    flops = _stage_forward_flops(model, lay, last)
    weight_bytes = WEIGHT_BYTES * _params_per_chip(model, lay)
    act_bytes = _layer_activation_bytes(model, lay) * model.layers / lay.pp
    fwd = max(flops / (chip.flops * efficiency), (weight_bytes + act_bytes)
              / chip.memory_bandwidth)
    bwd = 2.0 * fwd + (fwd if lay.recompute else 0.0)
    return fwd, bwd


# -- the collectives of a block ---------------------------------------------------------------

def algorithm_of(op: str, algorithm: str, topology=None) -> str:
    """The algorithm a collective ``op`` runs: ``'default'`` is what the machine's library
    runs (its preset's ``library:`` block: NCCL's model on NVIDIA presets, tt-metal's CCLs
    on Tenstorrent ones), or ``ring`` where it names none or ``auto`` (the planner does not
    search algorithms per collective); all-to-all and send/recv have no ring: ``direct``."""
    from ..run.library import phase_algorithm

    return algorithm_for(op, phase_algorithm(op, topology, algorithm))


def block_collectives(model: ModelSpec, lay: TrainLayout
                      ) -> dict[bool, list[tuple[str, str, str, float]]]:
    """Forward (True) and backward (False) block -> its collectives in order: (name, dim,
    op, bytes with the nccl-tests meaning of op), summed over the stage's layers."""
    e = model.bytes_per_element
    layers = model.layers / (lay.pp * lay.virtual)       # one model chunk's layers
    tokens = lay.micro_batch * model.seq_len            # per data rank and micro-batch
    act = tokens / lay.cp * model.hidden * e            # one layer's activations
    kv_width = model.kv * model.dim_head
    moe_layers = model.moe_layers / (lay.pp * lay.virtual)
    per_pass: dict[bool, list[tuple[str, str, str, float]]] = {True: [], False: []}
    for fwd in (True, False):
        if lay.tp > 1:
            # Sequence parallel: an all-gather and a reduce-scatter per sub-layer
            # (attention, MLP), 2 per layer each way (Korthikanti et al. 2022).
            per_pass[fwd] += [("tp-allgather", "tp", "allgather", 2 * layers * act),
                              ("tp-reducescatter", "tp", "reducescatter", 2 * layers * act)]
        if lay.cp > 1:
            kv = tokens * 2 * kv_width / lay.tp * e * layers       # K and V, whole sequence
            per_pass[fwd].append(("cp-allgather", "cp", "allgather", kv) if fwd
                                 else ("cp-reducescatter", "cp", "reducescatter", kv))
        if lay.ep > 1 and model.moe and moe_layers:
            routed = tokens / lay.cp * model.top_k * model.hidden * e / lay.tp
            per_pass[fwd].append(("ep-alltoall", "ep", "alltoall", 2 * moe_layers * routed))
    return per_pass


def handoff_bytes(model: ModelSpec, lay: TrainLayout) -> float:
    """Bytes a chip sends the next stage per micro-batch: its sequence-parallel shard of
    the activations."""
    tokens = lay.micro_batch * model.seq_len / lay.cp
    return tokens * model.hidden * model.bytes_per_element / lay.tp


def dp_bytes(model: ModelSpec, lay: TrainLayout) -> tuple[float, float]:
    """(gradient bytes reduced, parameter bytes gathered) per chip over dp."""
    p = _params_per_chip(model, lay)
    return GRAD_BYTES * p, WEIGHT_BYTES * p


def step_phases(model: ModelSpec, lay: TrainLayout, algorithm: str = "default",
                topology=None) -> list[Phase]:
    """The step's collectives as :class:`~netsim.placement.workload.Phase` objects (one
    occurrence each, ``repeat`` per step), for the placement search of ``netsim place``
    and for :func:`collective_times`."""
    m = lay.micro_batches * lay.virtual                  # blocks per pass and stage
    phases: dict[str, Phase] = {}
    for fwd, items in block_collectives(model, lay).items():
        for name, dim, op, size in items:
            if name in phases:
                old = phases[name]
                phases[name] = replace(old, repeat=old.repeat + m)
            else:
                phases[name] = Phase(name, dim, op, size,
                                     algorithm_of(op, algorithm, topology), m)
    if lay.pp > 1:
        phases["pp-sendrecv"] = Phase("pp-sendrecv", "pp", "sendrecv",
                                      handoff_bytes(model, lay), "direct", m, both_ways=True)
    if lay.dp > 1:
        grads, params = dp_bytes(model, lay)
        m = lay.micro_batches
        op = "allreduce" if lay.zero == 0 else "reducescatter"
        phases[f"dp-{op}"] = Phase(f"dp-{op}", "dp", op, grads,
                                   algorithm_of(op, algorithm, topology), 1)
        if lay.zero >= 1:
            phases["dp-allgather"] = Phase("dp-allgather", "dp", "allgather", params,
                                           algorithm_of("allgather", algorithm, topology),
                                           1 if lay.zero < 3 else 2 * m)
    return list(phases.values())


def collective_times(topology, lay: TrainLayout, phases: Sequence[Phase], placement,
                     *, router=None, overhead: float = 0.0, gamma: float | None = None,
                     engine=None) -> dict[str, float]:
    """Phase name -> seconds of one occurrence, simulated with every group of its
    dimension (all stages) running it at once: the contention of the pipeline's steady
    state, where every stage runs the same block. ``engine``: the engine's
    :class:`~netsim.engine.config.EngineConfig` (None: its defaults)."""
    from ..engine import simulate
    from ..run.placed import fabric_topology

    par = lay.parallel()
    placement = np.asarray(placement, dtype=np.int64)
    out = {}
    for phase in phases:
        sched, extra = phase_schedule(phase, topology, par, placement, gamma=gamma)
        full = np.concatenate([placement, np.asarray(extra, dtype=np.int64)])
        out[phase.name] = float(simulate(fabric_topology(topology, sched), sched, full,
                                         router=router, overhead=overhead,
                                         config=engine).makespan)
    return out


# -- the schedule ----------------------------------------------------------------------------

class _Dag:
    """A schedule grown block by block: each block (a schedule on global ranks) starts
    after given ops and ends in a barrier; returns op ids."""

    def __init__(self, num_ranks: int) -> None:
        self.num_ranks = num_ranks
        self.cols: dict[str, list] = {k: [] for k in ("kind", "src", "dst", "nbytes",
                                                      "seconds", "tag", "counts", "deps")}
        self.tags: dict[str, int] = {}
        self.n = 0
        self.extra_nodes: list[int] = []

    def _push(self, kind, src, dst, nbytes, seconds, tag, counts, deps) -> None:
        for key, value in (("kind", kind), ("src", src), ("dst", dst), ("nbytes", nbytes),
                           ("seconds", seconds), ("tag", tag), ("counts", counts),
                           ("deps", deps)):
            self.cols[key].append(np.asarray(value))

    def barrier(self, after: Sequence[int]) -> int:
        after = np.asarray(sorted(set(int(a) for a in after)), dtype=np.int64)
        self._push([BARRIER], [-1], [-1], [0.0], [0.0], [-1], [after.size], after)
        self.n += 1
        return self.n - 1

    def block(self, sched: Schedule, after: Sequence[int]) -> tuple[int, int]:
        """Add ``sched`` after ``after``: (start barrier id, end barrier id)."""
        start = self.barrier(after)
        offset = self.n
        counts, deps = roots_wait_for(np.diff(sched.dep_ptr), sched.dep_idx + offset, start)
        tag_map = np.array([self.tags.setdefault(t, len(self.tags)) for t in sched.tags] + [-1],
                           dtype=np.int64)
        self._push(sched.kind, sched.src, sched.dst, sched.nbytes, sched.seconds,
                   tag_map[sched.tag], counts, deps)
        self.n += sched.num_ops
        has_dependant = np.zeros(sched.num_ops, dtype=bool)
        has_dependant[sched.dep_idx] = True
        sinks = np.flatnonzero(~has_dependant) + offset
        end = self.barrier(sinks.tolist())
        return start, end

    def build(self) -> Schedule:
        c = self.cols
        counts = np.concatenate(c["counts"]).astype(np.int64)
        dep_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        dep_idx = np.concatenate(c["deps"]).astype(np.int64)
        return Schedule(num_ranks=self.num_ranks + len(self.extra_nodes),
                        kind=np.concatenate(c["kind"]).astype(np.int8),
                        src=np.concatenate(c["src"]).astype(np.int64),
                        dst=np.concatenate(c["dst"]).astype(np.int64),
                        nbytes=np.concatenate(c["nbytes"]).astype(np.float64),
                        seconds=np.concatenate(c["seconds"]).astype(np.float64),
                        dep_ptr=dep_ptr, dep_idx=dep_idx,
                        tag=np.concatenate(c["tag"]).astype(np.int64),
                        tags=tuple(self.tags), extra_nodes=tuple(self.extra_nodes))


@dataclass(frozen=True)
class Block:
    """One (stage, micro-batch, pass) of the step: op ids of its barriers. ``comm`` maps a
    split (tp, cp, ep) to the (start, end) barriers of its collective; ``recv`` the
    (start, end) of the hand-off it waited for, if any."""

    stage: int
    micro: int
    forward: bool
    start: int
    compute_end: int
    end: int
    comm: dict[str, tuple[int, int]]
    recv: tuple[int, int] | None
    compute_s: float
    chain_end: int = -1        # end of the compute and collectives (before ZeRO-3 gathers)


@dataclass(eq=False)
class TrainStep:
    """The schedule of one step, the placement of its ranks (chips, then any switch ranks
    the algorithms added), its blocks, and each stage's data-parallel (start, end)
    barriers and final barrier."""

    schedule: Schedule
    placement: np.ndarray
    blocks: list[Block]
    dp_spans: dict[int, list[tuple[int, int]]]
    stage_end: dict[int, int]
    layout: TrainLayout
    algorithms: dict[str, str] = field(default_factory=dict)


def _stage_groups(lay: ParallelLayout, dim: str, stage: int) -> np.ndarray:
    """The groups of ``dim`` whose ranks are in pipeline stage ``stage``."""
    groups = lay.group_array(dim)
    pp_coord = lay.coordinate_table["pp"]
    return groups[pp_coord[groups[:, 0]] == stage]


def _one_f_one_b(stage: int, p: int, m: int) -> list[tuple[int, bool]]:
    """Stage ``stage``'s order of (micro-batch, forward?) under 1F1B."""
    warm = min(p - stage - 1, m)
    order = [(i, True) for i in range(warm)]
    for i in range(m - warm):
        order += [(warm + i, True), (i, False)]
    order += [(i, False) for i in range(m - warm, m)]
    return order


def _interleaved(stage: int, p: int, m: int, v: int) -> list[tuple[int, int, bool]]:
    """Stage ``stage``'s order of (micro-batch, chunk, forward?) under interleaved 1F1B
    (Narayanan et al. 2021, section 2.2.2; Megatron-core's order): micro-batches go
    through the ``v`` chunks of a stage in groups of ``p``; ``(p - stage - 1) x 2 +
    (v - 1) x p`` forwards warm up, then one forward and one backward alternate."""
    total = m * v

    def item(k: int, forward: bool) -> tuple[int, int, bool]:
        chunk = (k % (p * v)) // p
        return (k // (p * v)) * p + k % p, chunk if forward else v - 1 - chunk, forward

    warm = min((p - stage - 1) * 2 + (v - 1) * p, total)
    order = [item(k, True) for k in range(warm)]
    for k in range(total - warm):
        order += [item(warm + k, True), item(k, False)]
    order += [item(k, False) for k in range(total - warm, total)]
    return order


def build_train_step(model: ModelSpec, lay: TrainLayout, topology,
                     placement: Sequence[int] | None = None, *, chip: Chip | None = None,
                     algorithm: str = "default", efficiency: float = COMPUTE_EFFICIENCY,
                     gamma: float | None = None, timed: dict[str, float] | None = None
                     ) -> TrainStep:
    """The step of ``model`` on ``topology`` under ``lay`` with rank r on endpoint
    ``placement[r]`` (default: rank r on endpoint r) as one schedule; see the module
    docstring. ``algorithm`` is the collectives' (:func:`algorithm_of`: ``'default'`` is
    the machine library's).

    ``timed`` (collective name -> seconds, from :func:`collective_times`) builds the same
    step with each collective and hand-off replaced by its simulated time, and one rank
    per stage standing for the stage: the fast form the planner ranks layouts with."""
    chip = chip or chip_of(topology, model.dtype)
    par = lay.parallel()
    par.check_fits(topology.num_endpoints, repr(topology.name))
    placement = np.arange(par.num_ranks, dtype=np.int64) if placement is None \
        else np.asarray(placement, dtype=np.int64)
    p, m = lay.pp, lay.micro_batches
    dag = _Dag(par.num_ranks)
    algos: dict[str, str] = {}

    stage_ranks = [np.flatnonzero(par.coordinate_table["pp"] == s) for s in range(p)]

    def timed_op(name: str, stage: int) -> Schedule:
        b = ScheduleBuilder(par.num_ranks)
        b.compute(int(stage_ranks[stage][0]), float(timed[name]), tag=name)
        return b.build()

    def collective(name: str, dim: str, op: str, size: float, stage: int) -> Schedule:
        if timed is not None:
            return timed_op(name, stage)
        algo = algorithm_of(op, algorithm, topology)
        algos[name] = algo
        phase = Phase(name, dim, op, size, algorithm=algo)
        sched, extra = phase_schedule(phase, topology, par, placement, algo, size,
                                      par.num_ranks + len(dag.extra_nodes), gamma,
                                      groups=_stage_groups(par, dim, stage))
        dag.extra_nodes += extra
        return sched

    per_pass = block_collectives(model, lay)
    fwd_s, bwd_s = block_seconds(model, lay, chip, efficiency=efficiency)
    fwd_last, bwd_last = block_seconds(model, lay, chip, last=True, efficiency=efficiency)
    v = lay.virtual
    # a chunk is 1/v of the stage; the output layer stays whole on the last chunk
    fwd_head, bwd_head = fwd_last - fwd_s, bwd_last - bwd_s
    fwd_s, bwd_s = fwd_s / v, bwd_s / v
    fwd_last, bwd_last = fwd_s + fwd_head, bwd_s + bwd_head
    n_virtual = p * v
    def compute(stage: int, seconds: float) -> Schedule:
        b = ScheduleBuilder(par.num_ranks)
        # timed: the ranks of a stage do the same work; one stands for them all
        for r in (stage_ranks[stage][:1] if timed is not None else stage_ranks[stage]).tolist():
            b.compute(r, seconds, tag="compute")
        return b.build()

    pp_groups = par.group_array("pp")
    handoff = handoff_bytes(model, lay)

    def send(vs: int, forward: bool) -> Schedule:
        """The hand-off from virtual stage ``vs`` to the next (or previous) one."""
        here, there = vs % p, (vs + 1 if forward else vs - 1) % p
        if timed is not None:
            return timed_op("pp-sendrecv", there)
        return sends_from_arrays(par.num_ranks, pp_groups[:, here], pp_groups[:, there],
                                 handoff, tag="pp-sendrecv")

    grads, params = dp_bytes(model, lay)
    orders = [[(i, 0, f) for i, f in _one_f_one_b(s, p, m)] if v == 1
              else _interleaved(s, p, m, v) for s in range(p)]
    position = [0] * p
    prev_end: list[int | None] = [None] * p
    sent: dict[tuple[int, int, bool], tuple[int, int]] = {}   # (stage, micro, fwd) -> send
    done_fwd: dict[tuple[int, int], int] = {}
    blocks: list[Block] = []
    dp_spans: dict[int, list[tuple[int, int]]] = {s: [] for s in range(p)}
    gathers: dict[int, int] = {}
    # Walk the stages round-robin, adding each stage's next block once its inputs exist.
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(p):
            if position[s] >= len(orders[s]):
                continue
            i, chunk, fwd = orders[s][position[s]]
            vs = chunk * p + s                       # the virtual stage (model chunk)
            if fwd:
                recv = sent.get((vs - 1, i, True)) if vs > 0 else None
                if vs > 0 and recv is None:
                    continue
            else:
                if vs < n_virtual - 1:
                    recv = sent.get((vs + 1, i, False))
                    if recv is None:
                        continue
                else:
                    recv = None
            after = [x for x in (prev_end[s], recv[1] if recv else None) if x is not None]
            if not fwd:
                after.append(done_fwd[(vs, i)])
            last_backward = (not fwd) and position[s] == len(orders[s]) - 1
            seconds = (fwd_last if fwd else bwd_last) if vs == n_virtual - 1 else \
                (fwd_s if fwd else bwd_s)
            start, compute_end = dag.block(compute(s, seconds), after)
            if lay.zero == 1 or lay.zero == 2:
                if fwd and position[s] == 0 and lay.dp > 1:
                    gathers[s] = dag.block(collective("dp-allgather", "dp", "allgather",
                                                      params, s), [start])[1]
            if last_backward and lay.dp > 1:
                op = "allreduce" if lay.zero == 0 else "reducescatter"
                dp_spans[s].append(dag.block(collective(f"dp-{op}", "dp", op, grads, s),
                                             [start]))
            ends = []
            if lay.zero == 3 and lay.dp > 1:
                ends.append(dag.block(collective("dp-allgather", "dp", "allgather", params,
                                                 s), [start])[1])
            comm: dict[str, tuple[int, int]] = {}
            tail = compute_end
            for name, dim, op, size in per_pass[fwd]:
                span = dag.block(collective(name, dim, op, size, s), [tail])
                comm[name] = span
                tail = span[1]
            end = dag.barrier([tail, *ends])
            blocks.append(Block(s, i, fwd, start, compute_end, end, comm, recv, seconds,
                                tail))
            if fwd:
                done_fwd[(vs, i)] = end
            if fwd and vs < n_virtual - 1:
                sent[(vs, i, True)] = dag.block(send(vs, True), [end])
            if not fwd and vs > 0:
                sent[(vs, i, False)] = dag.block(send(vs, False), [end])
            prev_end[s] = end
            position[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:                       # cannot happen with a valid 1F1B order
            raise InputError("planner: the pipeline order deadlocked")
    stage_end = {}
    for s in range(p):
        last = [prev_end[s], *(e for _, e in dp_spans[s])]
        if s in gathers:
            last.append(gathers[s])
        stage_end[s] = dag.barrier([x for x in last if x is not None])
    full = np.concatenate([placement, np.asarray(dag.extra_nodes, dtype=np.int64)])
    return TrainStep(dag.build(), full, blocks, dp_spans, stage_end, lay, algos)


# -- reading a simulation -----------------------------------------------------------------------

@dataclass
class StepBreakdown:
    """A simulated step split on its critical stage: ``compute_s``, ``exposed`` (split ->
    seconds the stage waited on it: tp, cp, ep collectives, pp hand-offs, dp after the
    last backward), ``bubble_s`` (the rest: idle in the pipeline's fill and drain)."""

    step_s: float
    compute_s: float
    exposed: dict[str, float]
    bubble_s: float
    stage: int

    def record(self) -> dict[str, Any]:
        row = {"step_s": self.step_s, "compute_s": self.compute_s}
        row.update({f"{k}_s": v for k, v in sorted(self.exposed.items())})
        row["bubble_s"] = self.bubble_s
        return row


def breakdown(step: TrainStep, result) -> StepBreakdown:
    """Split the simulated step (``result``) on the stage with the most work."""
    fin = result.op_finish
    best = None
    for s in range(step.layout.pp):
        compute = 0.0
        exposed: dict[str, float] = {}
        previous_end = 0.0
        for b in (b for b in step.blocks if b.stage == s):
            compute += b.compute_s
            for name, (a, z) in b.comm.items():
                split = name.split("-")[0]
                exposed[split] = exposed.get(split, 0.0) + float(fin[z] - fin[a])
            if b.chain_end >= 0 and fin[b.end] > fin[b.chain_end]:
                # a ZeRO-3 parameter gather that outlasted the block's own work
                exposed["dp"] = exposed.get("dp", 0.0) + float(fin[b.end] - fin[b.chain_end])
            if b.recv is not None:
                waited = float(fin[b.start] - previous_end)
                if waited > 0 and fin[b.recv[1]] >= fin[b.start] - 1e-15:
                    exposed["pp"] = exposed.get("pp", 0.0) + min(
                        waited, float(fin[b.recv[1]] - fin[b.recv[0]]))
            previous_end = float(fin[b.end])
        dp = float(fin[step.stage_end[s]] - previous_end)
        if dp > 0:
            exposed["dp"] = exposed.get("dp", 0.0) + dp
        work = compute + sum(exposed.values())
        if best is None or work > best[0] + 1e-12:
            best = (work, s, compute, exposed)
    step_s = float(result.makespan)
    _, s, compute, exposed = best
    bubble = step_s - compute - sum(exposed.values())
    bubble = bubble if bubble > 1e-9 * step_s else 0.0       # rounding, not idle time
    return StepBreakdown(step_s, compute, exposed, bubble, s)
