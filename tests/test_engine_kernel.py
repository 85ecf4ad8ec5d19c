"""The compiled loops (engine.kernel, engine.classes) as the executor
runs them: progress reports, refusals, and numba's lazy BLAS probe. (Their answers against
the reference: tests/test_engine_conformance.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from netsim.engine import EngineConfig, simulate
from netsim.schedule import ScheduleBuilder
from netsim.topology import torus

pytest.importorskip("numba")

COMPILED_LOOPS = ["kernel", "classes"]


@pytest.mark.parametrize("loop", COMPILED_LOOPS)
def test_the_compiled_loop_runs_and_reports_progress(loop):
    """A run a compiled loop takes calls ``progress`` as the numpy loop does, pausing
    every ``progress_every`` events, and ends with the numpy loop's makespan."""
    topo = torus((4, 4), bandwidth=1e9, latency=1e-6)
    b = ScheduleBuilder(16)
    for r in range(16):
        b.send(r, (r + 5) % 16, 1e6 * (1 + r))
    schedule = b.build()
    seen = []
    compiled = simulate(topo, schedule, progress=lambda e, t: seen.append((e, t)),
                        config=EngineConfig(loop=loop, symmetry=False))
    assert compiled.meta["engine"]["loop"] == loop
    assert seen and seen[-1][0] == compiled.events
    assert all(a[1] <= b[1] for a, b in zip(seen, seen[1:]))
    numpy_loop = simulate(topo, schedule, config=EngineConfig(loop="numpy"))
    np.testing.assert_allclose(compiled.op_finish, numpy_loop.op_finish, rtol=1e-12)
    assert compiled.events == numpy_loop.events


@pytest.mark.parametrize("loop", COMPILED_LOOPS)
def test_a_link_without_capacity_is_refused_by_the_compiled_loop(loop):
    from netsim.errors import SimulationError
    from netsim.topology import ring

    topo = ring(4, bandwidth=1e9)
    topo.bandwidth[:] = 0.0
    b = ScheduleBuilder(4)
    b.send(0, 1, 1e3)
    with pytest.raises(SimulationError, match="no capacity"):
        simulate(topo, b.build(), config=EngineConfig(loop=loop))


@pytest.mark.parametrize("loop", COMPILED_LOOPS)
def test_tolerance_merges_completions_within_its_window_and_no_others(loop):
    """Two lone flows ending at 1 s and 1.0005 s (1 GB/s each): a tolerance of 1e-3
    merges them into one event at the later time, 1e-4 does not, in every compiled loop
    (after the first event: the one that starts them)."""
    from netsim.topology import ring

    topo = ring(4, bandwidth=1e9)
    b = ScheduleBuilder(4)
    b.send(0, 1, 1e9)
    b.send(2, 3, 1.0005e9)
    schedule = b.build()
    config = EngineConfig(loop=loop, symmetry=False)
    exact = simulate(topo, schedule, config=config)
    assert exact.events == 3 and exact.meta["engine"]["loop"] == loop
    merged = simulate(topo, schedule, tolerance=1e-3, config=config)
    assert merged.events == 2
    np.testing.assert_allclose(merged.op_finish, [1.0005, 1.0005], rtol=1e-12)
    np.testing.assert_allclose(merged.link_bytes, exact.link_bytes)
    apart = simulate(topo, schedule, tolerance=1e-4, config=config)
    np.testing.assert_allclose(apart.op_finish, exact.op_finish, rtol=1e-12)


@pytest.mark.slow
def test_numba_loads_without_scipy_linalg_and_still_compiles_blas_code():
    """engine.numba_loader defers numba's BLAS probe: loading the compiled loop leaves
    scipy.linalg unimported, numba's flag ends as its own probe sets it with scipy installed,
    and a function that needs BLAS (np.convolve) still compiles, imports scipy.linalg then,
    and agrees with numpy. A fresh interpreter: this one imported scipy.linalg long ago."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np\n"
        "import netsim.engine.kernel\n"
        "from numba.np import arraymath\n"
        "print('scipy.linalg' in sys.modules, arraymath._HAVE_BLAS)\n"
        "import numba\n"
        "f = numba.njit(lambda a, b: np.convolve(a, b))\n"
        "a, b = np.arange(1.0, 7.0), np.array([0.5, -1.0, 2.0])\n"
        "print(bool(np.allclose(f(a, b), np.convolve(a, b))), 'scipy.linalg' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True", "True"]


def test_the_numpy_loop_hands_its_heap_over_with_the_compiled_loops_event_kinds():
    """The executor's heap entries go to the compiled loop as they are: both loops must
    read the same kind codes, and use the one merging window."""
    from netsim.engine import events, executor, tolerance

    assert (executor._ACTIVATE, executor._COMPLETE, executor._RELEASE) == \
        (events._ACTIVATE, events._COMPLETE, events._RELEASE)
    assert executor._FAULT not in (events._ACTIVATE, events._COMPLETE, events._RELEASE)
    assert executor._REL_TOL is tolerance._REL_TOL and events._REL_TOL is tolerance._REL_TOL


def _random_run(seed):
    """A fat-tree (ECMP: no two paths alike) with staggered sends of log-normal sizes,
    half of them after an earlier one: work for every step of the loop."""
    from netsim.engine import route_schedule
    from netsim.topology import fat_tree

    topo = fat_tree(4, bandwidth=1e9, latency=1e-7)
    hosts = np.asarray(topo.endpoints)
    rng = np.random.default_rng(seed)
    b = ScheduleBuilder(hosts.size)
    ops = []
    for _ in range(300):
        src, dst = rng.choice(hosts.size, 2, replace=False)
        deps = [ops[int(rng.integers(len(ops)))]] if ops and rng.random() < 0.5 else []
        ops.append(b.send(int(src), int(dst), float(rng.lognormal(12, 1.5)), deps=deps))
    schedule = b.build()
    return (topo, schedule, route_schedule(topo, schedule, hosts),
            np.cumsum(rng.exponential(2e-6, schedule.num_ops)))


@pytest.mark.parametrize("loop", COMPILED_LOOPS)
@pytest.mark.parametrize("seed", [0, 1])
def test_a_run_paused_again_and_again_gives_the_same_bits(loop, seed, monkeypatch):
    """The compiled loop pauses by the clock (so that Ctrl-C is answered) and under a
    progress report, and goes on from the solver's own state: paused tens of times, a run
    gives the answer of a run that never pauses, bit for bit."""
    from netsim.engine import execute, executor, loop as compiled

    topo, schedule, routes, not_before = _random_run(seed)
    config = EngineConfig(loop=loop, symmetry=False)
    calls = []
    run_events = compiled.run_events

    def counted(*args):
        calls.append(1)
        return run_events(*args)

    monkeypatch.setattr(compiled, "run_events", counted)

    def run(pause_s, progress=None):
        calls.clear()
        monkeypatch.setattr(executor, "PAUSE_S", pause_s)
        result = execute(topo, schedule, routes, not_before=not_before, config=config,
                         progress=progress)
        return result, len(calls)

    whole, once = run(3600.0)
    paused, pauses = run(1e-5)
    seen = []
    reported, _ = run(3600.0, progress=lambda events, t: seen.append(events))
    assert whole.meta["engine"]["loop"] == loop and whole.events > 300
    assert once == 1 and pauses > 10 and len(seen) > 2
    for other in (paused, reported):
        assert other.events == whole.events
        for name in ("op_start", "op_finish", "link_bytes"):
            assert np.array_equal(getattr(other, name), getattr(whole, name)), name


def test_a_signal_stops_a_long_compiled_run_at_its_next_pause(monkeypatch):
    """SIGTERM 0.3 s into the compiled loop of a run that takes far longer (a 12x12 mesh
    all-to-all on the reference solver, cold at every event) stops it at the next pause:
    the last call of the loop returned PAUSED, not DONE, and the run raises Interrupted. A
    compiled call that never returned to Python would have run to its end first."""
    import os
    import signal
    import threading

    from netsim.engine import execute, loop as compiled, route_schedule
    from netsim.interrupts import Interrupted, handling
    from netsim.schedule.traffic import all_to_all
    from netsim.topology import mesh

    topo = mesh((12, 12), bandwidth=50e9, latency=1e-6)
    schedule = all_to_all(144, 1 << 16)
    routes = route_schedule(topo, schedule, topo.endpoints)
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM))
    statuses = []
    run_events = compiled.run_events

    def watched(*args):
        if not timer.is_alive() and not statuses:
            timer.start()
        out = run_events(*args)
        statuses.append(out[0])
        return out

    monkeypatch.setattr(compiled, "run_events", watched)
    with pytest.raises(Interrupted):
        with handling():
            execute(topo, schedule, routes,
                    config=EngineConfig(loop="kernel", warm=False, symmetry=False))
    timer.join()
    assert statuses and statuses[-1] == compiled.PAUSED
