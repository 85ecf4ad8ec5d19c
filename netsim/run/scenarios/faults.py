"""Faults in scenario files: a ``faults:`` list in the header (every job) or in a job.

.. code-block:: yaml

    faults:
      - {link: "1_1<->1_2", at: 20us}            # both directions of a cable fail at 20 us
      - {degrade: "0_0->0_1", factor: 0.5}       # one link at half bandwidth from the start
      - {node: "3_3"}                            # every link of a node fails
      - {node: "2_2", factor: 0.25, at: 1ms}     # every link of a node slows down

Targets are written as on the command line (:mod:`netsim.run.faultspec`): ``A->B`` one link,
``A<->B`` both directions (``A<->B#k`` plane k of a bundle), ``node:NAME`` (or ``node:``).
Job kinds opt in by registering with ``faults=True`` and resolving ``ctx.faults`` on their
topology.
"""

from __future__ import annotations

import math
from typing import Annotated, Any

from pydantic import BeforeValidator, model_validator

from ..faultspec import FaultSpec
from ..._inputs.schema import Strict, Time

__all__ = ["FaultEntry", "fault_specs"]


def _name(value: Any) -> Any:
    # `node: 5` is an int in YAML; node names are strings.
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


Name = Annotated[str, BeforeValidator(_name)]


class FaultEntry(Strict):
    """One fault: exactly one of ``link`` (fails), ``node`` (fails, or degrades with
    ``factor``) and ``degrade`` (with ``factor`` in (0, 1]); ``at`` is when (default 0 s)."""

    link: Name | None = None
    node: Name | None = None
    degrade: Name | None = None
    factor: float | None = None
    at: Time = 0.0

    @model_validator(mode="after")
    def _consistent(self) -> "FaultEntry":
        given = [k for k in ("link", "node", "degrade") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of 'link', 'node' and 'degrade'")
        if self.degrade is not None and self.factor is None:
            raise ValueError("'degrade' needs a 'factor' in (0, 1]")
        if self.link is not None and self.factor is not None:
            raise ValueError("a 'link' fails; to slow it down write {degrade: LINK, factor: F}")
        if self.factor is not None and not 0.0 < self.factor <= 1.0:
            raise ValueError(f"factor must be in (0, 1], got {self.factor!r}")
        if not (math.isfinite(self.at) and self.at >= 0):
            raise ValueError(f"'at' must be a finite time >= 0, got {self.at!r}")
        return self

    def spec(self, where: str) -> FaultSpec:
        if self.node is not None:
            target = self.node if self.node.startswith("node:") else f"node:{self.node}"
        else:
            target = self.link if self.link is not None else self.degrade
        kind = "fail" if self.factor is None else "degrade"
        return FaultSpec(target, kind, self.factor or 0.0, self.at, where)


def fault_specs(entries: Any, source: str, prefix: str, root=None) -> tuple[FaultSpec, ...]:
    """Validate a ``faults:`` list at ``prefix`` (``'faults'``, ``'jobs.2.faults'``)."""
    from ...errors import InputError
    from ..._inputs.schema import validate, yaml_line

    where = _loc(prefix)
    if not isinstance(entries, list):
        line = yaml_line(root, _path(prefix)) if root is not None else None
        suffix = f" (line {line})" if line else ""
        raise InputError(f"{source}: {where}: expected a list of faults such as "
                         f"[{{link: 'A<->B', at: 20us}}], got {entries!r}{suffix}")
    specs = []
    for n, entry in enumerate(entries):
        model = validate(FaultEntry, entry, source, prefix=f"{prefix}.{n}", root=root)
        specs.append(model.spec(f"{source}: {where}[{n}]"))
    return tuple(specs)


def _path(prefix: str) -> tuple:
    return tuple(int(p) if p.isdigit() else p for p in prefix.split("."))


def _loc(prefix: str) -> str:
    text = ""
    for part in _path(prefix):
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text
