"""Faults as users write them (CLI options, scenario entries), resolved against a machine.

A :class:`FaultSpec` is what the user asked for, before the topology is known: a target
(``'0_0->0_1'`` one link, ``'1_1<->1_2'`` both directions of a cable, ``'1_1<->1_2#2'``
plane 2 of a cable, ``'node:3_3'`` every link of a node), a kind (fail or degrade), a
factor and a time. :meth:`FaultSpec.resolve` turns it into the engine's
:class:`~netsim.engine.faults.Fault` for one topology, with a one-line error naming where
the spec came from (``--fail-link``, ``scenario.yaml: jobs[1].faults[0]``) when it names a
link or node the machine does not have.

>>> from netsim.topology import mesh
>>> spec = parse_fault_option("0_0<->0_1@20us", "fail")
>>> spec.label
'fail 0_0<->0_1 @20us'
>>> topo = mesh((2, 2))
>>> [topo.link_names[i] for i in spec.resolve(topo).links]
['0_0->0_1', '0_1->0_0']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..engine.faults import Fault, degrade_links, fail_links, fail_nodes
from ..errors import InputError, NetsimError, did_you_mean
from ..units import format_time, parse_time

__all__ = ["FaultSpec", "LabeledFault", "parse_fault_option", "resolve_faults",
           "fault_summary", "rerouted_flows"]


@dataclass(frozen=True)
class LabeledFault(Fault):
    """An engine :class:`Fault` that remembers how the user wrote it."""

    label: str = ""


@dataclass(frozen=True)
class FaultSpec:
    """A fault before the topology is known; ``where`` names its origin in errors."""

    target: str
    kind: str = "fail"             # 'fail' or 'degrade'
    factor: float = 0.0            # degrade: bandwidth multiplier in (0, 1]
    time: float = 0.0              # s
    where: str = "fault"

    def __post_init__(self) -> None:
        if self.kind not in ("fail", "degrade"):
            raise InputError(f"{self.where}: fault kind must be 'fail' or 'degrade', "
                             f"got {self.kind!r}")
        if not isinstance(self.target, str) or not self.target.strip():
            raise InputError(f"{self.where}: expected a link ('A->B'), a cable ('A<->B') or "
                             f"'node:NAME', got {self.target!r}")
        if not (math.isfinite(self.time) and self.time >= 0):
            raise InputError(f"{self.where}: fault time must be a finite time >= 0, "
                             f"got {self.time!r}")
        if self.kind == "degrade" and not 0.0 < self.factor <= 1.0:
            raise InputError(f"{self.where}: degrade factor must be in (0, 1], "
                             f"got {self.factor!r}")

    @property
    def label(self) -> str:
        """``'fail 1_1<->1_2 @20us'``, ``'degrade 0_0->0_1 x0.5'`` (for tables)."""
        what = "fail" if self.kind == "fail" else "degrade"
        factor = f" x{self.factor:g}" if self.kind == "degrade" else ""
        when = f" @{format_time(self.time).replace(' ', '')}" if self.time else ""
        return f"{what} {self.target}{factor}{when}"

    def resolve(self, topology) -> LabeledFault:
        """The engine fault on ``topology``; unknown links and nodes are one-line errors."""
        try:
            fault = self._fault(topology)
        except NetsimError as err:
            raise InputError(f"{self.where}: {err}") from None
        return LabeledFault(fault.links, fault.time, fault.factor, self.label)

    def _fault(self, topology) -> Fault:
        target = self.target.strip()
        if target.startswith("node:"):
            name = target[len("node:"):]
            if name not in topology.node_index:
                raise _missing(topology, "node", name, topology.node_names)
            fault = fail_nodes(topology, [name], self.time)
            if not fault.links:
                raise InputError(f"node {name!r} has no links")
            return fault if self.kind == "fail" else Fault(fault.links, self.time, self.factor)
        links = [_link(topology, name) for name in _link_names(target)]
        if self.kind == "degrade":
            return degrade_links(topology, links, self.factor, self.time)
        return fail_links(topology, links, self.time)


def _link_names(target: str) -> list[str]:
    """``'A<->B#2'`` -> ``['A->B#2', 'B->A#2']``; ``'A->B'`` -> ``['A->B']``."""
    if "<->" not in target:
        return [target]
    a, b = (part.strip() for part in target.split("<->", 1))
    b, hash_, plane = b.partition("#")
    return [f"{a}->{b}{hash_}{plane}", f"{b}->{a}{hash_}{plane}"]


def _link(topology, name: str) -> int:
    if name in topology.link_index:
        return topology.link_index[name]
    if "->" in name:
        src = name.split("->", 1)[0]
        if src not in topology.node_index:
            raise _missing(topology, "node", src, topology.node_names)
        raise _missing(topology, "link", name,
                       [n for n in topology.link_names if n.startswith(f"{src}->")])
    error = _missing(topology, "link", name, topology.link_names[:10000])
    if "did you mean" in str(error):
        raise error
    raise InputError(f"{error}: write 'A->B' (one direction), 'A<->B' (both directions) or "
                     f"'node:NAME'")


def _missing(topology, what: str, name: str, choices: Sequence[str]) -> InputError:
    """``topology 'm' has no link 'x': did you mean 'y'?`` (a hint only when one is close)."""
    return InputError(f"topology {topology.name!r} has no {what} {name!r}"
                      f"{did_you_mean(name, choices)}")


def parse_fault_option(text: str, kind: str, option: str | None = None) -> FaultSpec:
    """A CLI fault: ``LINK[@TIME]`` (``kind='fail'``) or ``LINK=FACTOR[@TIME]`` (degrade)."""
    option = option or ("--fail-link" if kind == "fail" else "--degrade-link")
    where = f"{option} {text!r}"
    body, at, when = str(text).partition("@")
    time = parse_time(when, f"{option} time") if at else 0.0
    if not time >= 0:
        raise InputError(f"{where}: the time must be >= 0, got {when!r}")
    factor = 0.0
    if kind == "degrade":
        body, eq, value = body.rpartition("=")
        if not eq:
            raise InputError(f"{where}: expected LINK=FACTOR[@TIME], e.g. 0_0->0_1=0.5@10us")
        try:
            factor = float(value)
        except ValueError:
            raise InputError(f"{where}: factor {value!r} is not a number") from None
    return FaultSpec(body.strip(), kind, factor, time, where)


def resolve_faults(specs: Iterable[FaultSpec | Fault], topology) -> list[Fault]:
    """Engine faults on ``topology`` (Fault objects pass through)."""
    return [s.resolve(topology) if isinstance(s, FaultSpec) else s for s in specs]


def fault_summary(faults: Sequence[Fault]) -> str:
    """``'fail 1_1<->1_2 @20us; degrade 0_0->0_1 x0.5'`` (labels, else link counts)."""
    parts = []
    for fault in faults:
        label = getattr(fault, "label", "")
        if not label:
            what = "fail" if fault.is_failure else f"degrade x{fault.factor:g}"
            when = f" @{format_time(fault.time).replace(' ', '')}" if fault.time else ""
            label = f"{what} {len(fault.links)} link{'s' if len(fault.links) != 1 else ''}{when}"
        parts.append(label)
    return "; ".join(parts)


def rerouted_flows(result: Any) -> int:
    """Flows moved off failed links during a run (from ``result.meta['faults']``)."""
    return int(sum(entry.get("rerouted_flows", 0) for entry in result.meta.get("faults", ())))
