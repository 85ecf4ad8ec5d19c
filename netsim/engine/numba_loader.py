"""The one place netsim imports numba (a base dependency, whose kernels ``pip install``
compiles ahead: netsim._precompile; :func:`load` still answers None where numba is missing,
an install with ``--no-deps``, and the engine then keeps its numpy loop).

numba's first compiled call in a process loads its registries of implementations, and one of
them, ``numba.np.arraymath`` (numba 0.59 to 0.68), imports ``scipy.linalg`` at import time
only to learn whether BLAS is there (``_check_blas``). On a fresh process that import costs
about 0.09 s (scipy's array-API shim walks numpy's namespace and so imports ``numpy.f2py``),
a sixth of loading netsim's cached compiled loops, and none of them calls BLAS. So
:func:`load` imports numba with that probe answered "no", then sets the answer numba would
have found (scipy is a base dependency of netsim, so BLAS is there): numba imports
``scipy.linalg`` itself the first time a function that does use BLAS is compiled.
``tests/test_engine_kernel.py`` checks that the flag ends as numba would set it and that
``np.convolve`` still compiles and agrees with numpy.

numba keys a cached function by its own source file's time stamp and size only, so a cached
``loop.run_events`` holds the solvers it was compiled with after ``classes.py`` changes
(a ``git pull`` into an editable install, a branch switch): the loop would run old code,
silently. :func:`load` therefore keeps a digest of the engine's sources beside the cache and
drops the engine's cached kernels when the digest differs (:func:`drop_stale`); the next
call compiles them again.

>>> numba = load()
>>> numba is None or callable(numba.njit)
True
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from types import ModuleType

__all__ = ["load", "drop_stale"]

#: The file beside the cached kernels that holds the digest of the sources they came from.
STAMP = "netsim-sources.sha256"

#: Whether this process has checked the engine's cache against its sources (:func:`load`).
_cache_checked = False

_PROBE = "scipy.linalg.cython_blas"      # the module numba.np.linalg.ensure_blas imports


def load() -> ModuleType | None:
    """numba, imported with its BLAS probe deferred; None when numba is not installed."""
    try:
        import numba
    except ImportError:                 # pragma: no cover - exercised without numba only
        return None
    global _cache_checked
    if not _cache_checked:              # once a process: its engine modules are loaded
        _drop_stale_engine_cache(numba)
        _cache_checked = True
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return numba                    # probe done already, or it costs nothing now
    sys.modules[_PROBE] = None          # makes "import scipy.linalg.cython_blas" fail at once
    try:
        from numba.np import arraymath
    except ImportError:                 # pragma: no cover - another numba's layout: numba
        return numba                    # loads its registries itself, as it would have
    finally:
        del sys.modules[_PROBE]
    if hasattr(arraymath, "_HAVE_BLAS"):
        arraymath._HAVE_BLAS = True     # what _check_blas finds with scipy installed
    return numba


def drop_stale(cache: Path, sources: list[Path]) -> bool:
    """Delete numba's cache files (``*.nbi``, ``*.nbc``) in ``cache`` unless the digest of
    ``sources`` is the one stamped there, then stamp it; True when files were dropped. An
    unwritable cache is left alone (numba then does not write there either).

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); src = d / "a.py"; _ = src.write_text("x = 1")
    >>> _ = (d / "f.nbi").write_bytes(b""); drop_stale(d, [src]), (d / "f.nbi").exists()
    (True, False)
    >>> _ = (d / "f.nbi").write_bytes(b""); drop_stale(d, [src])
    False
    >>> _ = src.write_text("x = 2"); drop_stale(d, [src]), (d / "f.nbi").exists()
    (True, False)
    """
    digest = hashlib.sha256()
    for path in sorted(sources):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest.hexdigest():
            return False
    except OSError:
        pass                            # no stamp yet: what is there is of unknown sources
    stale = [f for pattern in ("*.nbi", "*.nbc") for f in cache.glob(pattern)]
    try:
        for f in stale:
            f.unlink(missing_ok=True)
        cache.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:                     # pragma: no cover - a read-only install
        return False
    return bool(stale)


def _drop_stale_engine_cache(numba: ModuleType) -> None:
    """:func:`drop_stale` on the engine's kernels, wherever numba keeps them: ``__pycache__``
    beside the sources, or under ``NUMBA_CACHE_DIR`` as numba lays that out."""
    here = Path(os.path.abspath(__file__)).parent      # the path numba keys its cache by
    sources = sorted(here.glob("*.py"))
    cache = here / "__pycache__"
    directory = getattr(numba.config, "CACHE_DIR", "")
    if directory:
        from numba.core.caching import _CacheLocator

        cache = Path(directory) / _CacheLocator.get_suitable_cache_subpath(str(sources[0]))
    drop_stale(cache, sources)
