"""Compile every numba kernel of netsim once, into numba's cache next to the sources.

numba compiles a function the first time it is called with new argument types; for the
engine's event loops that costs tens of seconds of CPU per loop (minutes for all of them on a
busy 2-core machine), which a first run would otherwise pay. The kernels are written with
``cache=True``, so what is compiled once is stored in the ``__pycache__`` directory next to
the module (numba keys it by the source file's content, the numba and Python versions and
the CPU) and loaded by every later process in a fraction of a second.

``pip install`` runs this module at build time (``setup.py``): for an editable install on the
source tree, for ``pip install .`` on the built copy, whose cache files go into the wheel and
stay valid once installed (the sources are byte for byte the same). Run it again by hand
after upgrading numba or Python::

    python -m netsim._precompile

Each compiled entry point is called once on a tiny input shaped like a real run's (the same
dtypes, layouts and argument kinds), so that the specialisation compiled here is the one real
runs look up. The engine's choice of loop is forced through an
:class:`~netsim.engine.config.EngineConfig` for each call. :func:`uncompiled` lists the entry points that have no
compiled specialisation in this process; ``tests/test_precompile.py`` checks that this list
is empty after :func:`compile_all`.
"""

from __future__ import annotations

import sys
import time

import numpy as np

__all__ = ["compile_all", "uncompiled", "ENTRY_POINTS"]

#: The compiled functions called from Python (module, name): their callees are compiled
#: into them. A kernel added to netsim belongs here and in :func:`compile_all`.
ENTRY_POINTS = (
    ("netsim.engine.loop", "run_events"),
    ("netsim.engine.loop", "new_states"),
    *(("netsim.engine.symmetry", name) for name in (
        "_k_relabel", "_k_transpose", "_k_depths", "_k_signature", "_k_equitable",
        "_k_distinct")),
    ("netsim.algorithms._lower_bound_kernel", "_longest"),
)


def _case(*, dependencies: bool, alike: bool = False):
    """A 2x2 mesh (1 us per hop) with every pair sending twice, the second send after the
    first when ``dependencies``; sizes differ per pair unless ``alike``. Small, but a
    compiled function is compiled whole: its types are what matter, not the sizes."""
    from .engine import route_schedule
    from .schedule import ScheduleBuilder
    from .topology import mesh

    topology = mesh((2, 2), bandwidth=50e9, latency=1e-6)
    builder = ScheduleBuilder(4)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                first = builder.send(src, dst, float(1 << 20) * (1 if alike else 1 + src))
                builder.send(src, dst, float(1 << 19) * (1 if alike else 1 + dst),
                             deps=[first] if dependencies else ())
    schedule = builder.build()
    return topology, schedule, route_schedule(topology, schedule, topology.endpoints)


def _run_loops() -> None:
    """The compiled event loop (engine.loop) with each solver: kernel, classes."""
    from .engine import execute
    from .engine.config import EngineConfig

    # The loop runs with each solver on the router's arrays and on a symmetry quotient's
    # (built anew): the executor hands both over with the same types, and should one kind
    # ever differ, the run here still compiles it (tests/test_precompile.py asserts one
    # specialisation).
    for reduce in (False, True):
        topology, schedule, routes = _case(dependencies=True, alike=reduce)
        for loop in ("kernel", "classes"):
            config = EngineConfig(loop=loop, symmetry=reduce, symmetry_min_subflows=0)
            result = execute(topology, schedule, routes, config=config)
            assert not reduce or result.meta.get("symmetry_classes"), "no quotient formed"


def _run_symmetry() -> None:
    """The compiled symmetry search (engine.symmetry)."""
    from .engine import symmetry
    from .engine.config import EngineConfig

    # alike sizes: the search settles and runs its exact checks, so every kernel is called
    topology, schedule, routes = _case(dependencies=True, alike=True)
    found = symmetry.find_classes(schedule, routes, topology.bandwidth, min_subflows=0,
                                  config=EngineConfig(symmetry_compiled_from=0))
    assert found is not None, "no classes found"


def _run_lower_bound() -> None:
    """The compiled longest path of algorithms.lower_bound."""
    from .algorithms._lower_bound_kernel import longest_path

    longest_path(np.ones(3), np.zeros(3), np.array([0, 0, 1, 2]), np.array([0, 1]))


def uncompiled() -> list[str]:
    """The entry points (``module.name``) with no compiled specialisation in this process;
    every one when numba is not installed."""
    import importlib

    missing = []
    for module, name in ENTRY_POINTS:
        function = getattr(importlib.import_module(module), name, None)
        if not getattr(function, "signatures", None):
            missing.append(f"{module}.{name}")
    return missing


def compile_all(*, verbose: bool = False) -> float:
    """Compile (or load from the cache) every entry point; the seconds it took. Without
    numba, nothing to do: 0.0."""
    from .engine.numba_loader import load

    if load() is None:
        return 0.0
    start = time.perf_counter()
    for step in (_run_loops, _run_symmetry, _run_lower_bound):
        begun = time.perf_counter()
        step()
        if verbose:
            print(f"netsim: {step.__doc__.splitlines()[0]}  {time.perf_counter() - begun:.1f} s",
                  file=sys.stderr, flush=True)
    return time.perf_counter() - start


def main() -> int:
    seconds = compile_all(verbose=True)
    missing = uncompiled()
    if missing:
        print(f"netsim: not compiled: {', '.join(missing)}", file=sys.stderr)
        return 1
    print(f"netsim: compiled kernels ready in {seconds:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
