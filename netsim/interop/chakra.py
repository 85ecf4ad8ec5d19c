"""MLCommons Chakra execution traces (one ``.et`` file per rank) <-> netsim schedules.

Chakra's files are length-prefixed protobuf messages (``chakra/schema/protobuf/
et_def.proto``, read and written with ``chakra/src/third_party/utils/protolib.py`` of the
``mlc-chakra`` package): a ``GlobalMetadata`` then one ``Node`` per operation, with
``id``, ``name``, ``type``, ``data_deps``/``ctrl_deps`` (ids in the same file),
``duration_micros`` and attributes (``comm_type``, ``comm_size``, ``pg_name``,
``comm_src``/``comm_dst``/``comm_tag``), as ASTRA-sim's ET feeder reads them.

How netsim runs a set of traces (:func:`workload_schedule`):

* ``COMP_NODE``: compute of ``duration_micros``, started when its dependencies are met
  (independent computes of one rank overlap; the rank's compute time counts their union);
* ``COMM_COLL_NODE``: the k-th collective of a process group on every member is one
  collective, built by a callback (netsim's algorithms) over the group's ranks and
  ``comm_size`` bytes (nccl-tests' meaning); the group is ``pg_name``'s ranks as an
  ASTRA-sim communicator-group file lists them, else every rank whose trace has a
  collective of that group; every rank without ``pg_name`` (or with ``"0"``).
  A member's part starts when that member's dependencies are met; the node finishes on
  every member when the whole collective has;
* ``COMM_SEND_NODE``/``COMM_RECV_NODE``: a flow from the sender (``comm_dst``) started when
  the send's dependencies are met; the receive (``comm_src``, same ``comm_tag``) finishes
  when the flow has arrived and its own dependencies are met (matched in order);
* other nodes (metadata, memory): no time.

Without ``mlc-chakra`` every function here raises one line saying what to install.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InputError, ScheduleError
from ..schedule import BARRIER, COMPUTE, SEND, Schedule
from ..units import MAX_SIZE

__all__ = ["CHAKRA_MISSING", "TraceNode", "have_chakra", "read_trace", "read_workload",
           "read_comm_groups",
           "trace_paths", "workload_schedule", "write_workload", "COMM_OPS"]

CHAKRA_MISSING = ("Chakra traces need the mlc-chakra package: pip install 'netsim[chakra]' "
                  "(or pip install mlc-chakra)")
#: Chakra ``CollectiveCommType`` value -> netsim op (et_def.proto's enum).
COMM_OPS = {0: "allreduce", 1: "reduce", 2: "allgather", 5: "broadcast", 6: "alltoall",
            7: "reducescatter", 9: "barrier"}
_COMM_NAMES = {0: "ALL_REDUCE", 1: "REDUCE", 2: "ALL_GATHER", 3: "GATHER", 4: "SCATTER",
               5: "BROADCAST", 6: "ALL_TO_ALL", 7: "REDUCE_SCATTER", 8: "REDUCE_SCATTER_BLOCK",
               9: "BARRIER"}
_MAX_TRACE_BYTES = 1 << 31


def have_chakra() -> bool:
    """Is the ``mlc-chakra`` package importable?"""
    try:
        _modules()
    except InputError:
        return False
    return True


def _modules():
    try:
        from chakra.schema.protobuf import et_def_pb2
        from chakra.src.third_party.utils import protolib
    except ImportError:
        raise InputError(CHAKRA_MISSING) from None
    return et_def_pb2, protolib


@dataclass
class TraceNode:
    """One node of a rank's trace, in netsim terms (seconds, bytes, netsim op names)."""

    id: int
    name: str
    kind: str                      # 'compute', 'coll', 'send', 'recv' or 'none'
    deps: tuple[int, ...] = ()
    seconds: float = 0.0
    op: str | None = None          # collectives: netsim op name
    size: float = 0.0              # bytes (comm_size)
    group: str | None = None       # pg_name
    peer: int = -1                 # send: comm_dst; recv: comm_src
    tag: int = 0
    attrs: dict[str, Any] = field(default_factory=dict)


def _attr_value(attr) -> Any:
    which = attr.WhichOneof("value")
    return None if which is None else getattr(attr, which)


def _node(msg, et, where: str) -> TraceNode:
    attrs = {a.name: _attr_value(a) for a in msg.attr}
    deps = tuple(int(d) for d in list(msg.data_deps) + list(msg.ctrl_deps))
    node = TraceNode(int(msg.id), msg.name, "none", deps, attrs=attrs)
    where = f"{where}: node {msg.id}"
    if msg.type == et.COMP_NODE:
        node.kind, node.seconds = "compute", float(msg.duration_micros) * 1e-6
    elif msg.type == et.COMM_COLL_NODE:
        ctype = attrs.get("comm_type")
        if ctype not in COMM_OPS:
            name = _COMM_NAMES.get(ctype, repr(ctype))
            raise ScheduleError(f"{where}: comm_type {name} is not a collective netsim runs "
                                f"({', '.join(_COMM_NAMES[k] for k in COMM_OPS)})")
        node.kind, node.op = "coll", COMM_OPS[ctype]
        node.size = _size(attrs, where, required=node.op != "barrier")
        group = attrs.get("pg_name")
        node.group = str(group) if group not in (None, "") else None
    elif msg.type in (et.COMM_SEND_NODE, et.COMM_RECV_NODE):
        send = msg.type == et.COMM_SEND_NODE
        key = "comm_dst" if send else "comm_src"
        if attrs.get(key) is None:
            raise ScheduleError(f"{where}: a {'send' if send else 'receive'} node needs "
                                f"attribute {key!r}")
        node.kind, node.peer = ("send" if send else "recv"), int(attrs[key])
        node.tag = int(attrs.get("comm_tag") or 0)
        node.size = _size(attrs, where, required=True)
    return node


def _size(attrs: dict, where: str, required: bool) -> float:
    for key in ("comm_size", "tensor_size"):
        if attrs.get(key) is not None:
            value = attrs[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not 0 <= value <= MAX_SIZE:      # nan fails the comparison too
                raise ScheduleError(f"{where}: {key}={value!r} must be a number of bytes "
                                    f"from 0 to 1 EiB")
            return float(value)
    if required:
        raise ScheduleError(f"{where}: missing attribute 'comm_size'")
    return 0.0


def read_trace(path: str | Path) -> list[TraceNode]:
    """The nodes of one Chakra ET file (gzipped or not), in file order."""
    import gzip

    et, protolib = _modules()
    path = Path(path)
    if not path.is_file():
        raise InputError(f"Chakra trace {str(path)!r} does not exist")
    try:
        with open(path, "rb") as handle:            # at most the bound, not the whole file
            raw = handle.read(_MAX_TRACE_BYTES + 1)
    except OSError as err:
        raise InputError(f"{path}: cannot read Chakra trace: {err.strerror or err}") from None
    if len(raw) > _MAX_TRACE_BYTES:
        raise InputError(f"{path}: larger than {_MAX_TRACE_BYTES} bytes")
    if raw[:2] == b"\x1f\x8b":
        try:       # bounded too: a small gzip file can inflate to any size
            with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
                raw = unzipped.read(_MAX_TRACE_BYTES + 1)
        except (OSError, EOFError) as err:
            raise ScheduleError(f"{path}: not a readable gzip file: {err}") from None
        if len(raw) > _MAX_TRACE_BYTES:
            raise InputError(f"{path}: more than {_MAX_TRACE_BYTES} bytes once unzipped")
    stream = io.BytesIO(raw)
    nodes: list[TraceNode] = []
    try:
        if not protolib.decodeMessage(stream, et.GlobalMetadata()):
            raise ScheduleError(f"{path}: empty: no Chakra metadata")
        while True:
            msg = et.Node()
            if not protolib.decodeMessage(stream, msg):
                break
            nodes.append(_node(msg, et, str(path)))
    except ScheduleError:
        raise
    except Exception as err:           # protobuf's DecodeError and friends
        raise ScheduleError(f"{path}: message {len(nodes) + 2}: not a Chakra ET node "
                            f"({type(err).__name__}: {err})") from None
    if stream.tell() != len(raw):
        raise ScheduleError(f"{path}: message {len(nodes) + 2}: truncated or not a Chakra ET "
                            f"file")
    ids = {}
    for node in nodes:
        if node.id in ids:
            raise ScheduleError(f"{path}: node {node.id}: id given twice")
        ids[node.id] = node
    for node in nodes:
        for d in node.deps:
            if d not in ids:
                raise ScheduleError(f"{path}: node {node.id}: depends on node {d}, which is "
                                    f"not in the file")
    return nodes


def trace_paths(pattern: str, ranks: int | None = None) -> list[Path]:
    """The files of ``pattern`` (``'trace.%d.et'``): ranks 0, 1, ... while they exist, or
    exactly ``ranks`` of them."""
    if "%d" not in pattern:
        raise InputError(f"workload {pattern!r}: expected a pattern with %d for the rank "
                         f"(e.g. trace.%d.et)")
    if ranks is not None:
        paths = [Path(pattern.replace("%d", str(r))) for r in range(ranks)]
        missing = [p for p in paths if not p.is_file()]
        if missing:
            raise InputError(f"workload {pattern!r}: {missing[0]} does not exist")
        return paths
    paths = []
    while Path(pattern.replace("%d", str(len(paths)))).is_file():
        paths.append(Path(pattern.replace("%d", str(len(paths)))))
    if not paths:
        raise InputError(f"workload {pattern!r}: {pattern.replace('%d', '0')} does not exist")
    return paths


def read_workload(pattern: str, ranks: int | None = None) -> list[list[TraceNode]]:
    """Every rank's nodes (:func:`read_trace` of each file of :func:`trace_paths`)."""
    _modules()
    return [read_trace(p) for p in trace_paths(pattern, ranks)]


def _topological(nodes: list[TraceNode], where: str) -> list[TraceNode]:
    """File order where it respects dependencies, else the earliest ready node first."""
    import heapq

    index = {n.id: i for i, n in enumerate(nodes)}
    pending = [len(set(n.deps)) for n in nodes]
    users: list[list[int]] = [[] for _ in nodes]
    for i, n in enumerate(nodes):
        for d in set(n.deps):
            users[index[d]].append(i)
    ready = [i for i, p in enumerate(pending) if p == 0]
    heapq.heapify(ready)
    out = []
    while ready:
        i = heapq.heappop(ready)
        out.append(nodes[i])
        for u in users[i]:
            pending[u] -= 1
            if pending[u] == 0:
                heapq.heappush(ready, u)
    if len(out) < len(nodes):
        stuck = next(n for i, n in enumerate(nodes) if pending[i] > 0)
        raise ScheduleError(f"{where}: node {stuck.id}: its dependencies form a cycle")
    return out


class _Ops:
    """The growing workload schedule (columns as in :class:`Schedule`)."""

    def __init__(self) -> None:
        self.kind: list[int] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.nbytes: list[float] = []
        self.seconds: list[float] = []
        self.deps: list[list[int]] = []
        self.tag: list[int] = []
        self.tags: dict[str, int] = {}
        self.paths: dict[int, tuple] = {}
        self.num_ranks = 0
        # Ops whose collective sets its own per-message cost (meta['overhead'], e.g. nccl's
        # protocol step latency): op -> s. The others take the run's alpha.
        self.overhead: dict[int, float] = {}

    def add(self, kind, src, dst, nbytes, seconds, deps, tag=None) -> int:
        self.kind.append(kind)
        self.src.append(src)
        self.dst.append(dst)
        self.nbytes.append(float(nbytes))
        self.seconds.append(float(seconds))
        self.deps.append(sorted(set(deps)))
        self.tag.append(-1 if tag is None else self.tags.setdefault(tag, len(self.tags)))
        return len(self.kind) - 1

    def barrier(self, deps, tag=None) -> int:
        return self.add(BARRIER, -1, -1, 0.0, 0.0, deps, tag)

    def build(self, meta, extra_nodes=()) -> Schedule:
        counts = np.array([len(d) for d in self.deps], dtype=np.int64)
        dep_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        dep_idx = np.array([x for d in self.deps for x in d], dtype=np.int64)
        return Schedule(num_ranks=self.num_ranks, kind=np.array(self.kind, np.int8),
                        src=np.array(self.src, np.int64), dst=np.array(self.dst, np.int64),
                        nbytes=np.array(self.nbytes, np.float64),
                        seconds=np.array(self.seconds, np.float64), dep_ptr=dep_ptr,
                        dep_idx=dep_idx, tag=np.array(self.tag, np.int64),
                        tags=tuple(self.tags), paths=dict(self.paths), meta=meta,
                        extra_nodes=tuple(extra_nodes))


#: ``collective(op, members, size, name) -> Schedule`` on ranks 0..len(members)-1 (plus
#: switch ranks listed in its ``extra_nodes``).
CollectiveBuilder = Callable[[str, Sequence[int], float, str], Schedule]


def read_comm_groups(path: str | Path, num_ranks: int) -> dict[str, list[int]]:
    """ASTRA-sim's communicator-group file (``--comm-group-configuration``): a JSON object
    ``{"1": [0, 1, 2, 3], ...}`` from ``pg_name`` to the ranks of the group."""
    from ..schedule import read_json

    doc = read_json(path, InputError)
    if not isinstance(doc, dict):
        raise InputError(f"{path}: expected an object from group name to a list of ranks")
    groups = {}
    for name, ranks in doc.items():
        if not isinstance(ranks, list) or not ranks or not all(
                isinstance(r, int) and not isinstance(r, bool) and 0 <= r < num_ranks
                for r in ranks) or len(set(ranks)) != len(ranks):
            raise InputError(f"{path}: group {name!r}: expected distinct ranks in "
                             f"0..{num_ranks - 1}, got {ranks!r}")
        groups[str(name)] = sorted(ranks)
    return groups


def workload_schedule(traces: list[list[TraceNode]], collective: CollectiveBuilder, *,
                      names: Sequence[str] | None = None,
                      comm_groups: dict[str, list[int]] | None = None) -> Schedule:
    """One schedule running every rank's trace (see the module docstring).

    ``comm_groups`` (:func:`read_comm_groups`) gives the ranks of named process groups;
    ``pg_name`` ``""`` or ``"0"`` is every rank (ASTRA-sim's convention), and a group not
    listed is the ranks whose traces have a collective of it.

    ``meta`` holds ``ranks``, ``compute_ops`` (per rank, the op ids of its computes),
    ``rank_ends`` (per rank, the ops its trace finishes with) and ``collectives`` (how
    many); the schedule's ``extra_nodes`` are the nodes of switch ranks the collectives
    added.
    """
    n = len(traces)
    names = list(names or [f"rank {r}" for r in range(n)])
    orders = [_topological(t, names[r]) for r, t in enumerate(traces)]
    groups: dict[str | None, list[int]] = {}
    for r, t in enumerate(traces):
        for node in t:
            if node.kind == "coll":
                groups.setdefault(node.group, [])
                if r not in groups[node.group]:
                    groups[node.group].append(r)
    given = comm_groups or {}
    groups = {g: (list(range(n)) if g in (None, "0") else given.get(g, sorted(m)))
              for g, m in groups.items()}
    for r, t in enumerate(traces):
        for node in t:
            if node.kind == "coll" and r not in groups[node.group]:
                raise ScheduleError(f"{names[r]}: node {node.id}: a collective of group "
                                    f"{node.group!r}, whose ranks {groups[node.group]} do "
                                    f"not include rank {r}")
    for r, t in enumerate(traces):
        for node in t:
            if node.kind in ("send", "recv") and not 0 <= node.peer < n:
                raise ScheduleError(f"{names[r]}: node {node.id}: peer rank {node.peer} is "
                                    f"not in 0..{n - 1}")
    ops = _Ops()
    ops.num_ranks = n
    extra: list[int] = []
    done: list[dict[int, int]] = [{} for _ in range(n)]   # node id -> op id (finished)
    compute_ops: list[list[int]] = [[] for _ in range(n)]
    pos = [0] * n
    seen: list[dict[str | None, int]] = [{} for _ in range(n)]
    waiting: dict[tuple, dict[int, TraceNode]] = {}       # (group, k) -> rank -> node
    flights: dict[tuple[int, int, int], list[int]] = {}   # (src, dst, tag) -> send ops
    collectives = 0

    def node_deps(r: int, node: TraceNode) -> list[int]:
        return [done[r][d] for d in set(node.deps)]

    progress = True
    while progress:
        progress = False
        for r in range(n):
            while pos[r] < len(orders[r]):
                node = orders[r][pos[r]]
                if node.kind == "coll":
                    k = seen[r].get(node.group, 0)
                    key = (node.group, k)
                    arrived = waiting.setdefault(key, {})
                    if r in arrived:
                        break                       # still waiting for the others
                    arrived[r] = node
                    members = groups[node.group]
                    if set(arrived) != set(members):
                        break
                    for m in members:
                        seen[m][node.group] = k + 1
                    _add_collective(ops, collective, members, arrived, node_deps, done,
                                    extra, n)
                    collectives += 1
                    del waiting[key]
                    for m in members:
                        if m != r:
                            pos[m] += 1
                    pos[r] += 1
                    progress = True
                    continue
                if node.kind == "recv":
                    queue = flights.get((node.peer, r, node.tag))
                    if not queue:
                        break                       # the send is not issued yet
                    flow = queue.pop(0)
                    done[r][node.id] = ops.barrier(node_deps(r, node) + [flow])
                elif node.kind == "send":
                    op = ops.add(SEND, r, node.peer, node.size, 0.0, node_deps(r, node),
                                 node.name or None)
                    flights.setdefault((r, node.peer, node.tag), []).append(op)
                    done[r][node.id] = op
                elif node.kind == "compute":
                    op = ops.add(COMPUTE, r, -1, 0.0, node.seconds, node_deps(r, node),
                                 node.name or None)
                    compute_ops[r].append(op)
                    done[r][node.id] = op
                else:
                    done[r][node.id] = ops.barrier(node_deps(r, node))
                pos[r] += 1
                progress = True
    stuck = [r for r in range(n) if pos[r] < len(orders[r])]
    if stuck:
        r = stuck[0]
        node = orders[r][pos[r]]
        if node.kind == "coll":
            members = groups[node.group]
            k = seen[r].get(node.group, 0)
            absent = sorted(set(members) - set(waiting.get((node.group, k), {})))
            raise ScheduleError(f"{names[r]}: node {node.id} ({node.name or node.op}): "
                                f"collective #{k} of group {node.group or 'all'} never "
                                f"starts: rank {absent[0]} does not reach it")
        raise ScheduleError(f"{names[r]}: node {node.id} ({node.name or node.kind}): no "
                            f"matching send from rank {node.peer} with tag {node.tag}")
    ends = []
    for r in range(n):
        used = {d for node in traces[r] for d in node.deps}
        ends.append(sorted(done[r][node.id] for node in traces[r] if node.id not in used))
    meta = {"ranks": n, "compute_ops": compute_ops, "rank_ends": ends,
            "collectives": collectives, "format": "chakra"}
    if ops.overhead:
        meta["op_overhead"] = ops.overhead
    return ops.build(meta, extra)


def _add_collective(ops: _Ops, collective: CollectiveBuilder, members: list[int],
                    arrived: dict[int, TraceNode], node_deps, done, extra: list[int],
                    n: int) -> None:
    first = arrived[members[0]]
    sizes = {arrived[m].size for m in members}
    if len(sizes) > 1:
        raise ScheduleError(f"collective {first.name or first.op} of group "
                            f"{first.group or 'all'}: ranks give different comm_size "
                            f"({', '.join(f'{s:g}' for s in sorted(sizes))})")
    ready = {m: node_deps(m, arrived[m]) for m in members}
    if first.op == "barrier" or len(members) == 1:
        end = ops.barrier([d for m in members for d in ready[m]], first.name or None)
    else:
        sub = collective(first.op, members, first.size, first.name)
        m = len(members)
        switch = list(sub.extra_nodes)
        mapping = list(members) + [n + len(extra) + i for i in range(len(switch))]
        extra.extend(int(x) for x in switch)
        ops.num_ranks = max(ops.num_ranks, n + len(extra))
        offset = len(ops.kind)
        all_ready = [d for mm in members for d in ready[mm]]
        tag = first.name or first.op
        for i in range(sub.num_ops):
            kind = int(sub.kind[i])
            deps = (sub.deps(i) + offset).tolist()
            src = int(sub.src[i])
            if not deps:
                deps = ready[members[src]] if 0 <= src < m else all_ready
            ops.add(kind, mapping[src] if src >= 0 else -1,
                    mapping[int(sub.dst[i])] if sub.dst[i] >= 0 else -1,
                    sub.nbytes[i], sub.seconds[i], deps, tag)
        for i, path in sub.paths.items():
            ops.paths[int(i) + offset] = path
        if "overhead" in sub.meta:
            ops.overhead.update(dict.fromkeys(range(offset, offset + sub.num_ops),
                                              float(sub.meta["overhead"])))
        has_user = np.zeros(sub.num_ops, dtype=bool)
        has_user[sub.dep_idx] = True
        end = ops.barrier((np.flatnonzero(~has_user) + offset).tolist(), tag)
    for mm in members:
        done[mm][arrived[mm].id] = end


#: Bytes a Chakra export of a built schedule holds per send at its peak, the schedule
#: included: the two encoded nodes (send and receive, ~110 B each with their attributes)
#: in the ranks' buffers, their growth by doubling, the two node ids per op. Ring
#: all-reduce on torus:32x32 (2.1M sends): 590 MB above the interpreter, 280 B a send
#: (benchmarks/bench_memory_estimates.py). Nodes are encoded as they are made: kept as
#: protobuf messages, the same export needs 7.7 GB.
EXPORT_BYTES_PER_SEND = 300


def write_workload(schedule: Schedule, pattern: str, *, overwrite: bool = False) -> list[Path]:
    """Write ``schedule`` as one Chakra ET per rank (``pattern`` with %d for the rank).

    Sends become a ``COMM_SEND_NODE`` on the sender and a ``COMM_RECV_NODE`` on the
    receiver (``comm_tag`` = the op id, ``comm_size`` in whole bytes), computes
    ``COMP_NODE`` (duration in whole microseconds, as the format stores it); barriers vanish (their dependencies pass
    through). An op that waits for an op of another rank other than through a message it
    receives cannot be said in per-rank traces: refused in one line. The memory it needs
    (:data:`EXPORT_BYTES_PER_SEND`) is checked first; every file is written to a
    temporary file and renamed, and on an error those already written are removed.
    """
    from ..budget import require_memory
    from ..outputs import check_outputs, write_atomic

    et, protolib = _modules()
    if "%d" not in pattern:
        raise InputError(f"{pattern!r}: expected a pattern with %d for the rank "
                         f"(e.g. trace.%d.et)")
    if schedule.extra_nodes:
        raise ScheduleError("Chakra export: the schedule has switch ranks (in-network "
                            "reduction), which a per-NPU trace cannot hold")
    n = schedule.num_ranks
    require_memory(schedule.num_sends * EXPORT_BYTES_PER_SEND,
                   f"Chakra export of {n} traces ({schedule.num_sends:.3g} sends)",
                   advice="fewer ranks or fewer chunks")
    paths = [Path(pattern.replace("%d", str(r))) for r in range(n)]
    check_outputs(paths, overwrite=overwrite)
    # Each node is encoded as soon as it is made (a protobuf message object costs ~1.7 kB,
    # which made a 2M-send export peak at 7.7 GB); only its id on each rank is kept.
    buffers = [io.BytesIO() for _ in range(n)]
    for out in buffers:
        protolib.encodeMessage(out, et.GlobalMetadata(version="1.0.0"))
    count = [0] * n
    # node id standing for op's completion on its source rank / on its destination rank
    at_src = np.full(schedule.num_ops, -1, dtype=np.int64)
    at_dst = np.full(schedule.num_ops, -1, dtype=np.int64)
    through: dict[int, list[int]] = {}
    src_of, dst_of = schedule.src, schedule.dst

    def resolve(deps) -> list[int]:
        out = []
        for d in deps.tolist():
            out.extend(through.get(d, [d]))
        return out

    def deps_on(rank: int, op: int, deps: list[int]) -> list[int]:
        ids = []
        for d in deps:
            if src_of[d] == rank and at_src[d] >= 0:
                ids.append(int(at_src[d]))
            elif dst_of[d] == rank and at_dst[d] >= 0:
                ids.append(int(at_dst[d]))
            else:
                raise ScheduleError(f"Chakra export: op {op} on rank {rank} waits for op {d}, "
                                    f"which rank {rank} neither runs nor receives")
        return sorted(set(ids))

    false_cpu = et.AttributeProto(name="is_cpu_op", bool_val=False)

    def new(rank: int, name: str, kind, deps: list[int], attrs=(), micros: int = 0) -> int:
        msg = et.Node()
        msg.id = count[rank]
        msg.name = name
        msg.type = kind
        msg.data_deps.extend(deps)
        if micros:
            msg.duration_micros = micros
        msg.attr.append(false_cpu)
        msg.attr.extend(attrs)
        protolib.encodeMessage(buffers[rank], msg)
        count[rank] += 1
        return msg.id

    for i in range(schedule.num_ops):
        kind = int(schedule.kind[i])
        deps = resolve(schedule.deps(i))
        if kind == BARRIER:
            through[i] = deps
            continue
        src = int(src_of[i])
        if kind == COMPUTE:
            micros = int(round(float(schedule.seconds[i]) * 1e6))
            at_src[i] = new(src, f"compute {i}", et.COMP_NODE, deps_on(src, i, deps),
                            micros=micros)
            continue
        dst = int(dst_of[i])
        size = int(round(float(schedule.nbytes[i])))
        common = [et.AttributeProto(name="comm_src", int64_val=src),
                  et.AttributeProto(name="comm_dst", int64_val=dst),
                  et.AttributeProto(name="comm_tag", int64_val=i),
                  et.AttributeProto(name="comm_size", int64_val=size)]
        at_src[i] = new(src, f"send {i}", et.COMM_SEND_NODE, deps_on(src, i, deps), common)
        at_dst[i] = new(dst, f"recv {i}", et.COMM_RECV_NODE, [], common)
    written: list[Path] = []
    try:
        for r, path in enumerate(paths):
            write_atomic(path, buffers[r].getvalue(), overwrite)
            buffers[r] = None                       # free as we go
            written.append(path)
    except BaseException:
        for path in written:      # a full disk half-way: no partial set of traces is left
            path.unlink(missing_ok=True)
        raise
    return paths
