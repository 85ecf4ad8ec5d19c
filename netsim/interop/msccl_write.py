"""netsim schedules written as MSCCL XML (the format :mod:`.msccl` reads).

:func:`algo_xml` writes the XML of threadblocks given as plain lists, with the attributes
msccl-tools' ``ir_to_xml`` writes (``old_format=True``: every step has ``srcbuf``,
``srcoff``, ``dstbuf``, ``dstoff``, ``cnt``, ``depid``, ``deps``, ``hasdep``).

:func:`schedule_to_msccl` translates an annotated netsim schedule of an all-reduce,
all-gather or reduce-scatter: chunk k of the buffer is piece k (``meta["pieces"]``), a
GPU keeps one copy of every piece (in place), and

* each (GPU, peer) pair that exchanges data gets a sending threadblock (``s`` steps, in op
  order) and a receiving one on the peer (``r`` steps, or ``rrc`` when the data received
  is a partial sum to add to the GPU's own);
* a send waits for the steps of its dependencies (the receive of data it forwards, an
  earlier send of the same GPU), the first by ``depid``/``deps`` and the others by
  ``nop`` steps before it, as msccl-tools does.

What MSCCL cannot say is refused in one line: compute ops (timed work), a dependency on a
send between two other GPUs, a send whose data is not what the GPU's copy of the piece
holds at that point (it would need scratch buffers), sends without data annotations.
Consecutive sends of one GPU to one peer run in order in MSCCL (one threadblock per
connection), which the netsim schedule may not have required.

>>> from netsim.algorithms import build_schedule
>>> from netsim.interop.msccl import schedule_from_msccl
>>> ring = build_schedule("allreduce", "ring", 4, 4e6)
>>> back = schedule_from_msccl(schedule_to_msccl(ring), 4e6)
>>> back.num_sends == ring.num_sends, back.total_bytes == ring.total_bytes
(True, True)
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Sequence

import numpy as np

from ..errors import ScheduleError
from ..schedule import BARRIER, COMPUTE, SEND, Schedule

__all__ = ["algo_xml", "schedule_to_msccl", "EXPORTABLE"]

#: netsim op -> MSCCL ``coll`` for the collectives the exporter writes.
EXPORTABLE = {"allreduce": "allreduce", "allgather": "allgather",
              "reducescatter": "reduce_scatter"}
_REDUCING = ("allreduce", "reducescatter")


def algo_xml(*, name: str, coll: str, ngpus: int, nchunksperloop: int, inplace: bool,
             gpus: Sequence[dict], proto: str = "Simple") -> str:
    """MSCCL XML of ``gpus``: dicts ``{"id", "chunks": (i, o, s), "tbs": [...]}``, each tb
    ``{"id", "send", "recv", "chan", "steps": [(type, src, dst[, cnt[, (tb, step)]])]}``
    with ``src``/``dst`` ``(buffer, offset)`` or None."""
    root = ET.Element("algo", name=name, proto=proto, nchannels="1",
                      nchunksperloop=str(nchunksperloop), ngpus=str(ngpus), coll=coll,
                      inplace=str(int(bool(inplace))))
    channels = 1
    for gpu in gpus:
        i, o, s = gpu["chunks"]
        g = ET.SubElement(root, "gpu", id=str(gpu["id"]), i_chunks=str(i), o_chunks=str(o),
                          s_chunks=str(s))
        needed = {step[4] for tb in gpu["tbs"] for step in tb["steps"]
                  if len(step) > 4 and step[4] is not None}
        for tb in gpu["tbs"]:
            channels = max(channels, int(tb["chan"]) + 1)
            t = ET.SubElement(g, "tb", id=str(tb["id"]), send=str(tb["send"]),
                              recv=str(tb["recv"]), chan=str(tb["chan"]))
            for k, step in enumerate(tb["steps"]):
                kind, src, dst = step[:3]
                cnt = step[3] if len(step) > 3 else 1
                dep = step[4] if len(step) > 4 and step[4] is not None else (-1, -1)
                src = src or ("i", -1)           # what ir_to_xml writes for an absent side
                dst = dst or ("o", -1)
                ET.SubElement(t, "step", s=str(k), type=kind, srcbuf=src[0],
                              srcoff=str(src[1]), dstbuf=dst[0], dstoff=str(dst[1]),
                              cnt=str(cnt), depid=str(dep[0]), deps=str(dep[1]),
                              hasdep=str(int((tb["id"], k) in needed)))
    root.set("nchannels", str(channels))
    ET.indent(root, space="  ")
    return ET.tostring(root, encoding="unicode") + "\n"


def _runs(pieces: list[int]) -> list[tuple[int, int]]:
    """Contiguous runs (first, count) of sorted piece ids."""
    runs: list[list[int]] = []
    for p in sorted(pieces):
        if runs and runs[-1][0] + runs[-1][1] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    return [(a, c) for a, c in runs]


def schedule_to_msccl(schedule: Schedule, *, name: str | None = None) -> str:
    """MSCCL XML of an annotated netsim all-reduce, all-gather or reduce-scatter schedule
    (see the module docstring); a one-line :class:`ScheduleError` when it cannot be said."""
    meta = schedule.meta
    op = meta.get("op")
    if op not in EXPORTABLE:
        raise ScheduleError(f"MSCCL export writes {', '.join(EXPORTABLE)} schedules, not "
                            f"{op!r}")
    pieces = int(meta.get("pieces") or 0)
    n = int(meta.get("ranks") or schedule.num_ranks)
    if pieces <= 0 or n != schedule.num_ranks:
        raise ScheduleError("MSCCL export needs a schedule with data annotations (meta "
                            "'pieces') and no switch ranks")
    per = pieces // n
    slots: list[dict[int, int]] = []   # rank -> piece -> contributor mask of its copy
    for r in range(n):
        own = range(pieces) if op in _REDUCING else range(r * per, (r + 1) * per)
        slots.append(dict.fromkeys(own, 1 << r))
    buf = "o" if op == "allgather" else "i"
    # tbs[(gpu, "s"|"r", peer)] = list of steps; where[op] = (gpu, tb key, index) per side
    tbs: dict[tuple[int, str, int], list] = {}
    sent_at: dict[int, tuple] = {}
    recv_at: dict[int, tuple] = {}
    ends: dict[int, list[int]] = {}         # barrier -> the sends it stands for

    def resolve(deps) -> list[int]:
        out = []
        for d in deps.tolist():
            out.extend(ends[d] if d in ends else [d])
        return out

    for i in range(schedule.num_ops):
        kind = int(schedule.kind[i])
        if kind == COMPUTE:
            raise ScheduleError(f"op {i} is a compute op: MSCCL has no timed local work "
                                f"(build the schedule without gamma)")
        if kind == BARRIER:
            ends[i] = resolve(schedule.deps(i))
            continue
        assert kind == SEND
        src, dst = int(schedule.src[i]), int(schedule.dst[i])
        data = schedule.data.get(i)
        if data is None:
            raise ScheduleError(f"op {i} ({src}->{dst}) carries no data annotation: MSCCL "
                                f"needs to know which chunks it moves")
        waits = []
        for d in resolve(schedule.deps(i)):
            if int(schedule.dst[d]) == src:
                waits.append(recv_at[d])
            elif int(schedule.src[d]) == src:
                waits.append(sent_at[d])
            else:
                raise ScheduleError(f"op {i} ({src}->{dst}) waits for op {d} "
                                    f"({int(schedule.src[d])}->{int(schedule.dst[d])}), a "
                                    f"send between two other GPUs: MSCCL cannot say that")
        carried = {}
        for piece, contributors in data:
            mask = _mask(contributors)
            if slots[src].get(piece) != mask:
                raise ScheduleError(f"op {i} ({src}->{dst}) sends piece {piece} summed over "
                                    f"{_show(mask)} but GPU {src}'s copy then holds "
                                    f"{_show(slots[src].get(piece, 0))}: it would need "
                                    f"scratch buffers")
            carried[int(piece)] = mask
        send_tb = tbs.setdefault((src, "s", dst), [])
        recv_tb = tbs.setdefault((dst, "r", src), [])
        # Extra dependencies become nop steps ahead of the send (msccl-tools' expansion).
        unique = list(dict.fromkeys(w for w in waits if w[0] != (src, "s", dst)))
        for w in unique[1:]:
            send_tb.append(("nop", None, None, 0, w))
        for first, count in _runs(list(carried)):
            send_tb.append(("s", (buf, first), None, count, unique[0] if unique else None))
            unique = unique[:0]            # the dependency is met once for the whole op
            reduce = op in _REDUCING and all(
                slots[dst].get(p, 0) and not slots[dst].get(p, 0) & carried[p]
                for p in range(first, first + count))
            recv_tb.append(("rrc" if reduce else "r", (buf, first) if reduce else None,
                            (buf, first), count, None))
        sent_at[i] = ((src, "s", dst), len(send_tb) - 1)
        recv_at[i] = ((dst, "r", src), len(recv_tb) - 1)
        for p, mask in carried.items():
            held = slots[dst].get(p, 0)
            slots[dst][p] = held | mask if (op in _REDUCING and held & mask == 0) else mask
    return _xml(schedule, op, n, pieces, per, tbs, name)


def _xml(schedule: Schedule, op: str, n: int, pieces: int, per: int, tbs, name) -> str:
    ids = {}
    gpus: list[dict[str, Any]] = []
    for g in range(n):
        keys = sorted(k for k in tbs if k[0] == g)
        for j, key in enumerate(keys):
            ids[key] = j
        gpus.append({"id": g, "keys": keys})
    for gpu in gpus:
        out = []
        for key in gpu.pop("keys"):
            steps = [(kind, s, d, cnt, None if dep is None else (ids[dep[0]], dep[1]))
                     for kind, s, d, cnt, dep in tbs[key]]
            peer = key[2]
            out.append({"id": ids[key], "send": peer if key[1] == "s" else -1,
                        "recv": peer if key[1] == "r" else -1, "chan": 0, "steps": steps})
        gpu["tbs"] = out
        gpu["chunks"] = {"allreduce": (pieces, pieces, 0), "allgather": (per, pieces, 0),
                         "reducescatter": (pieces, per, 0)}[op]
    return algo_xml(name=name or str(schedule.meta.get("algorithm") or "netsim"),
                    coll=EXPORTABLE[op], ngpus=n, nchunksperloop=pieces, inplace=True,
                    gpus=gpus)


def _mask(contributors) -> int:
    if isinstance(contributors, (int, np.integer)):
        return int(contributors)
    mask = 0
    for r in contributors:
        mask |= 1 << int(r)
    return mask


def _show(mask: int) -> str:
    return "{" + ",".join(str(r) for r in range(mask.bit_length()) if mask >> r & 1) + "}"
