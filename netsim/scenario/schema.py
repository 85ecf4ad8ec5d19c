"""Pydantic building blocks for scenario files: unit-aware fields and one-line errors.

YAML pitfalls handled here: PyYAML reads ``1e9`` as a string (the unit parsers take it as a
number), and YAML 1.1 reads ``3_3`` as the integer 33, which would turn grid node names
into numbers: :func:`load_yaml` keeps digits with underscores a string.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from ..errors import InputError
from ..units import parse_rate, parse_size, parse_time

__all__ = ["Strict", "Size", "Rate", "Time", "validation_message", "validate", "load_yaml",
           "yaml_line"]


class Strict(BaseModel):
    """Base of every scenario model: unknown keys are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _unit(parser, minimum: float, strict: bool, unit: str):
    """Parse with ``parser`` and require ``>= minimum`` (``> minimum`` when ``strict``)."""
    def convert(value: Any) -> Any:
        if not isinstance(value, (str, int, float)):
            return value                     # pydantic reports the wrong type
        number = parser(value)
        if number < minimum or (strict and number == minimum):
            raise ValueError(f"must be {'>' if strict else '>='} {minimum:g} {unit}")
        return number
    return BeforeValidator(convert)


Size = Annotated[float, _unit(parse_size, 0, False, "bytes")]   # '64MiB', '1e9', 1048576
Rate = Annotated[float, _unit(parse_rate, 0, True, "bytes/s")]  # '25GB/s', '400Gbps'
Time = Annotated[float, _unit(parse_time, 0, False, "s")]       # '711ns', '1us'


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
    import difflib

    if len(loc) != 1:
        return ""
    fields = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[0]), fields, n=1, cutoff=0.6)
    return f": did you mean {close[0]!r}?" if close else f" (allowed: {', '.join(fields)})"


class _Loader(yaml.SafeLoader):
    """SafeLoader whose ints and floats have no underscores (``3_3`` stays a string) and
    that refuses a key given twice in one mapping (PyYAML keeps the last, silently)."""

    def construct_mapping(self, node, deep=False):
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":    # `<<: *defaults` may override
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:                # an unhashable key: let PyYAML report it
                continue
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (lines {first} and "
                                f"{key_node.start_mark.line + 1})", key_node.start_mark)
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"^(?:[-+]?0b[0-1]+|[-+]?0[0-7]+|[-+]?(?:0|[1-9][0-9]*)|[-+]?0x[0-9a-fA-F]+)$"),
    list("-+0123456789"))
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^(?:[-+]?(?:[0-9][0-9]*)?\.[0-9]*(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)"
               r"|\.(?:nan|NaN|NAN))$"),
    list("-+0123456789."))


def load_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """(data, composed node tree for line numbers) of a YAML document; one-line errors."""
    try:
        return yaml.load(text, Loader=_Loader), yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(f"{source}: {where}invalid YAML: {problem}") from None


def yaml_line(root: yaml.Node | None, loc: tuple) -> int | None:
    """1-based line of the YAML node at ``loc`` (or of the deepest ancestor that exists)."""
    node, line = root, None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) \
                and 0 <= part < len(node.value):
            node = node.value[part]
        else:
            node = None
    return node.start_mark.line + 1 if node is not None else line
