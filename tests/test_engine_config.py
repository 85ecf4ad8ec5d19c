"""EngineConfig and choose_path: the path is a function of the input and the configuration
only (not of free memory, not of what the process ran before), it is recorded in
``Result.meta["engine"]``, shown by ``-v`` and carried by JSON output."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from cli_helpers import run_main
from engine_helpers import lognormal_alltoall
from netsim.budget import set_max_memory
from netsim.engine import EngineConfig, choose_path, simulate
from netsim.errors import InputError

SIZES = dict(ops=100, subflows=100, incidences=300, dependencies=0, compiled=True)


def test_choose_path_reads_sizes_and_config_only():
    assert choose_path(EngineConfig(), **SIZES).loop == "classes"
    # dependencies: the classes loop only from incremental_min_subflows sub-flows on
    assert choose_path(EngineConfig(), **{**SIZES, "dependencies": 5}).loop == "kernel"
    assert choose_path(EngineConfig(), **{**SIZES, "dependencies": 5,
                                          "subflows": 20_000}).loop == "classes"
    assert choose_path(EngineConfig(incremental_min_subflows=None), **SIZES).loop == "kernel"
    assert choose_path(EngineConfig(), **{**SIZES, "compiled": False}).loop == "numpy"
    assert choose_path(EngineConfig(), **{**SIZES, "timeline": True}).loop == "kernel"
    assert choose_path(EngineConfig(loop="classes"), **{**SIZES, "timeline": True}).loop == "numpy"
    assert choose_path(EngineConfig(loop="kernel"), **SIZES).numpy_work == 0
    assert choose_path(EngineConfig(warm=False, loop="kernel"), **SIZES).solver == "cold"
    with pytest.raises(InputError, match="needs numba"):
        choose_path(EngineConfig(loop="classes"), **{**SIZES, "compiled": False})


def test_a_config_is_frozen_keyword_only_picklable_and_checked():
    config = EngineConfig(loop="numpy", symmetry=False)
    assert pickle.loads(pickle.dumps(config)) == config
    with pytest.raises(AttributeError):
        config.loop = "kernel"                              # frozen
    with pytest.raises(TypeError):
        EngineConfig("numpy")                               # keyword-only
    with pytest.raises(InputError, match="engine loop must be one of .* got 'fastest'"):
        EngineConfig(loop="fastest")


def _json(config=None) -> bytes:
    topo, schedule = lognormal_alltoall((3, 4), 2)
    return simulate(topo, schedule, config=config).to_json().encode()


@pytest.mark.parametrize("config", [None, EngineConfig(numpy_work=0),
                                    EngineConfig(symmetry_min_subflows=0, numpy_work=0)])
def test_the_same_input_gives_the_same_bytes_whatever_the_memory_and_history(config):
    """4 GiB and 24 GiB of budget (--max-memory, or the config's), and a second run in the
    same process: byte-identical JSON, engine path included."""
    try:
        set_max_memory(4 * 2**30)
        small = _json(config)
        set_max_memory(24 * 2**30)
        large = _json(config)
    finally:
        set_max_memory(None)
    assert small == large == _json(config)
    base = config or EngineConfig()
    fields = {k: getattr(base, k) for k in base.__dataclass_fields__ if k != "memory_budget"}
    assert _json(EngineConfig(**fields, memory_budget=4 * 2**30)) == \
        _json(EngineConfig(**fields, memory_budget=24 * 2**30)) == small
    assert b'"engine"' in small


def test_symmetry_and_the_loop_are_recorded():
    from netsim.schedule import sends_from_arrays
    from netsim.topology import torus

    topo = torus((4, 4), bandwidth=1e9)
    n = 16
    src, dst = np.divmod(np.arange(n * n), n)
    src, dst = src[src != dst], dst[src != dst]
    result = simulate(topo, sends_from_arrays(n, src, dst, 1e5),
                      config=EngineConfig(symmetry_min_subflows=0))
    engine = result.meta["engine"]
    assert engine["symmetry"]["classes"] and engine["symmetry"]["flows"] == 240
    simulated = engine["symmetry"]["simulated"]
    assert engine["symmetry"]["reduction"] == 240 / simulated and simulated < 240
    assert engine["tolerance"] == 0.0 and engine["loop"] == "numpy"
    reference = simulate(topo, sends_from_arrays(n, src, dst, 1e5),
                         config=EngineConfig(loop="reference")).meta["engine"]
    assert reference["solver"] == "cold" and not reference["symmetry"]["classes"]


def test_verbose_shows_the_engine_in_one_line_and_json_carries_it(capsys):
    import json

    argv = ["coll", "alltoall", "--topo", "mesh:3x3", "--size", "1MiB", "--algo", "direct"]
    code, out, err = run_main(["-v", *argv], capsys)
    assert code == 0
    lines = [line for line in err.splitlines() if "engine: loop" in line]
    assert len(lines) == 1 and "alltoall 1 MiB: engine: loop numpy" in lines[0]
    code, out, _ = run_main([*argv, "--format", "json"], capsys)
    assert json.loads(out)["records"][0]["engine"]["loop"] == "numpy"


def test_flows_verbose_and_json_name_the_engine(capsys):
    import json
    from pathlib import Path

    flows = str(Path(__file__).resolve().parents[1] / "examples" / "flows" / "incast.json")
    code, out, err = run_main(["-v", "flows", flows, "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["engine"]["symmetry"]["flows"] == 4
    assert sum("engine: loop numpy" in line for line in err.splitlines()) == 1


def test_a_symmetry_search_that_would_not_fit_is_refused_with_its_estimate(monkeypatch):
    """The search over a run's incidences, flows, ops and dependencies is refused in one
    line naming what it would need (48 B an item) when that is above the budget, instead of
    being skipped (a run of every flow: hours on 4,096 GPUs) or killed by the OS; with
    room, the same search runs and finds its classes."""
    from netsim import budget
    from netsim.engine import route_schedule
    from netsim.engine.symmetry import find_classes
    from netsim.errors import ResourceError
    from netsim.schedule.traffic import all_to_all
    from netsim.topology import torus

    topo = torus((4, 4), bandwidth=1e9)
    schedule = all_to_all(16, 1 << 20)
    routes = route_schedule(topo, schedule, topo.endpoints)
    items = len(routes.path_links) + len(routes.sub_req) + schedule.num_ops + \
        len(schedule.dep_idx)
    monkeypatch.setattr(budget, "SEARCH_CHECK_FROM", 0)
    try:
        set_max_memory(items * budget.SEARCH_BYTES_PER_ITEM - 1)
        with pytest.raises(ResourceError, match="the symmetry search over"):
            find_classes(schedule, routes, topo.bandwidth, min_subflows=0)
        set_max_memory(items * budget.SEARCH_BYTES_PER_ITEM)
        assert find_classes(schedule, routes, topo.bandwidth, min_subflows=0) is not None
    finally:
        set_max_memory(None)
