"""Names looked up among a table of names as arrays: no Python object per name.

A flow set names some 700,000 path hops among a thousand links; a dictionary lookup per
hop costs a string object and a hash each. Here every name is a row of uint64 words (its
bytes or code units, zero-padded), a row's key is its word or a mix of its words, a
collision-free slot table finds the candidate, and comparing the words makes it certain.
A name that is not in the table, or two table names with one key, gives None: the caller
then looks names up one by one and words the error.

>>> find_unicode(np.array(["b", "link-7", "b"]), ["a", "b", "link-7"]).tolist()
[1, 2, 1]
>>> find_unicode(np.array(["b", "zz"]), ["a", "b"]) is None
True
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["find_rows", "find_unicode", "unicode_rows"]

_I = np.int64


def _keys(words: np.ndarray) -> np.ndarray:
    """One uint64 per row of words: the word itself for one word, else a mix of them
    (collisions are caught by comparing the words after the lookup)."""
    key = words[:, 0]
    for j in range(1, words.shape[1]):
        key = key * np.uint64(0x9E3779B97F4A7C15) + words[:, j]
    return key


def _slots(keys: np.ndarray) -> tuple[int, np.ndarray] | None:
    """A modulus m under which ``keys`` fall in distinct slots, and the table of slot ->
    index of the key (-1: none): a lookup is one remainder and one gather."""
    for m in range(2 * keys.size + 1, 64 * keys.size + 2, keys.size + 1):
        slot = keys % np.uint64(m)
        ordered = np.sort(slot)               # (np.unique would load numpy.ma: 10 ms)
        if (ordered[1:] != ordered[:-1]).all():
            table = np.full(m, -1, dtype=_I)
            table[slot.astype(_I)] = np.arange(keys.size)
            return m, table
    return None


def find_rows(rows: np.ndarray, table: np.ndarray) -> np.ndarray | None:
    """The index in ``table`` of each of ``rows`` (2-D uint64, one name per row, the same
    number of words), or None if a row is not in the table or two table rows share a key.

    >>> table = np.array([[1, 0], [2, 5], [2, 6]], dtype=np.uint64)
    >>> find_rows(table[[2, 0, 2]], table).tolist()
    [2, 0, 2]
    """
    if not len(table):
        return None
    table_keys = _keys(table)
    slots = _slots(table_keys)
    if slots is None:
        return None
    modulus, slot_of = slots
    found = slot_of[(_keys(rows) % np.uint64(modulus)).view(_I)]
    if (found < 0).any() or not (table[found] == rows).all():
        return None
    return found


def unicode_rows(values: np.ndarray) -> np.ndarray:
    """A numpy unicode array as rows of uint64 words (its UCS-4 code units, two a word)."""
    width = values.dtype.itemsize // 4
    units = np.zeros((values.size, width + width % 2), dtype=np.uint32)
    units[:, :width] = np.ascontiguousarray(values).view(np.uint32).reshape(values.size, width)
    return units.view(np.uint64)


def find_unicode(values: np.ndarray, names: Sequence[str]) -> np.ndarray | None:
    """The index in ``names`` of each of ``values`` (a numpy unicode array), or None if
    one is not there (then look them up one by one). Names longer than the values'
    width cannot match and are left out."""
    width = values.dtype.itemsize // 4
    fits = np.flatnonzero([0 < len(name) <= width and "\0" not in name for name in names])
    if not fits.size or not values.size:
        return None
    table = np.array([names[i] for i in fits.tolist()], dtype=values.dtype)
    found = find_rows(unicode_rows(values.ravel()), unicode_rows(table))
    return None if found is None else fits[found]
