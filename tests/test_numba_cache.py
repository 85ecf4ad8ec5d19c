"""The engine's compiled kernels are never loaded from a cache made from other sources:
numba checks only the time stamp of the file that defines a function, so a cached loop
would keep old solver code after a solver's file changes (engine.numba_loader)."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

numba = pytest.importorskip("numba")

from netsim.engine import numba_loader  # noqa: E402


def test_the_stamp_lies_where_numba_keeps_the_loops_cache(tmp_path, monkeypatch):
    from numba.core.caching import UserProvidedCacheLocator

    from netsim.engine.loop import run_events

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    func = run_events.py_func
    cache = Path(UserProvidedCacheLocator.from_function(func, inspect.getfile(func))
                 .get_cache_path())
    stale = cache / "run_events-1.py311.nbi"
    stale.write_bytes(b"")
    numba_loader._drop_stale_engine_cache(numba)
    assert (cache / numba_loader.STAMP).exists() and not stale.exists()
    stale.write_bytes(b"")                      # made from these sources: kept
    numba_loader._drop_stale_engine_cache(numba)
    assert stale.exists()


def test_a_changed_source_drops_every_cached_kernel(tmp_path):
    sources = [tmp_path / "loop.py", tmp_path / "classes.py"]
    for path in sources:
        path.write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    assert numba_loader.drop_stale(cache, sources) is False     # nothing cached yet
    kernels = [cache / "loop.run_events-10.py311.nbi", cache / "loop.run_events-10.py311.1.nbc"]
    for path in kernels:
        path.write_bytes(b"")
    assert numba_loader.drop_stale(cache, sources) is False
    sources[1].write_text("x = 2\n")            # the solver changes, the loop's file does not
    assert numba_loader.drop_stale(cache, sources) is True
    assert not any(path.exists() for path in kernels)
