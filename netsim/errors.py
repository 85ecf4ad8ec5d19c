"""Exceptions that carry one-line, user-facing messages.

Every error a user can cause by bad input is a :class:`NetsimError`; the CLI
prints ``netsim: error: <message>`` and exits non-zero without a traceback.
Messages name the file, field and value where they are known.
"""

from __future__ import annotations

from typing import Any, Iterable

__all__ = ["NetsimError", "InputError", "UnitError", "TopologyError", "RoutingError",
           "ScheduleError", "SimulationError", "OutputError", "ResourceError",
           "unknown_name", "did_you_mean", "refuse_unknown_keys", "positive_int"]


class NetsimError(Exception):
    """Base class of every error caused by the user's input."""

    exit_code = 1


class InputError(NetsimError, ValueError):
    """A malformed file, field or argument."""

    exit_code = 2


class UnitError(InputError):
    """A quantity string with an unknown or wrong unit, e.g. ``'25GB'`` where a rate is due."""


class TopologyError(InputError):
    """An impossible topology: unknown family, missing node, non-positive bandwidth..."""


class RoutingError(NetsimError):
    """No path between two endpoints, or an explicit path that is not a path."""


class ScheduleError(InputError):
    """A malformed schedule: unknown rank, negative bytes, cyclic dependencies..."""


class SimulationError(NetsimError):
    """The engine cannot proceed (e.g. a flow with no capacity left on its path)."""


class OutputError(NetsimError):
    """An output cannot be written: disk full, read-only file system, no permission."""


class ResourceError(InputError):
    """A run would need more memory than the budget (``--max-memory`` or what the machine
    has); refused before allocating, with the estimate."""


def unknown_name(what: str, name: str, choices, error: type[InputError] = InputError
                 ) -> InputError:
    """An error for an unknown ``name`` that suggests the closest of ``choices``.

    >>> str(unknown_name("topology family", "mseh", ["mesh", "torus"]))
    "unknown topology family 'mseh': did you mean 'mesh'?"
    """
    choices = sorted(str(c) for c in choices)
    hint = did_you_mean(name, choices, cutoff=0.5,
                        otherwise=f" (choose from {', '.join(choices)})")
    return error(f"unknown {what} {name!r}{hint}")


def did_you_mean(name: Any, choices: Iterable[Any], *, cutoff: float = 0.6,
                 otherwise: str = "") -> str:
    """``": did you mean 'x'?"`` for the closest of ``choices``, else ``otherwise``.

    >>> did_you_mean("bandwith", ["bandwidth", "latency"])
    ": did you mean 'bandwidth'?"
    """
    import difflib

    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=1,
                                      cutoff=cutoff)
    return f": did you mean {close[0]!r}?" if close else otherwise


def refuse_unknown_keys(obj: Any, allowed: Iterable[str], where: str,
                        error: type[NetsimError] = InputError) -> None:
    """Unknown keys of a mapping read from a file are errors (a typo such as 'bandwith'
    must not be ignored): ``where: unknown field 'x': did you mean 'y'?``.

    >>> refuse_unknown_keys({"bandwith": 1}, ["bandwidth"], "links[0]")
    Traceback (most recent call last):
    ...
    netsim.errors.InputError: links[0]: unknown field 'bandwith': did you mean 'bandwidth'?
    """
    allowed = tuple(allowed)
    for key in obj:
        if key not in allowed:
            hint = did_you_mean(key, allowed, otherwise=f" (allowed: {', '.join(allowed)})")
            raise error(f"{where}: unknown field {key!r}{hint}")


def positive_int(value: Any, what: str) -> int:
    """``value`` as an int >= 1 (numpy integers too; bools, floats and strings refused).

    >>> positive_int(True, "parallel degree tp")
    Traceback (most recent call last):
    ...
    netsim.errors.InputError: parallel degree tp must be a positive integer, got True
    """
    import operator

    try:
        number = operator.index(value)
    except TypeError:
        number = 0
    if isinstance(value, bool) or number < 1:
        raise InputError(f"{what} must be a positive integer, got {value!r}")
    return number
