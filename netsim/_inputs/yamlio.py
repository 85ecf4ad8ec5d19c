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

__all__ = ["load_yaml", "yaml_line", "read_text", "read_bytes"]


def read_bytes(path: str | Path, what: str = "file") -> bytes:
    """The bytes of ``path``; unreadable and oversized files are one-line errors. At most
    the input bound is read, so a device such as ``/dev/zero`` or a huge file is refused
    without filling the memory."""
    from ..budget import MAX_INPUT_BYTES, memory_budget

    # Parsed text takes some ten times its size in Python objects.
    limit = min(MAX_INPUT_BYTES, memory_budget() // 10)
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        raise InputError(f"{path}: cannot read {what}: no such file") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read {what}: {err.strerror or err}") from None
    if len(data) > limit:
        from ..units import format_size

        raise InputError(f"{path}: cannot read {what}: larger than the {format_size(limit)} "
                         f"an input file may have")
    return data


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (a byte-order mark is dropped); unreadable, binary and
    oversized files are one-line errors (see :func:`read_bytes`)."""
    try:
        return read_bytes(path, what).decode("utf-8-sig")
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
        return yaml.constructor.SafeConstructor.construct_mapping(self, node, deep)

    def construct_yaml_int(self, node):
        try:
            return yaml.constructor.SafeConstructor.construct_yaml_int(self, node)
        except ValueError:           # more digits than int() converts (4,300 by default)
            raise yaml.constructor.ConstructorError(
                None, None, f"the integer {node.value[:12]}... has {len(node.value):,} "
                            f"characters, too many to be a number", node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:int", _Loader.construct_yaml_int)


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


# The same rules on libyaml's parser when PyYAML has it: a 40,000-line topology file reads
# in 5 s instead of 20. A document it refuses is read again by _Loader, whose messages
# the error corpus pins (libyaml words them differently).
_FastLoader = None
if getattr(yaml, "__with_libyaml__", False):
    class _FastLoader(yaml.CSafeLoader):
        construct_mapping = _Loader.construct_mapping
        construct_yaml_int = _Loader.construct_yaml_int

    _FastLoader.yaml_implicit_resolvers = dict(_Loader.yaml_implicit_resolvers)
    _FastLoader.yaml_constructors = dict(_Loader.yaml_constructors)


#: The most YAML nodes a document may stand for once its aliases are expanded (when they
#: at least double it): a real file has far fewer, "a billion laughs" far more.
MAX_YAML_NODES = 2_000_000


def _expanded_nodes(root: yaml.Node, source: str) -> int:
    """How many nodes ``root`` stands for with every alias expanded; a node that contains
    itself or that expands beyond :data:`MAX_YAML_NODES` is a one-line error."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise InputError(f"{source}: line {node.start_mark.line + 1}: invalid YAML: an "
                             f"alias refers to a node that contains it")
        open_.add(key)
        children = (node.value if isinstance(node, yaml.SequenceNode) else
                    [part for pair in node.value for part in pair]
                    if isinstance(node, yaml.MappingNode) else [])
        total = 1 + sum(size(child) for child in children)
        open_.discard(key)
        # a big document without aliases (a 200,000-chip topology file has 2.4M values)
        # is not a bomb: what it holds is its own text, estimated before it was composed
        if total > MAX_YAML_NODES and total > 2 * (len(sizes) + 1):
            raise InputError(f"{source}: line {node.start_mark.line + 1}: invalid YAML: "
                             f"aliases expand it to more than {MAX_YAML_NODES} values")
        sizes[key] = total
        return total

    return size(root)


def load_yaml(text: str, source: str) -> tuple[Any, yaml.Node | None]:
    """(data, composed node tree for line numbers) of a YAML document; one-line errors.

    The document is composed once, its expanded size checked (aliases can make a small
    file stand for billions of values), then constructed from the same nodes."""
    from ..budget import YAML_BYTES_PER_CHAR, require_memory

    # the composed tree (kept for line numbers) is ~120 times the text: refuse a file whose
    # tree would not fit before composing it
    require_memory(len(text) * YAML_BYTES_PER_CHAR, f"{source}: reading {len(text):,} "
                   f"characters of YAML", advice="a smaller file, or JSON")
    if _FastLoader is not None:
        fast = None
        try:
            fast = _FastLoader(text)
            root = fast.get_single_node()
            if root is None:
                return None, None
            _expanded_nodes(root, source)
            return fast.construct_document(root), root
        except (yaml.YAMLError, RecursionError):
            pass                        # worded by the reader below
        finally:
            if fast is not None:
                fast.dispose()
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        _expanded_nodes(root, source)
        return loader.construct_document(root), root
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise InputError(f"{source}: {where}invalid YAML: {problem}") from None
    except RecursionError:
        raise InputError(f"{source}: invalid YAML: nested too deeply") from None
    finally:
        loader.dispose()


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
