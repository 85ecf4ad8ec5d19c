"""What fit_blackhole.py and fit_wormhole.py share: fit a Tenstorrent machine's free
calibration parameters (alpha, launch, gamma, ring_packet_cost, and optionally
launch_per_device) to raw tt-metal CCL kernel times and print the error per size.

A data point is ``(op, algorithm, row)``: the collective, the algorithm the default
command runs for that curve, and a row of ``netsim.run.read_measured``; or ``(op,
algorithm, row, spec, ranks)``, run on another topology spec (with the same fixed
calibration) on its first ``ranks`` endpoints (a line of fewer chips). The fit minimises
the worst |log(simulated / measured)| relative to the goal the presets are held to (15%
from 1 MiB, 30% below), plus 5% of its root mean square to settle ties, starting from the
least-squares fit on log(simulated / measured): a pure least-squares fit leaves some sizes
outside the goal. Parameters are in us (alpha, launch, launch_per_device), GB/s (gamma)
and ns (ring_packet_cost) so that the optimisers step them on one scale.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, minimize

from netsim.run import run_collective
from netsim.topology import parse_topology
from netsim.topology.calibration import Calibration, apply_calibration

MIB = 1 << 20
GOAL_FROM_1MIB, GOAL_BELOW = 0.15, 0.30     # the error the presets are held to
#: Bounds of (alpha us, launch us, gamma GB/s, ring_packet_cost ns, launch_per_device us)
#: in the least squares.
BOUNDS = ([0, 0, 5, 0, 0], [20, 50, 1000, 500, 20])


@dataclass(frozen=True)
class Machine:
    """A topology spec and the calibration fixed by sources (packet, header, fabric)."""

    spec: str
    fixed: dict

    def __call__(self, alpha: float, launch: float, gamma: float, ring_cost: float,
                 per_device: float = 0.0, spec: str | None = None):
        """The machine (or ``spec``) with these parameters (SI units: s, s, bytes/s, s, s)."""
        cal = Calibration.from_mapping({**self.fixed, "alpha": alpha, "launch": launch,
                                        "gamma": gamma, "ring_packet_cost": ring_cost,
                                        "launch_per_device": per_device})
        return apply_calibration(parse_topology(spec or self.spec), cal)


def errors(params, data, machine: Machine) -> np.ndarray:
    """log(simulated / measured) of every data point with ``params`` (us, us, GB/s, ns and,
    if given, launch_per_device us)."""
    alpha, launch, gamma, ring_cost = params[:4]
    per_device = params[4] if len(params) > 4 else 0.0
    topos: dict = {}
    out = []
    for op, algorithm, row, *where in data:
        spec, ranks = where if where else (None, None)
        if spec not in topos:
            topos[spec] = machine(alpha * 1e-6, launch * 1e-6, gamma * 1e9, ring_cost * 1e-9,
                                  per_device * 1e-6, spec)
        run = run_collective(op, topos[spec], algorithm, row["size_bytes"], ranks=ranks)
        out.append(np.log(run.time_s / row["time_s"]))
    return np.array(out)


def worst(params, data, machine: Machine, tolerance: np.ndarray) -> float:
    """Worst |log error| relative to the goal, plus 5% of its RMS (ties)."""
    if np.any(np.asarray(params) <= 0):
        return 1e9
    scaled = np.abs(errors(params, data, machine)) / tolerance
    return float(scaled.max() + 0.05 * np.sqrt(np.mean(scaled ** 2)))


def fit_and_report(data, machine: Machine, start, keep=None) -> np.ndarray:
    """Fit the parameters to the points where ``keep`` is True (default: all), from
    ``start`` (us, us, GB/s, ns and, to fit it too, launch_per_device us); print the fit
    and a Markdown table of every point's error (left-out points marked), and return the
    fitted parameters."""
    keep = np.ones(len(data), dtype=bool) if keep is None else np.asarray(keep)
    fitted = [d for d, k in zip(data, keep) if k]
    sizes = np.array([point[2]["size_bytes"] for point in fitted])
    tolerance = np.log1p(np.where(sizes >= MIB, GOAL_FROM_1MIB, GOAL_BELOW))
    begin = time.perf_counter()
    bounds = (BOUNDS[0][:len(start)], BOUNDS[1][:len(start)])
    fit = least_squares(errors, x0=start, args=(fitted, machine), bounds=bounds,
                        diff_step=1e-3)
    print(f"least squares: {np.round(fit.x, 2).tolist()}", flush=True)
    fit = minimize(worst, fit.x, args=(fitted, machine, tolerance), method="Nelder-Mead",
                   options={"maxfev": 260, "xatol": 1e-3, "fatol": 1e-4})
    alpha, launch, gamma, ring_cost = fit.x[:4]
    print(f"fit in {time.perf_counter() - begin:.0f} s: alpha {alpha:.2f} us, launch "
          f"{launch:.2f} us, gamma {gamma:.1f} GB/s, ring_packet_cost {ring_cost:.1f} ns"
          + (f", launch_per_device {fit.x[4]:.2f} us" if len(fit.x) > 4 else ""))
    err = np.expm1(errors(fit.x, data, machine)) * 100
    print("| op | algorithm | chips | size | measured (us) | netsim (us) | error |")
    print("|---|---|---|---|---|---|---|")
    for (op, algorithm, row, *where), e, k in zip(data, err, keep):
        chips = where[1] if where else "all"
        print(f"| {op} | {algorithm} | {chips} | {int(row['size_bytes'])} | "
              f"{row['time_s'] * 1e6:.2f} | {row['time_s'] * 1e6 * (1 + e / 100):.2f} | "
              f"{e:+.1f}%{'' if k else ' (left out)'} |")
    every = np.array([point[2]["size_bytes"] for point in data])
    print(f"worst |error| from 1 MiB: {np.abs(err[every >= MIB]).max():.1f}%; below: "
          f"{np.abs(err[(every < MIB) & keep]).max():.1f}%"
          f"{'' if keep.all() else ' (left-out sizes aside)'}")
    return fit.x
