"""Pydantic building blocks for scenario files: unit-aware fields and one-line errors.

YAML pitfalls handled here: PyYAML reads ``1e9`` as a string (the unit parsers take it as a
number), and YAML 1.1 reads ``3_3`` as the integer 33, which would turn grid node names
into numbers: :func:`load_yaml` keeps digits with underscores a string. YAML 1.1 also
reads ``yes``, ``no``, ``on`` and ``off`` as booleans, and pydantic (and Python) take a
boolean for the number 1 or 0: ``ranks: yes`` ran one rank. :class:`NoBoolNumbers`
refuses a boolean in a numeric field, and the unit types refuse it too.
"""

from __future__ import annotations

import types
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import (AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError,
                      ValidationInfo, field_validator)

from ..errors import InputError, did_you_mean
from ..units import parse_rate, parse_size, parse_time
from .yamlio import load_yaml, yaml_line

__all__ = ["Strict", "NoBoolNumbers", "BOOL_NOT_NUMBER", "Size", "Rate", "Time", "validation_message", "validate", "load_yaml",
           "yaml_line",
           "one_of"]


#: The message for a boolean where a number is due.
BOOL_NOT_NUMBER = ("expected a number, not a boolean (YAML reads yes, no, on and off as "
                   "booleans too)")


def _admits(annotation: Any, kinds: tuple[type, ...]) -> bool:
    """Does a field annotation take a value of one of ``kinds`` (through Optional, unions
    and Annotated)?"""
    if annotation is Any:
        return bool in kinds
    if isinstance(annotation, type):
        return issubclass(annotation, kinds) and (annotation is not bool or bool in kinds)
    if get_origin(annotation) in (Union, types.UnionType, Annotated):
        args = get_args(annotation)
        return any(_admits(a, kinds) for a in (args[:1] if get_origin(annotation) is
                                               Annotated else args))
    return False


class NoBoolNumbers(BaseModel):
    """A model whose numeric fields refuse booleans (``ranks: yes`` is not one rank)."""

    @field_validator("*", mode="before")
    @classmethod
    def _no_bool_numbers(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) and info.field_name is not None:
            field = cls.model_fields[info.field_name]
            if _admits(field.annotation, (int, float)) \
                    and not _admits(field.annotation, (bool,)) and not _says_so(field):
                raise ValueError(BOOL_NOT_NUMBER)
        return value


def _says_so(field) -> bool:
    """Does the field convert with a unit parser, which refuses booleans itself?"""
    return any(getattr(getattr(m, "func", None), "refuses_bool", False) for m in field.metadata)


class Strict(NoBoolNumbers):
    """Base of every scenario model: unknown keys are errors, not silently ignored, and
    numbers are not booleans."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _unit(parser, minimum: float, strict: bool, unit: str):
    """Parse with ``parser`` and require ``>= minimum`` (``> minimum`` when ``strict``)."""
    def convert(value: Any) -> Any:
        if not isinstance(value, (str, int, float)):
            return value                     # pydantic reports the wrong type
        number = parser(value)
        if number < minimum or (strict and number == minimum):
            raise ValueError(f"must be {'>' if strict else '>='} {minimum:g} {unit}, "
                             f"got {value!r}")
        return number
    convert.refuses_bool = True              # the parsers say 'True is not a size'
    return BeforeValidator(convert)


Size = Annotated[float, _unit(parse_size, 0, False, "bytes")]   # '64MiB', '1e9', 1048576
Rate = Annotated[float, _unit(parse_rate, 0, True, "bytes/s")]  # '25GB/s', '400Gbps'
Time = Annotated[float, _unit(parse_time, 0, False, "s")]       # '711ns', '1us'


def one_of(what: str, choices) -> AfterValidator:
    """A field annotation that refuses a name outside ``choices`` with a did-you-mean
    hint: ``op: Annotated[str, one_of("phase op", PHASE_OPS)]``.

    >>> from pydantic import TypeAdapter
    >>> TypeAdapter(Annotated[str, one_of("colour", ("red", "blue"))]).validate_python("blue")
    'blue'
    """
    from ..errors import unknown_name

    def check(name):
        if name not in choices:
            raise unknown_name(what, name, choices)   # a ValueError: pydantic names the field
        return name
    return AfterValidator(check)


def validation_message(err: ValidationError, source: str, prefix: str = "",
                       root: yaml.Node | None = None,
                       model: type[BaseModel] | None = None) -> str:
    """The first pydantic error as ``file: field.path: message (got value) (line N)`` on one
    line (the line when ``root``, the file's composed YAML, is given; a did-you-mean for an
    unknown top-level field of ``model``)."""
    first = err.errors()[0]
    path = [int(p) if p.isdigit() else p for p in prefix.split(".") if p != ""]
    loc = ".".join(f"[{p}]" if isinstance(p, int) else str(p) for p in (*path, *first["loc"]))
    loc = loc.replace(".[", "[")
    msg = first["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    if first["type"] == "extra_forbidden":
        msg = "unknown field" + (_field_hint(model, first["loc"]) if model else "")
    if first["type"] == "missing":
        msg = "missing (required)"
    value = first.get("input")
    quiet = first["type"] == "missing" or isinstance(value, dict) or repr(value) in msg \
        or (isinstance(value, str) and value in msg)
    shown = "" if quiet else f" (got {value!r})"
    line = yaml_line(root, (*path, *first["loc"])) if root is not None else None
    shown += f" (line {line})" if line else ""
    return f"{source}: {loc}: {msg}{shown}" if loc else f"{source}: {msg}{shown}"


def validate(model: type[BaseModel], data: Any, source: str | Path, prefix: str = "",
             root: yaml.Node | None = None):
    """``model.model_validate(data)`` with errors turned into one-line :class:`InputError`."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InputError(validation_message(err, str(source), prefix, root, model)) from None


def _field_hint(model: type[BaseModel], loc: tuple) -> str:
    if len(loc) != 1:
        return ""
    fields = list(model.model_fields)
    return did_you_mean(loc[0], fields, otherwise=f" (allowed: {', '.join(fields)})")


# -- JSON Schema of the unit types (``netsim schema``) ------------------------------------
# Kept in one block at the end: the types above are re-annotated, so models importing them
# get a schema of "a number, or a unit string" instead of "a number".

#: A number followed by an optional unit word (``64MiB``, ``25GB/s``, ``711ns``, ``1e9``);
#: no sign, so negative values are refused by the schema as by the parsers' limits.
UNIT_PATTERN = r"^\s*\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?\s*[A-Za-z/]*\s*$"


def unit_json_schema(unit: str, example: str, *, exclusive: bool = False):
    """The JSON Schema of a unit field (a pydantic ``WithJsonSchema``): a number in
    ``unit`` (>= 0, or > 0 when ``exclusive``) or a unit string such as ``example``;
    what :mod:`netsim.units` parses.

    >>> unit_json_schema("bytes/s", "450GB/s", exclusive=True).json_schema["anyOf"][0]
    {'type': 'number', 'exclusiveMinimum': 0}
    """
    from pydantic import WithJsonSchema

    bound = {"exclusiveMinimum": 0} if exclusive else {"minimum": 0}
    return WithJsonSchema({"anyOf": [{"type": "number", **bound},
                                     {"type": "string", "pattern": UNIT_PATTERN}],
                           "description": f"{unit}: a number, or a string with a unit "
                                          f"such as {example!r}"})


Size = Annotated[Size, unit_json_schema("bytes", "64MiB")]                 # type: ignore
Rate = Annotated[Rate, unit_json_schema("bytes/s", "25GB/s", exclusive=True)]  # type: ignore
Time = Annotated[Time, unit_json_schema("s", "711ns")]                     # type: ignore
__all__ += ["unit_json_schema", "UNIT_PATTERN"]
