"""A JSON flow file decoded straight into columns, for the plain large case (msgspec).

Parsing an 11 MB flow file (65,280 flows, some 700,000 path hops) into dicts and strings,
then walking them into columns, costs about 0.4 s: most of it is touching half a million
Python objects. Here msgspec decodes the flows into compact records by a typed schema,
keeps each ``path`` as its raw JSON text, and the paths of all flows are then read at once
as bytes with numpy: the quotes delimit the link names, and the names are found among the
topology's links as rows of integers (:mod:`.namekeys`). No string object is made per hop.

This path only accepts: anything it is not sure of (msgspec not installed, a schema
mismatch, a key given twice, an escape or a number in a path, a name that is no link,
a value the column checks refuse) returns None, and the caller reads the file the general
way (:func:`~netsim._inputs.jsonio.loads_json`, :func:`.flowfile.flows_from_dict`), which
words every error. Both build the same flow set (``tests/test_flowfile_fast.py``).

>>> from netsim.topology import mesh
>>> doc = b'{"topology": "mesh:1x2", "flows": [{"src": "0_0", "dst": "0_1", "bytes": 8,'
>>> doc += b' "path": ["0_0->0_1"]}]}'
>>> header, cols, raw_paths = decode_flow_columns(doc)
>>> header["topology"], cols.nbytes.tolist(), [bytes(p) for p in raw_paths]
('mesh:1x2', [8.0], [b'["0_0->0_1"]'])
>>> ptr, links = path_link_ids(raw_paths, mesh((1, 2)))
>>> ptr.tolist(), links.tolist()
([0, 1], [0])
"""

import functools          # (no `from __future__ import annotations`: msgspec reads the
                          # annotations of the classes made inside _decoder)
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np

from .._inputs.jsonio import keys_in_text
from ..units import parse_size, parse_time
from .flowcolumns import _NONE, FlowColumns, Refused, _csr, _numbers
from .namekeys import find_rows

__all__ = ["decode_flow_columns", "path_link_ids"]

_I = np.int64
_INT64_MIN = -(2**63)     # orjson reads a smaller integer as a float: leave it to that path


@functools.cache
def _decoder():
    """The msgspec decoder of a flow document (None when msgspec is not installed)."""
    try:
        import msgspec
    except ImportError:
        return None
    from msgspec import UNSET, Raw, Struct, UnsetType

    Id = str | int
    Number = int | float | str

    class Flow(Struct, forbid_unknown_fields=True, gc=False):
        src: Id
        dst: Id
        bytes: Number
        id: Id | UnsetType = UNSET
        start: Number | UnsetType = UNSET
        path: Raw | UnsetType = UNSET
        deps: list[Id] | UnsetType = UNSET

    class Document(Struct, forbid_unknown_fields=True):
        flows: list[Flow]
        links: list[dict[str, Any]] | UnsetType = UNSET
        topology: Any = UNSET
        description: Any = UNSET

    return msgspec.json.Decoder(Document), (msgspec.DecodeError, msgspec.ValidationError), UNSET


def _scalar(value: Any) -> bool:
    return type(value) not in (dict, list)


def _big_negative(column: list) -> bool:
    """Whether an integer of ``column`` is below int64 (orjson reads it as a float)."""
    kinds = set(map(type, column))
    if int not in kinds:
        return False
    ints = column if kinds == {int} else [v for v in column if type(v) is int]
    return min(ints) < _INT64_MIN


def decode_flow_columns(raw: bytes) -> tuple[dict, FlowColumns, list | None] | None:
    """(header, columns, raw paths) of the flow document ``raw``. The header holds the
    document's ``links``, ``topology`` and ``description`` as given and its ``flows`` (for
    :func:`~.flownetwork.network_of`); the columns have no paths yet: the raw paths (each
    flow's ``path`` as JSON text, ``b""`` when it has none; None when no flow has one) are
    for :func:`path_link_ids`. None when this path is not sure (module docstring)."""
    made = _decoder()
    if made is None:
        return None
    decoder, errors, unset = made
    try:
        doc = decoder.decode(raw)
    except errors:
        return None
    header = {key: getattr(doc, key) for key in ("links", "topology", "description", "flows")
              if getattr(doc, key) is not unset}
    flows = doc.flows
    n = len(flows)
    links = header.get("links", [])
    if (not all(_scalar(header[k]) for k in ("topology", "description") if k in header)
            or type(links) is not list
            or not all(all(map(_scalar, link.values())) for link in links)):
        return None                      # keys nested in values: not counted below
    kept = len(header) + sum(map(len, links)) + 3 * n    # a flow's src, dst and bytes
    columns: dict[str, list | None] = {}
    missing: dict[str, int] = {}
    for key in ("id", "start", "path", "deps"):
        column = list(map(attrgetter(key), flows))
        missing[key] = column.count(unset)
        kept += n - missing[key]
        columns[key] = None if missing[key] == n else column
    # A key given twice was kept once (msgspec keeps the last). One colon per key and none
    # in a string is the usual file: then one count says it; else count the keys.
    if kept != raw.count(b":") and kept != keys_in_text(raw):
        return None
    src, dst = list(map(attrgetter("src"), flows)), list(map(attrgetter("dst"), flows))
    ids, start, deps = columns["id"], columns["start"], columns["deps"]
    if ids is not None and missing["id"]:
        ids = [r if v is unset else v for r, v in enumerate(ids)]     # as the models do
    if start is not None and missing["start"]:
        start = [0.0 if v is unset else v for v in start]
    if deps is not None:
        deps = [_NONE if v is unset else v for v in deps]
    if any(_big_negative(c) for c in (src, dst, ids or [],
                                      list(chain.from_iterable(deps or ())))):
        return None
    try:
        cols = FlowColumns(ids=list(range(n)) if ids is None else ids, src=src, dst=dst,
                           nbytes=_numbers(list(map(attrgetter("bytes"), flows)), "bytes",
                                           parse_size, True),
                           start=(np.zeros(n) if start is None
                                  else _numbers(start, "start", parse_time, False)))
        if deps is not None:
            cols.dep_ptr, cols.dep_ids = _csr(deps, "deps", True)
    except Refused:
        return None
    paths = columns["path"]
    if paths is not None and unset in paths:
        paths = [b"" if p is unset else p for p in paths]
    return header, cols, paths


# Bytes that may stand between the strings of a path list: brackets, commas, white space
# and the quotes themselves.
_BETWEEN = b'[],"\t\n\r '
_LONGEST = 64             # longer link names: the general path


def _words(buf: bytes, start: np.ndarray, length: np.ndarray, width: int) -> np.ndarray:
    """Names ``buf[start:start+length]`` as rows of ``width // 8`` little-endian uint64
    words, zero-padded (``buf`` must extend ``width`` bytes past the last name): a gather
    from a view with a uint64 at every byte offset, its bytes past the name shifted out
    (in place: 700,000 names make arrays of 5.6 MB each)."""
    every = np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))
    words = np.empty((start.size, width // 8), dtype=np.uint64)
    for w in range(width // 8):
        shift = np.subtract(length, 8 * w)             # bytes of the name in this word
        np.clip(shift, 0, 8, out=shift)
        empty = (shift == 0) if w else None
        shift *= -8
        shift += 64                                    # bits to shift out, as uint64
        shift = shift.view(np.uint64)
        word = every[start + 8 * w] if w else every[start]
        word <<= shift                   # (a later word with no byte of the name shifts
        word >>= shift                   # by 64, whose result differs by CPU: zeroed)
        if w:
            word[empty] = 0
        words[:, w] = word
    return words


def path_link_ids(raws: list, topology) -> tuple[np.ndarray, np.ndarray] | None:
    """(``path_ptr``, link ids) of the flows' raw JSON paths (``b""``: no path), or None
    unless every path is a non-empty list of link names written without escapes."""
    lens = np.fromiter(map(len, raws), dtype=_I, count=len(raws))
    has = lens > 0
    flows_with = int(has.sum())
    first = np.zeros(len(raws) + 1, dtype=_I)
    np.cumsum(lens, out=first[1:])
    text = b"".join(raws)
    if b"\\" in text or not flows_with:
        return None
    body = np.frombuffer(text, dtype=np.uint8)
    if (body[first[:-1][has]] != ord("[")).any():
        return None                                  # null, or not a list
    quotes = np.flatnonzero(body == ord('"'))
    start = quotes[0::2] + 1                         # (no escapes: every quote delimits)
    length = quotes[1::2] - start
    counts = np.diff(np.searchsorted(quotes, first)) // 2     # names per flow
    del quotes
    if (counts[has] == 0).any() or length.min() == 0 or length.max() > _LONGEST:
        return None                                  # [] or "" or a long name
    # Each raw value is valid JSON (msgspec checked it) and starts with '['. If the bytes
    # outside its strings are all brackets, commas, white space and quotes, with one '['
    # per flow, it is a flat list of strings. The names hold none of these (checked
    # below), so the count over the whole text is the count outside the names.
    if (len(text.translate(None, _BETWEEN)) != int(length.sum())
            or text.count(b"[") != flows_with):
        return None
    ptr = np.zeros(len(raws) + 1, dtype=_I)
    np.cumsum(counts, out=ptr[1:])
    width = 8 * -(-int(length.max()) // 8)
    names = [name.encode("utf-8") for name in topology.link_names]
    name_len = np.fromiter(map(len, names), dtype=_I, count=len(names))
    # A name with a NUL byte, or with a byte that may stand between the strings, is
    # never matched (no valid JSON string without escapes holds a NUL): then equal words
    # mean equal lengths, and the count above holds.
    fits = np.flatnonzero((name_len <= width) & (name_len > 0)
                          & [not any(c in name for c in _BETWEEN + b"\0") for name in names])
    if not fits.size:
        return None
    table = b"".join(names[i] for i in fits.tolist()) + bytes(width + 8)
    table_start = np.zeros(fits.size, dtype=_I)
    np.cumsum(name_len[fits][:-1], out=table_start[1:])
    name_words = _words(table, table_start, name_len[fits], width)
    hop_words = _words(b"".join((text, bytes(width + 8))), start, length, width)
    del start, length
    found = find_rows(hop_words, name_words)
    if found is None:
        return None                                  # a name that is no link
    return ptr, fits[found]
