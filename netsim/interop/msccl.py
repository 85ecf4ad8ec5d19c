"""MSCCL XML algorithms (msccl-tools / MSCCL runtime format) as netsim schedules.

The format, as written by msccl-tools (``msccl/language/ir.py``, ``ir_to_xml`` with
``old_format=True``) and read by the MSCCL runtime (``src/graph/topo.cc``, executed by
``src/collectives/device/msccl_interpreter.h`` of github.com/microsoft/msccl)::

    <algo name=.. proto=.. nchannels=C nchunksperloop=K ngpus=N coll=allreduce inplace=1>
      <gpu id=g i_chunks=.. o_chunks=.. s_chunks=..>
        <tb id=t send=PEER recv=PEER chan=c>
          <step s=k type=s|r|rcs|rrs|rrc|rrcs|cpy|re|nop srcbuf=i|o|s srcoff=..
                dstbuf=.. dstoff=.. cnt=.. depid=TB deps=STEP hasdep=0|1/>

How netsim reads it:

* every buffer index is a chunk of ``size / nchunksperloop`` bytes (the runtime's
  ``sizePerMscclChunk``), ``size`` meaning what nccl-tests means for the collective;
* a threadblock runs its steps in order: a step starts when the previous step of its
  threadblock has finished and, with ``depid``/``deps``, when step ``deps`` of threadblock
  ``depid`` on the same GPU has (the runtime waits for that threadblock's step counter);
* a step with a send part (``s``, ``rcs``, ``rrs``, ``rrcs``) is a netsim send of
  ``cnt`` chunks to the threadblock's ``send`` peer; it finishes when the data has arrived;
* a step with a receive part (``r``, ``rcs``, ``rrs``, ``rrc``, ``rrcs``) waits for the
  matching send: the k-th send from GPU a to GPU b on channel c matches the k-th receive
  of b from a on channel c (one connection per peer and channel, FIFO);
* reductions (``rrs``, ``rrc``, ``rrcs``, ``re``) are compute ops of ``bytes / gamma``
  when a reduction rate gamma is given (as the native algorithms do), else free;
  ``r``, ``cpy`` and ``nop`` only order the steps (barriers).

For allreduce, allgather, reduce_scatter and alltoall every send also carries symbolic
data (which pieces, summed over which ranks), so :func:`netsim.algorithms.verify` checks
that the XML delivers what the collective promises.

>>> xml = ring_allreduce_xml(4)
>>> s = schedule_from_msccl(xml, 4e6)
>>> s.num_sends, s.total_bytes       # 2 (n-1) steps of n sends of S/n
(24, 24000000.0)
>>> s.meta["op"], s.meta["pieces"]
('allreduce', 4)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ScheduleError
from ..schedule import Schedule, ScheduleBuilder

__all__ = ["STEP_TYPES", "COLL_OPS", "schedule_from_msccl", "load_msccl",
           "ring_allreduce_xml", "parse_msccl"]

#: Step type -> (receives, reduces, sends). ``cpy`` and ``re`` are local; ``nop`` waits.
STEP_TYPES = {"s": (False, False, True), "r": (True, False, False),
              "rcs": (True, False, True), "rrs": (True, True, True),
              "rrc": (True, True, False), "rrcs": (True, True, True),
              "cpy": (False, False, False), "re": (False, True, False),
              "nop": (False, False, False)}
#: MSCCL ``coll`` -> netsim op (``reduce_scatter`` is MSCCL's spelling).
COLL_OPS = {"allreduce": "allreduce", "allgather": "allgather",
            "reduce_scatter": "reducescatter", "reducescatter": "reducescatter",
            "alltoall": "alltoall", "broadcast": "broadcast", "reduce": "reduce"}
_ANNOTATED = ("allreduce", "allgather", "reducescatter", "alltoall")
_ANNOTATE_UP_TO = 64            # the verifier's bitsets are meant for test sizes
_BUFFERS = ("i", "o", "s")
#: Caps on counts read from a file: the parser keeps a slot per chunk and a record per
#: GPU, so an absurd count (nchunksperloop=10^20) would exhaust memory or time before any
#: check. Real files (msccl-tools) use at most a few thousand chunks and GPUs.
MAX_CHUNKS = 1 << 20
MAX_GPUS = 1 << 16


@dataclass
class _Step:
    gpu: int
    tb: int
    s: int
    type: str
    srcbuf: str
    srcoff: int
    dstbuf: str
    dstoff: int
    cnt: int
    depid: int
    deps: int

    @property
    def where(self) -> str:
        return f"gpu {self.gpu} tb {self.tb} step {self.s}"


@dataclass
class _Tb:
    id: int
    send: int
    recv: int
    chan: int
    steps: list[_Step] = field(default_factory=list)


@dataclass
class _Gpu:
    id: int
    chunks: dict[str, int]
    tbs: dict[int, _Tb] = field(default_factory=dict)


@dataclass
class MscclAlgo:
    """A parsed MSCCL XML file (attributes as in the file; ``coll`` as written)."""

    name: str
    proto: str
    nchannels: int
    nchunksperloop: int
    ngpus: int
    coll: str
    inplace: bool
    gpus: dict[int, _Gpu]


def _int(elem: ET.Element, key: str, where: str, default: int | None = None) -> int:
    value = elem.get(key)
    if value is None:
        if default is not None:
            return default
        raise ScheduleError(f"{where}: missing attribute {key!r}")
    try:
        number = int(value)
    except ValueError:
        raise ScheduleError(f"{where}: {key}={_short(value)!r} is not an integer") from None
    limit = _LIMITS.get(key)
    if limit is not None and number > limit:
        raise ScheduleError(f"{where}: {key}={_short(value)} is more than the limit of "
                            f"{limit} (the file is not a real MSCCL algorithm)")
    return number


#: Attribute -> the largest value a file may give it.
_LIMITS = {"ngpus": MAX_GPUS, "nchunksperloop": MAX_CHUNKS, "i_chunks": MAX_CHUNKS,
           "o_chunks": MAX_CHUNKS, "s_chunks": MAX_CHUNKS, "cnt": MAX_CHUNKS,
           "nchannels": MAX_CHUNKS, "srcoff": MAX_CHUNKS, "dstoff": MAX_CHUNKS}


def _short(text: str, keep: int = 40) -> str:
    return text if len(text) <= keep else text[:keep] + "..."


def _parse_text(text: str, source: str) -> ET.Element:
    # Entity expansion ("billion laughs") needs a DTD; an MSCCL file never has one.
    if "<!DOCTYPE" in text or "<!ENTITY" in text:
        raise ScheduleError(f"{source}: DTDs and entity declarations are not allowed in an "
                            f"MSCCL file")
    try:
        return ET.fromstring(text)
    except ET.ParseError as err:
        raise ScheduleError(f"{source}: invalid XML: {err}") from None


def parse_msccl(text: str, source: str = "msccl") -> MscclAlgo:
    """Parse and check an MSCCL XML document (structure and attribute values only)."""
    root = _parse_text(text, source)
    if root.tag != "algo":
        raise ScheduleError(f"{source}: the root element is <{root.tag}>, expected <algo>")
    where = f"{source}: algo"
    ngpus = _int(root, "ngpus", where)
    if ngpus < 1:
        raise ScheduleError(f"{where}: ngpus={ngpus} must be at least 1")
    k = _int(root, "nchunksperloop", where)
    if k < 1:
        raise ScheduleError(f"{where}: nchunksperloop={k} must be at least 1")
    algo = MscclAlgo(name=root.get("name", ""), proto=root.get("proto", "Simple"),
                     nchannels=_int(root, "nchannels", where, 1), nchunksperloop=k,
                     ngpus=ngpus, coll=root.get("coll", "custom"),
                     inplace=bool(_int(root, "inplace", where, 0)), gpus={})
    for g in root:
        if g.tag != "gpu":
            raise ScheduleError(f"{where}: unexpected element <{g.tag}> (expected <gpu>)")
        gid = _int(g, "id", f"{where}: gpu")
        gw = f"{source}: gpu {gid}"
        if not 0 <= gid < ngpus or gid in algo.gpus:
            raise ScheduleError(f"{gw}: id must be unique and in 0..{ngpus - 1}")
        chunks = {b: _int(g, f"{b}_chunks", gw, 0) for b in _BUFFERS}
        gpu = algo.gpus[gid] = _Gpu(gid, chunks)
        for t in g:
            if t.tag != "tb":
                raise ScheduleError(f"{gw}: unexpected element <{t.tag}> (expected <tb>)")
            tid = _int(t, "id", f"{gw} tb")
            tw = f"{gw} tb {tid}"
            if tid in gpu.tbs:
                raise ScheduleError(f"{tw}: threadblock id given twice")
            tb = gpu.tbs[tid] = _Tb(tid, _int(t, "send", tw, -1), _int(t, "recv", tw, -1),
                                    _int(t, "chan", tw, 0))
            for peer in (tb.send, tb.recv):
                if not -1 <= peer < ngpus or peer == gid:
                    raise ScheduleError(f"{tw}: peer {peer} must be -1 or another gpu in "
                                        f"0..{ngpus - 1}")
            for st in t:
                tb.steps.append(_parse_step(st, gid, tid, len(tb.steps), tw))
    missing = sorted(set(range(ngpus)) - set(algo.gpus))
    if missing:
        raise ScheduleError(f"{source}: ngpus={ngpus} but no <gpu> with id {missing[0]}")
    return algo


def _parse_step(st: ET.Element, gid: int, tid: int, position: int, tw: str) -> _Step:
    if st.tag != "step":
        hint = (" (msccl-tools' old_format=False; write it with old_format=True, the "
                "format the MSCCL runtime reads)" if st.tag == "op" else "")
        raise ScheduleError(f"{tw}: unexpected element <{st.tag}> (expected <step>){hint}")
    s = _int(st, "s", f"{tw} step #{position}")
    sw = f"{tw} step {s}"
    if s != position:
        raise ScheduleError(f"{sw}: steps must be numbered 0, 1, ... in order (expected "
                            f"s={position})")
    kind = st.get("type")
    if kind not in STEP_TYPES:
        raise ScheduleError(f"{sw}: unknown step type {kind!r} (known: "
                            f"{', '.join(STEP_TYPES)})")
    step = _Step(gid, tid, s, kind, st.get("srcbuf", "i"), _int(st, "srcoff", sw, -1),
                 st.get("dstbuf", "o"), _int(st, "dstoff", sw, -1), _int(st, "cnt", sw, 1),
                 _int(st, "depid", sw, -1), _int(st, "deps", sw, -1))
    if step.cnt < 1 and kind != "nop":
        raise ScheduleError(f"{sw}: cnt={step.cnt} must be at least 1")
    return step


# -- what each step reads and writes (the runtime's checkSrc / checkDst) -----------------

def _reads_src(kind: str) -> bool:
    return kind in ("s", "rrs", "rrc", "rrcs", "cpy", "re")


def _writes_dst(kind: str) -> bool:
    return kind in ("r", "rcs", "rrc", "rrcs", "cpy", "re")


def _check_buffers(algo: MscclAlgo, source: str) -> None:
    for gpu in algo.gpus.values():
        for tb in gpu.tbs.values():
            for st in tb.steps:
                sends, recvs = STEP_TYPES[st.type][2], STEP_TYPES[st.type][0]
                if sends and tb.send < 0:
                    raise ScheduleError(f"{source}: {st.where}: type {st.type!r} sends but "
                                        f"threadblock {tb.id} has no send peer")
                if recvs and tb.recv < 0:
                    raise ScheduleError(f"{source}: {st.where}: type {st.type!r} receives but "
                                        f"threadblock {tb.id} has no recv peer")
                for used, buf, off in ((_reads_src(st.type), st.srcbuf, st.srcoff),
                                       (_writes_dst(st.type), st.dstbuf, st.dstoff)):
                    if not used:
                        continue
                    if buf not in _BUFFERS:
                        raise ScheduleError(f"{source}: {st.where}: buffer {buf!r} is not "
                                            f"i, o or s")
                    size = gpu.chunks[buf]
                    if off < 0 or off + st.cnt > size:
                        raise ScheduleError(f"{source}: {st.where}: buffer index out of range: "
                                            f"{buf}[{off}:{off + st.cnt}] on a buffer of "
                                            f"{size} chunks")
                if st.depid >= 0:
                    dep_tb = gpu.tbs.get(st.depid)
                    if dep_tb is None or not 0 <= st.deps < len(dep_tb.steps):
                        raise ScheduleError(f"{source}: {st.where}: depends on a missing step "
                                            f"(depid={st.depid} deps={st.deps})")


def _match(algo: MscclAlgo, source: str) -> dict[tuple[int, int, int], tuple[int, int, int]]:
    """The send step matching each receiving step (keys (gpu, tb, step))."""
    sends: dict[tuple[int, int, int], list] = {}
    recvs: dict[tuple[int, int, int], list] = {}
    owner_s: dict[tuple[int, int, int], int] = {}
    owner_r: dict[tuple[int, int, int], int] = {}
    for gpu in algo.gpus.values():
        for tb in gpu.tbs.values():
            for peer, table, owner, key in ((tb.send, sends, owner_s, (gpu.id, tb.send)),
                                            (tb.recv, recvs, owner_r, (tb.recv, gpu.id))):
                if peer < 0:
                    continue
                conn = (*key, tb.chan)
                if owner.setdefault(conn, tb.id) != tb.id:
                    what = "send to" if table is sends else "receive from"
                    raise ScheduleError(f"{source}: gpu {gpu.id} tb {tb.id}: threadblock "
                                        f"{owner[conn]} already uses the {what} gpu {peer} on "
                                        f"channel {tb.chan}")
            for st in tb.steps:
                receives, _, sending = STEP_TYPES[st.type]
                if sending:
                    sends.setdefault((gpu.id, tb.send, tb.chan), []).append(st)
                if receives:
                    recvs.setdefault((tb.recv, gpu.id, tb.chan), []).append(st)
    matched = {}
    for conn in set(sends) | set(recvs):
        out, into = sends.get(conn, []), recvs.get(conn, [])
        for a, b in zip(out, into):
            if a.cnt != b.cnt:
                raise ScheduleError(f"{source}: {b.where}: receives {b.cnt} chunks but the "
                                    f"matching send ({a.where}) sends {a.cnt}")
            matched[(b.gpu, b.tb, b.s)] = (a.gpu, a.tb, a.s)
        if len(out) != len(into):
            extra = (out if len(out) > len(into) else into)[min(len(out), len(into))]
            what = "send" if len(out) > len(into) else "receive"
            raise ScheduleError(f"{source}: {extra.where}: this {what} has no matching "
                                f"{'receive' if what == 'send' else 'send'} (gpu {conn[0]} -> "
                                f"gpu {conn[1]}, channel {conn[2]})")
    return matched


def _order(algo: MscclAlgo, matched, source: str) -> list[_Step]:
    """Steps in an order where each comes after everything it waits for (Kahn)."""
    steps = {(st.gpu, st.tb, st.s): st for g in algo.gpus.values() for t in g.tbs.values()
             for st in t.steps}
    waits: dict[tuple, list[tuple]] = {key: [] for key in steps}
    for key, st in steps.items():
        if st.s > 0:
            waits[key].append((st.gpu, st.tb, st.s - 1))
        if st.depid >= 0:
            waits[key].append((st.gpu, st.depid, st.deps))
        if key in matched:
            waits[key].append(matched[key])
    pending = {key: len(w) for key, w in waits.items()}
    users: dict[tuple, list[tuple]] = {key: [] for key in steps}
    for key, w in waits.items():
        for d in w:
            users[d].append(key)
    ready = sorted(key for key, n in pending.items() if n == 0)
    order = []
    while ready:
        key = ready.pop()
        order.append(steps[key])
        for u in users[key]:
            pending[u] -= 1
            if pending[u] == 0:
                ready.append(u)
    if len(order) < len(steps):
        stuck = min(key for key, n in pending.items() if n > 0)
        raise ScheduleError(f"{source}: {steps[stuck].where}: waits in a cycle (the algorithm "
                            f"deadlocks)")
    return order


# -- symbolic data: which pieces each buffer chunk holds, summed over which ranks --------

def _input_chunks(op: str, algo: MscclAlgo, gpu: int) -> int:
    """Chunks of a GPU's input. msccl-tools writes an in-place algorithm with ``i_chunks="0"``
    (the input lives in the output buffer): all-reduce's input is then the whole output,
    all-gather's this GPU's block of it (o_chunks / ngpus chunks)."""
    chunks = algo.gpus[gpu].chunks
    if chunks["i"] or not algo.inplace:
        return chunks["i"]
    if op == "allgather":
        return chunks["o"] // algo.ngpus
    return chunks["o"]


def _output_block(algo: MscclAlgo, gpu: int) -> int:
    """Chunks of an in-place reduce-scatter's output, this GPU's block of the input
    (``o_chunks``, or i_chunks / ngpus where msccl-tools writes ``o_chunks="0"``)."""
    chunks = algo.gpus[gpu].chunks
    return chunks["o"] or chunks["i"] // algo.ngpus


def _initial(op: str, gpu: int, n: int, algo: MscclAlgo) -> dict[tuple[str, int], tuple]:
    """(buffer, index) -> (piece, contributors) of a GPU's input (see algorithms.pieces)."""
    c = _input_chunks(op, algo, gpu)
    if op in ("allreduce", "reducescatter"):
        slots = {("i", k): (k, frozenset({gpu})) for k in range(c)}
    elif op == "allgather":
        slots = {("i", k): (gpu * c + k, frozenset({gpu})) for k in range(c)}
    else:                                   # alltoall: input chunk x goes to rank x // per
        per = max(c // n, 1)
        slots = {("i", x): ((gpu * n + x // per) * per + x % per, frozenset({gpu}))
                 for x in range(c)}
    return slots


def _alias(op: str, algo: MscclAlgo, gpu: int, buf: str, off: int) -> tuple[str, int]:
    """In-place runs share one buffer: map the input onto the output it aliases."""
    if not algo.inplace or buf != "i":
        return buf, off
    c = _input_chunks(op, algo, gpu)
    if op == "allgather":
        return "o", gpu * c + off
    if op == "reducescatter":
        return buf, off               # the output is the rank's block of the input
    return "o", off


class _Data:
    def __init__(self, algo: MscclAlgo, op: str, source: str) -> None:
        self.algo, self.op, self.source = algo, op, source
        self.slots: dict[int, dict[tuple[str, int], tuple]] = {}
        for g in range(algo.ngpus):
            init = _initial(op, g, algo.ngpus, algo)
            self.slots[g] = {_alias(op, algo, g, b, k): v for (b, k), v in init.items()}
        self.in_flight: dict[tuple[int, int, int], tuple] = {}

    def _key(self, st: _Step, buf: str, off: int) -> tuple[str, int]:
        gpu = st.gpu
        if self.op == "reducescatter" and self.algo.inplace and buf == "o":
            return "i", gpu * _output_block(self.algo, gpu) + off
        return _alias(self.op, self.algo, gpu, buf, off)

    def read(self, st: _Step) -> list[tuple]:
        out = []
        for j in range(st.cnt):
            value = self.slots[st.gpu].get(self._key(st, st.srcbuf, st.srcoff + j))
            if value is None:
                raise ScheduleError(f"{self.source}: {st.where}: reads {st.srcbuf}"
                                    f"[{st.srcoff + j}], which holds no data yet")
            out.append(value)
        return out

    def write(self, st: _Step, values: list[tuple]) -> None:
        for j, value in enumerate(values):
            self.slots[st.gpu][self._key(st, st.dstbuf, st.dstoff + j)] = value

    def reduce(self, st: _Step, a: list[tuple], b: list[tuple]) -> list[tuple]:
        out = []
        for (pa, ca), (pb, cb) in zip(a, b):
            if pa != pb:
                raise ScheduleError(f"{self.source}: {st.where}: reduces piece {pa} with "
                                    f"piece {pb}")
            out.append((pa, ca | cb))
        return out

    def step(self, st: _Step, received: list[tuple] | None) -> list[tuple] | None:
        """Apply a step to the buffers; return what it sends (None if it sends nothing)."""
        kind = st.type
        if kind == "s":
            return self.read(st)
        if kind == "r":
            self.write(st, received)
        elif kind == "rcs":
            self.write(st, received)
            return received
        elif kind in ("rrs", "rrc", "rrcs"):
            value = self.reduce(st, received, self.read(st))
            if kind != "rrs":
                self.write(st, value)
            if kind != "rrc":
                return value
        elif kind == "cpy":
            self.write(st, self.read(st))
        elif kind == "re":
            dst = [self.slots[st.gpu].get(self._key(st, st.dstbuf, st.dstoff + j))
                   for j in range(st.cnt)]
            if any(d is None for d in dst):
                raise ScheduleError(f"{self.source}: {st.where}: reduces into {st.dstbuf}"
                                    f"[{st.dstoff}], which holds no data yet")
            self.write(st, self.reduce(st, dst, self.read(st)))
        return None


def schedule_from_msccl(text: str, size: float, *, gamma: float | None = None,
                        source: str = "msccl") -> Schedule:
    """The netsim schedule of an MSCCL XML document for a message of ``size`` bytes.

    ``gamma`` (bytes/s) makes every reduction a compute op of ``bytes / gamma`` s.
    ``meta`` holds ``op`` (netsim's name of ``coll``), ``algorithm`` (the XML's name),
    ``size``, ``ranks`` and, for the collectives netsim can verify, ``pieces``.
    """
    algo = parse_msccl(text, source)
    _check_buffers(algo, source)
    matched = _match(algo, source)
    order = _order(algo, matched, source)
    op = COLL_OPS.get(algo.coll, algo.coll)
    n = algo.ngpus
    chunk = float(size) / algo.nchunksperloop
    data = (_Data(algo, op, source) if op in _ANNOTATED and n <= _ANNOTATE_UP_TO else None)
    meta: dict[str, Any] = {"op": op, "algorithm": algo.name or "msccl", "size": float(size),
                            "ranks": n, "format": "msccl", "proto": algo.proto}
    if data is not None:
        meta["pieces"] = algo.nchunksperloop * (n if op == "alltoall" else 1)
    b = ScheduleBuilder(n, meta=meta)
    done: dict[tuple[int, int, int], int] = {}       # step -> op after which it is finished
    sent: dict[tuple[int, int, int], int] = {}       # send step -> its send op
    carried: dict[tuple[int, int, int], list] = {}
    last_reduce: dict[int, int] = {}
    for st in order:
        key = (st.gpu, st.tb, st.s)
        tb = algo.gpus[st.gpu].tbs[st.tb]
        receives, reduces, sends = STEP_TYPES[st.type]
        deps = []
        if st.s > 0:
            deps.append(done[(st.gpu, st.tb, st.s - 1)])
        if st.depid >= 0:
            deps.append(done[(st.gpu, st.depid, st.deps)])
        if receives:
            deps.append(sent[matched[key]])
        payload = None
        if data is not None:
            payload = data.step(st, carried.get(matched.get(key)) if receives else None)
        if reduces and gamma:
            # Reductions on one GPU follow each other, as in the native algorithms.
            if st.gpu in last_reduce:
                deps.append(last_reduce[st.gpu])
            last_reduce[st.gpu] = b.compute(st.gpu, st.cnt * chunk / gamma, sorted(set(deps)))
            deps = [last_reduce[st.gpu]]
        deps = sorted(set(deps))
        if sends:
            data_of = None if payload is None else tuple(payload)
            sent[key] = done[key] = b.send(st.gpu, tb.send, st.cnt * chunk, deps,
                                           data=data_of)
            if payload is not None:
                carried[key] = payload
        elif len(deps) == 1:
            done[key] = deps[0]            # nothing happens here: no op needed
        else:
            done[key] = b.barrier(deps)
    return b.build()


def load_msccl(path: str | Path, size: float, *, gamma: float | None = None) -> Schedule:
    """:func:`schedule_from_msccl` of the file at ``path``."""
    from .._inputs.yamlio import read_text

    text = read_text(Path(path), "MSCCL XML file")
    schedule = schedule_from_msccl(text, size, gamma=gamma, source=str(path))
    schedule.meta["source"] = str(path)
    return schedule


def ring_allreduce_xml(n: int, *, name: str = "ring_allreduce") -> str:
    """The one-channel ring all-reduce in MSCCL XML, as msccl-tools' ``allreduce_ring``
    example lowers it: GPU r's threadblock sends chunk r, then n-2 ``rrs`` and one
    ``rrcs`` reduce, then n-2 ``rcs`` and one ``r`` forward the reduced chunks."""
    from .msccl_write import algo_xml

    gpus = []
    for r in range(n):
        nxt, prv = (r + 1) % n, (r - 1) % n
        steps = [("s", ("i", r), None)]
        for k in range(1, n - 1):
            steps.append(("rrs", ("i", (r - k) % n), None))
        steps.append(("rrcs", ("i", (r + 1) % n), ("i", (r + 1) % n)))
        for k in range(n - 2):
            steps.append(("rcs", None, ("i", (r - k) % n)))
        steps.append(("r", None, ("i", (r + 2) % n)))
        gpus.append({"id": r, "chunks": (n, n, 0),
                     "tbs": [{"id": 0, "send": nxt, "recv": prv, "chan": 0, "steps": steps}]})
    return algo_xml(name=name, coll="allreduce", ngpus=n, nchunksperloop=n, inplace=True,
                    gpus=gpus)
