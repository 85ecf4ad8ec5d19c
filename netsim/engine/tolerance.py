"""The approximate mode (``tolerance``): which completions merge into one event, and when.

Exact runs stop the clock at every completion. With a relative ``tolerance`` the flows due
within ``tolerance`` x t of the first completion (at time t) complete together, at the
*last* of them and not after the next timed event (a release, a fault). Completing them
late rather than early keeps the run physically possible: every flow drains at its
max-min rate until it completes, so no link carries more than its capacity (utilisation
<= 1), and no op starts before the data it waits for could have arrived, so the makespan
is never below a lower bound. Each merged flow finishes at most ``tolerance`` x t late.

The executor's numpy loop calls :func:`window_end`; in the compiled loop (engine.loop) each
solver's ``first_finish`` computes the same end.

>>> import numpy as np
>>> window_end(0.0, np.array([1.0, 1.05, 1.2]), 1.0, np.inf, 0.1)   # 1.2 is beyond 1.1
1.05
>>> check_tolerance(0.05)
0.05
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import InputError

__all__ = ["check_tolerance", "window_end"]

#: The merging window of exact runs: completions within this relative time of an event
#: join it (floating-point ties), in every loop (the executor's and the compiled ones).
_REL_TOL = 1e-9


def check_tolerance(tolerance) -> float:
    """``tolerance`` as a float in [0, 1), or a one-line :class:`InputError` naming it."""
    if isinstance(tolerance, bool):
        raise InputError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    try:
        value = float(tolerance)
    except (TypeError, ValueError):
        raise InputError(f"tolerance must be a number in [0, 1), got {tolerance!r}") from None
    if not (math.isfinite(value) and 0.0 <= value < 1.0):
        raise InputError(f"tolerance must be a number in [0, 1), got {tolerance!r}")
    return value


def window_end(now: float, finish_dt: np.ndarray, dt_fluid: float, t_heap: float,
               tolerance: float) -> float:
    """Time of the event that merges the completions due within ``tolerance`` x t of the
    first (``now + dt_fluid``; ``finish_dt``: every draining flow's time left, s), capped
    at the next timed event ``t_heap``."""
    reach = min(dt_fluid * (1 + _REL_TOL) + tolerance * (now + dt_fluid), t_heap - now)
    due = finish_dt[finish_dt <= reach]
    return now + max(float(due.max()) if due.size else dt_fluid, dt_fluid)
