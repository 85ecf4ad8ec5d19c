"""netsim.kept: answers found again only for inputs equal in full."""

from __future__ import annotations

import numpy as np

from netsim import budget
from netsim.kept import Kept


def test_the_last_four_answers_used_are_kept_and_found_only_for_equal_inputs():
    kept = Kept()
    graphs = [(np.arange(5) + i,) for i in range(5)]
    for i in range(4):
        kept.put((48, 0.5, False), graphs[i], None if i == 0 else f"answer {i}")
    assert kept.find((48, 0.5, False), graphs[0]) == (None,)      # None is an answer too
    assert kept.find((48, 0.5, True), graphs[0]) is None           # another value
    kept.put((48, 0.5, False), graphs[4], "answer 4")              # drops the oldest: 1
    assert kept.find((48, 0.5, False), graphs[1]) is None
    assert kept.find((48, 0.5, False), graphs[0]) == (None,)
    assert kept.find((48, 0.5, False), (np.arange(6),)) is None    # another shape
    changed = np.arange(5) + 2
    changed[4] = 0                                                 # one entry differs
    assert kept.find((48, 0.5, False), (changed,)) is None
    assert kept.find((48, 0.5, False), graphs[2]) == ("answer 2",)
    assert kept.find((48, 0.5, False), graphs[2] + graphs[3]) is None   # more arrays


def test_inputs_are_copied_objects_compared_by_identity_answers_copied_out():
    kept = Kept(copy=list)
    machine, twin = object(), object()
    graph = np.arange(4)
    kept.put(("x",), (graph,), [1, 2], objects=(machine,))
    graph[0] = 9                             # the caller changes its array afterwards
    assert kept.find(("x",), (np.arange(4),), (machine,)) == ([1, 2],)
    assert kept.find(("x",), (np.arange(4),), (twin,)) is None    # not the same object
    answer = kept.find(("x",), (np.arange(4),), (machine,))[0]
    answer.append(3)                         # a copy: the kept answer is unchanged
    assert kept.find(("x",), (np.arange(4),), (machine,)) == ([1, 2],)


def test_an_answer_whose_inputs_take_over_a_sixteenth_of_the_room_is_not_kept(monkeypatch):
    monkeypatch.setattr(budget, "memory_room", lambda: 16 * 40 - 1)
    kept = Kept()
    kept.put((), (np.arange(5),), "answer")                        # 40 B: over 1/16
    assert kept.find((), (np.arange(5),)) is None
    monkeypatch.setattr(budget, "memory_room", lambda: 16 * 40)
    kept.put((), (np.arange(5),), "answer")
    assert kept.find((), (np.arange(5),)) == ("answer",)
    kept.clear()
    assert kept.find((), (np.arange(5),)) is None


def test_all_answers_together_stay_within_a_sixteenth_of_the_room(monkeypatch):
    # The room counts what the kept answers hold as free again (they can be dropped):
    # four answers of 40 B each fit in a sixteenth of 16 x 100 B only two at a time.
    kept = Kept()
    held = {"bytes": 0}
    monkeypatch.setattr(budget, "memory_room", lambda: 16 * 100 - held["bytes"])
    for i in range(4):
        kept.put((i,), (np.arange(5),), i)
        held["bytes"] = sum(k[-1] for k in kept._kept)
    assert [kept.find((i,), (np.arange(5),)) for i in range(4)] == [None, None, (2,), (3,)]


def test_threads_sharing_one_keeper_find_only_equal_inputs():
    # Sweep points in threads of one Dask worker: finds and puts interleave under the
    # lock; each find returns its own input's answer or nothing.
    from concurrent.futures import ThreadPoolExecutor

    kept = Kept()

    def work(i):
        key = np.arange(50) + i % 6
        for _ in range(200):
            found = kept.find((i % 6,), (key,))
            if found is None:
                kept.put((i % 6,), (key,), i % 6)
            else:
                assert found == (i % 6,)
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(work, range(24)))
