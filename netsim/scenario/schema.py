"""Pydantic building blocks for scenario files: unit-aware fields and one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from ..errors import InputError
from ..units import parse_rate, parse_size, parse_time

__all__ = ["Strict", "Size", "Rate", "Time", "validation_message", "validate"]


class Strict(BaseModel):
    """Base of every scenario model: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _unit(parser):
    def convert(value: Any) -> Any:
        return parser(value) if isinstance(value, (str, int, float)) else value
    return BeforeValidator(convert)


Size = Annotated[float, _unit(parse_size)]    # bytes; accepts '64MiB', '1e9', 1048576
Rate = Annotated[float, _unit(parse_rate)]    # bytes/s; accepts '25GB/s', '400Gbps'
Time = Annotated[float, _unit(parse_time)]    # s; accepts '711ns', '1us'


def validation_message(err: ValidationError, source: str, prefix: str = "") -> str:
    """The first pydantic error as ``file: field.path: message (got value)`` on one line."""
    first = err.errors()[0]
    loc = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in (*prefix.split("."),
                                                                          *first["loc"]) if p != "")
    loc = loc.replace(".[", "[")
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if first["type"] == "extra_forbidden":
        msg = "unknown field"
    value = first.get("input")
    shown = "" if first["type"] in ("missing",) or isinstance(value, dict) else f" (got {value!r})"
    return f"{source}: {loc}: {msg}{shown}" if loc else f"{source}: {msg}{shown}"


def validate(model: type[BaseModel], data: Any, source: str | Path, prefix: str = ""):
    """``model.model_validate(data)`` with errors turned into one-line :class:`InputError`."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_message(err, str(source), prefix)) from None
