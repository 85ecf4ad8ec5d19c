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

>>> numba = load()
>>> numba is None or callable(numba.njit)
True
"""

from __future__ import annotations

import sys
from types import ModuleType

__all__ = ["load"]

_PROBE = "scipy.linalg.cython_blas"      # the module numba.np.linalg.ensure_blas imports


def load() -> ModuleType | None:
    """numba, imported with its BLAS probe deferred; None when numba is not installed."""
    try:
        import numba
    except ImportError:                 # pragma: no cover - exercised without numba only
        return None
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
