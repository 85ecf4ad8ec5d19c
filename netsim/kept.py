"""Results kept across the runs of a sweep, found again by comparing their inputs in full.

The sizes of a size sweep build schedules that differ only in their bytes, so steps of
the engine that read only the schedule's shape (the symmetry search, the map of alike
in-network planes) pose the same question at every size. :class:`Kept` holds the last
few answers of one such step with everything the answer depends on: plain values
(compared with ``==``), objects (compared by identity, and held, so that no other object
can take their place) and arrays (compared element for element). An answer is returned
only for equal inputs, so it is the one the step would compute: keeping it changes no bit
of any run, only how long a sweep takes.

>>> import numpy as np
>>> kept = Kept()
>>> kept.put(("ring", 8), (np.arange(4),), "answer")
>>> kept.find(("ring", 8), (np.arange(4),))
('answer',)
>>> kept.find(("ring", 8), (np.arange(5),)) is None
True
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

__all__ = ["Kept"]


class Kept:
    """The last ``size`` answers used (oldest dropped first), while all of them together
    take at most ``max_share`` of the memory the process may still add
    (netsim.budget.memory_room), as the router keeps its last routes. ``copy`` makes what
    :meth:`find` hands out (and :meth:`put` stores) from an answer, where a caller may
    change it in place. Threads may share one (a Dask worker runs sweep points in several):
    a lock orders their finds and puts."""

    def __init__(self, *, size: int = 4, max_share: float = 1 / 16,
                 copy: Callable[[Any], Any] = lambda answer: answer) -> None:
        self._size, self._max_share, self._copy = size, max_share, copy
        self._kept: list[tuple] = []  # (values, objects, arrays, answer, bytes), oldest first
        self._lock = threading.Lock()

    def find(self, values: tuple, arrays: tuple, objects: tuple = ()) -> tuple | None:
        """``(answer,)`` for inputs equal to those of a kept answer, else None."""
        with self._lock:
            return self._find(values, arrays, objects)

    def _find(self, values: tuple, arrays: tuple, objects: tuple) -> tuple | None:
        for at, (k_values, k_objects, k_arrays, answer, _) in enumerate(self._kept):
            if (k_values == values and len(k_objects) == len(objects)
                    and all(a is b for a, b in zip(k_objects, objects))
                    and len(k_arrays) == len(arrays)
                    and all(a.shape == np.shape(b) for a, b in zip(k_arrays, arrays))
                    and all(np.array_equal(a, b) for a, b in zip(k_arrays, arrays))):
                self._kept.append(self._kept.pop(at))           # now the latest
                return (self._copy(answer),)
        return None

    def put(self, values: tuple, arrays: tuple, answer: Any, objects: tuple = (), *,
            held: int = 0) -> None:
        """Keep ``answer`` to the inputs (``held``: bytes the answer itself takes)."""
        held += sum(np.asarray(a).nbytes for a in arrays)
        with self._lock:
            if self._make_room(held):           # copies (inputs may change), if they fit
                self._kept.append((values, tuple(objects),
                                   tuple(np.array(a) for a in arrays), self._copy(answer),
                                   held))

    def _make_room(self, held: int) -> bool:
        """Drop the oldest answers until one of ``held`` bytes fits; whether it does."""
        from .budget import memory_room

        room = self._max_share * (memory_room() + sum(k[-1] for k in self._kept))
        if held > room:
            return False
        del self._kept[:max(0, len(self._kept) + 1 - self._size)]     # the oldest
        while self._kept and held + sum(k[-1] for k in self._kept) > room:
            del self._kept[0]
        return True

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
