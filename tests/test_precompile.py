"""netsim._precompile: every compiled entry point gets its specialisation ahead of any run,
and the runs that follow need no other (so a first run after install compiles nothing)."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

pytest.importorskip("numba")

from netsim import _precompile  # noqa: E402
from netsim.engine import execute, route_schedule  # noqa: E402
from netsim.engine.config import EngineConfig  # noqa: E402


def _signatures() -> dict[str, int]:
    counts = {}
    for module, name in _precompile.ENTRY_POINTS:
        function = getattr(importlib.import_module(module), name)
        counts[f"{module}.{name}"] = len(getattr(function, "signatures", ()))
    return counts


@pytest.fixture(scope="module")
def compiled():
    _precompile.compile_all()
    return _signatures()


def test_every_entry_point_compiled_once(compiled):
    """One specialisation each: the install compiles every loop once, for the argument
    kinds of every run (read-only paths whether routed or reduced to classes)."""
    assert _precompile.uncompiled() == []
    assert set(compiled.values()) == {1}


def _mesh_alltoall(latency):
    from netsim.schedule.traffic import all_to_all
    from netsim.topology import mesh

    topology = mesh((3, 3), bandwidth=50e9, latency=latency)
    schedule = all_to_all(9, 1 << 16)
    return topology, schedule, route_schedule(topology, schedule, topology.endpoints)


def _fat_tree_pairs():
    from netsim.schedule import sends_from_arrays
    from netsim.topology import fat_tree

    topology = fat_tree(4)
    hosts = np.asarray(topology.endpoints)
    rng = np.random.default_rng(1)
    src = rng.integers(0, hosts.size, 200)
    dst = (src + rng.integers(1, hosts.size, 200)) % hosts.size
    nbytes = np.rint(rng.lognormal(np.log(1 << 16), 1.0, 200))
    schedule = sends_from_arrays(hosts.size, src, dst, nbytes)
    routes = route_schedule(topology, schedule, hosts)
    return topology, schedule, routes, np.cumsum(rng.exponential(1e-6, 200))


@pytest.mark.parametrize("loop", ["kernel", "classes"])
def test_real_runs_need_no_other_specialisation(compiled, loop):
    """Runs shaped like the benchmarks' (a symmetric all-to-all reduced to classes, random
    pairs with staggered starts on the router's read-only paths, a ring all-reduce with
    dependencies) on each compiled loop find the specialisations compiled ahead."""
    from netsim.run import run_collective

    config = EngineConfig(loop=loop, symmetry_min_subflows=0, symmetry_compiled_from=0)
    execute(*_mesh_alltoall(1e-6), config=config)
    topology, schedule, routes, starts = _fat_tree_pairs()
    execute(topology, schedule, routes, not_before=starts, config=config)
    run_collective("allreduce", "fattree:k=4", "ring", "1MiB")    # the engine's own choice
    assert _signatures() == compiled
