"""Reading YAML the way netsim's files need it: one place for both file loaders.

* ``3_3`` stays a string (YAML 1.1 reads digits with underscores as the int 33, which
  would turn grid node names into numbers);
* a key given twice in one mapping is an error (PyYAML keeps the last, silently);
* errors are one line with the line number; :func:`yaml_line` finds the line of a field
  for validation messages; :func:`read_text` turns unreadable and binary files into
  one-line errors.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError

__all__ = ["load_yaml", "yaml_line", "read_text"]


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path``; unreadable or binary files are one-line errors."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: cannot read {what}: not a UTF-8 text file") from None


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
