"""The default algorithm: what the machine's own collective library runs there.

A preset says, in its ``library:`` block (:class:`netsim.topology.io.LibrarySpec`), which
netsim algorithm reproduces its vendor library's choice for each op: NCCL's model
(``nccl``) on NVIDIA machines, tt-metal's CCLs on Tenstorrent machines. ``--algo default``
(the CLI's default, and :func:`~netsim.run.collective.run_collective`'s
``algorithm="default"``) runs that algorithm; an op the library does not name, or a
machine without a library (generic specs such as ``mesh:4x4``), runs ``auto``: the
fastest algorithm netsim knows, which is a different question ("what could this machine
do?") and is asked by name.

>>> from netsim.topology import parse_topology
>>> resolve_default("allreduce", parse_topology("dgx-h100"), "default").algorithm
'nccl'
>>> resolve_default("allreduce", parse_topology("mesh:4x4"), "default").algorithm
'auto'
>>> resolve_default("allreduce", parse_topology("mesh:4x4"), "ring").algorithm
'ring'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..errors import InputError

__all__ = ["DEFAULT_ALGORITHM", "Resolved", "library_of", "resolve_default", "phase_algorithm",
           "ran_text", "ideal_links_note"]

#: The algorithm name that means "what this machine's library runs".
DEFAULT_ALGORITHM = "default"


@dataclass(frozen=True)
class Resolved:
    """An algorithm request after ``default`` is resolved: the name (or object) to run,
    the library's extra options (``AlgoOptions.extra`` keys) and the library's name
    (None unless the default came from a library)."""

    algorithm: Any
    extra: Mapping[str, Any] = field(default_factory=dict)
    library: str | None = None


def library_of(topology) -> dict | None:
    """The ``library:`` block of ``topology``'s preset or file (plain values), or None."""
    meta = getattr(topology, "meta", None) or {}
    library = meta.get("library")
    return library if isinstance(library, Mapping) else None


def resolve_default(op: str, topology, algorithm) -> Resolved:
    """``algorithm`` as it runs on ``topology``: ``'default'`` becomes the library's
    algorithm for ``op`` (or ``'auto'``); any other request is returned as it is.

    A library naming an algorithm that netsim does not have for ``op`` is refused in one
    line naming the file and the field."""
    if not (isinstance(algorithm, str) and algorithm == DEFAULT_ALGORITHM):
        return Resolved(algorithm)
    library = library_of(topology)
    name = (library or {}).get("algorithms", {}).get(op)
    if name is None:
        return Resolved("auto")
    from ..algorithms.registry import algorithms_for

    known = [a.name for a in algorithms_for(op)]
    if name not in known:
        where = topology.meta.get("source_file", topology.name)
        raise InputError(f"{where}: library.algorithms.{op}: {name!r} is not a netsim {op} "
                         f"algorithm (one of {', '.join(known)})")
    return Resolved(name, dict(library.get("options") or {}), str(library.get("name")))


def phase_algorithm(op: str, topology, algorithm: str) -> str:
    """The algorithm a phase of a placement study or a plan runs for ``op``: ``'default'``
    is what the machine's library runs (its preset's ``library:`` block: NCCL's model on
    NVIDIA presets, tt-metal's CCLs on Tenstorrent ones), or ``ring`` where it names
    none or ``auto`` (a phase is one algorithm per strategy, not a search per size); any
    other name is returned as it is. The caller maps ring to ``direct`` for all-to-all and
    send/recv.

    >>> from netsim.topology import parse_topology
    >>> [phase_algorithm("allreduce", parse_topology(t), "default")
    ...  for t in ("dgx-h100", "galaxy-wh", "mesh:4x4")]
    ['nccl', 'tt_metal', 'ring']
    >>> phase_algorithm("alltoall", parse_topology("dgx-h100"), "default")
    'direct'
    """
    if algorithm != DEFAULT_ALGORITHM:
        return algorithm
    named = ((library_of(topology) or {}).get("algorithms") or {}).get(op) \
        if topology is not None else None
    return named if named and named != "auto" else "ring"


def ran_text(records) -> str:
    """What ran over a sweep's records, for legends and titles: the algorithm of each run
    (NCCL's pick, ``nccl ring/LL``, where the record has one), consecutive repeats merged:
    ``'nccl ring/LL -> nccl nvls/Simple'``, ``'auto: oneshot -> direct -> innetwork'``.

    >>> ran_text([{"algorithm": "oneshot", "candidates": [{"algorithm": "oneshot"}]},
    ...           {"algorithm": "direct", "candidates": [{"algorithm": "direct"}]}])
    'auto: oneshot -> direct'
    >>> ran_text([{"algorithm": "nccl", "nccl": "ring/LL/1ch"},
    ...           {"algorithm": "nccl", "nccl": "ring/LL/8ch", "nccl_version": "2.30.7"}])
    'nccl ring/LL'
    >>> ran_text([{"algorithm": "nccl", "nccl": "nvls_tree/Simple/8ch",
    ...            "nccl_version": "2.26.2"}])
    'nccl nvls_tree/Simple (NCCL 2.26.2)'
    """
    names: list[str] = []
    for record in records:
        name = str(record.get("algorithm", "?"))
        if record.get("nccl"):      # algorithm/protocol; the channel count is in the table
            name += " " + "/".join(str(record["nccl"]).split("/")[:2])
        elif record.get("tt_metal"):    # ring or line (and the link count)
            name += " " + str(record["tt_metal"])
        if not names or names[-1] != name:
            names.append(name)
    auto = any(record.get("candidates") for record in records)
    text = ("auto: " if auto else "") + " -> ".join(names)
    # an older NCCL release's tuner (a log's, or --nccl VERSION=) picks differently: say so
    from ..algorithms.nccl import NCCL_VERSION, version_text

    releases = {r["nccl_version"] for r in records if r.get("nccl_version")}
    if releases - {version_text(NCCL_VERSION)}:
        text += f" (NCCL {', '.join(sorted(releases))})"
    return text


def ideal_links_note(topology, alpha: float | None) -> str | None:
    """``'ideal links: no latency, no per-message cost'`` for a run whose links have no
    latency and whose messages cost nothing to send (a generic spec such as ``mesh:4x4``
    without ``lat=`` or ``--alpha``); None otherwise. Titles and legends carry it, so a
    curve that is flat from 1 KiB up says why (real links have latency: see the
    calibrated presets).

    >>> from netsim.topology import parse_topology
    >>> ideal_links_note(parse_topology("mesh:4x4"), None)
    'ideal links: no latency, no per-message cost'
    >>> ideal_links_note(parse_topology("mesh:4x4,lat=500ns"), None) is None
    True
    """
    if topology is None:
        return None
    from ..topology.calibration import calibrated_alpha

    per_message = calibrated_alpha(topology) if alpha is None else float(alpha)
    if per_message > 0 or (topology.num_links and float(topology.latency.max()) > 0):
        return None
    return "ideal links: no latency, no per-message cost"
