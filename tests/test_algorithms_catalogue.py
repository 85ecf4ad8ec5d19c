"""Collectives as data: schedule files loaded by name or path."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.algorithms import (build_schedule, collective_names, load_collective,
                               save_collective)
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.topology import ring

SHIPPED = [("allreduce-ring-8", "allreduce", "ring", 8),
           ("allreduce-halving_doubling-8", "allreduce", "halving_doubling", 8),
           ("allgather-bruck-6", "allgather", "bruck", 6)]


@pytest.mark.parametrize("file,op,name,p", SHIPPED)
def test_shipped_files_are_the_builders_schedules(file, op, name, p):
    size = 5e6
    loaded = load_collective(file, p, size)
    built = build_schedule(op, name, p, size)
    assert loaded.meta["op"] == op and loaded.meta["algorithm"] == name
    assert loaded.meta["size"] == size and loaded.meta["ranks"] == p
    for column in ("kind", "src", "dst", "dep_ptr"):
        assert np.array_equal(getattr(loaded, column), getattr(built, column)), column
    for op in range(built.num_ops):
        assert sorted(loaded.deps(op).tolist()) == sorted(built.deps(op).tolist())
    assert np.allclose(loaded.nbytes, built.nbytes, rtol=1e-12)


def test_a_loaded_file_simulates_like_the_builder():
    topo = ring(8, bandwidth=1e10)
    a = simulate(topo, load_collective("allreduce-ring-8", 8, 8e6), overhead=1e-6).makespan
    b = simulate(topo, build_schedule("allreduce", "ring", 8, 8e6), overhead=1e-6).makespan
    assert a == pytest.approx(b, rel=1e-12)
    assert a == pytest.approx(14 * (1e-6 + 1e6 / 1e10), rel=1e-9)


def test_names_paths_and_errors(tmp_path, monkeypatch):
    assert {f for f, *_ in SHIPPED} <= set(collective_names())
    with pytest.raises(InputError, match="did you mean 'allreduce-ring-8'"):
        load_collective("allreduce-rign-8", 8, 1e6)
    with pytest.raises(InputError, match="is written for 8 ranks, got 6"):
        load_collective("allreduce-ring-8", 6, 1e6)
    with pytest.raises(InputError, match="does not exist"):
        load_collective(tmp_path / "missing.json", 4, 1e6)

    mine = tmp_path / "collectives"
    mine.mkdir()
    save_collective(build_schedule("alltoall", "pairwise", 4, 4e6), mine / "a2a-4.json")
    monkeypatch.setenv("NETSIM_PATH", str(tmp_path))
    assert "a2a-4" in collective_names()
    by_name = load_collective("a2a-4", 4, 8e6)
    by_path = load_collective(mine / "a2a-4.json", 4, 8e6)
    assert by_name.total_bytes == by_path.total_bytes == pytest.approx(3 * 8e6)


def test_save_needs_a_size():
    s = build_schedule("allreduce", "ring", 4, 0.0)
    with pytest.raises(InputError, match="positive 'size'"):
        save_collective(s, "unused.json")
