"""What fit_blackhole.py and fit_wormhole.py share: fit a Tenstorrent machine's four free
calibration parameters (alpha, launch, gamma, ring_packet_cost) to raw tt-metal CCL kernel
times and print the error per size.

A data point is ``(op, algorithm, row)``: the collective, the algorithm the default
command runs for that curve, and a row of ``netsim.run.read_measured``. The fit minimises
the worst |log(simulated / measured)| relative to the goal the presets are held to (15%
from 1 MiB, 30% below), plus 5% of its root mean square to settle ties, starting from the
least-squares fit on log(simulated / measured): a pure least-squares fit leaves some sizes
outside the goal. Parameters are in us (alpha, launch), GB/s (gamma) and ns
(ring_packet_cost) so that the optimisers step them on one scale.
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
#: Bounds of (alpha us, launch us, gamma GB/s, ring_packet_cost ns) in the least squares.
BOUNDS = ([0, 0, 5, 0], [20, 50, 1000, 500])


@dataclass(frozen=True)
class Machine:
    """A topology spec and the calibration fixed by sources (packet, header, fabric)."""

    spec: str
    fixed: dict

    def __call__(self, alpha: float, launch: float, gamma: float, ring_cost: float):
        """The machine with these parameters (SI units: s, s, bytes/s, s)."""
        cal = Calibration.from_mapping({**self.fixed, "alpha": alpha, "launch": launch,
                                        "gamma": gamma, "ring_packet_cost": ring_cost})
        return apply_calibration(parse_topology(self.spec), cal)


def errors(params, data, machine: Machine) -> np.ndarray:
    """log(simulated / measured) of every data point with ``params`` (us, us, GB/s, ns)."""
    alpha, launch, gamma, ring_cost = params
    topo = machine(alpha * 1e-6, launch * 1e-6, gamma * 1e9, ring_cost * 1e-9)
    return np.array([np.log(run_collective(op, topo, algorithm, row["size_bytes"]).time_s
                            / row["time_s"]) for op, algorithm, row in data])


def worst(params, data, machine: Machine, tolerance: np.ndarray) -> float:
    """Worst |log error| relative to the goal, plus 5% of its RMS (ties)."""
    if np.any(np.asarray(params) <= 0):
        return 1e9
    scaled = np.abs(errors(params, data, machine)) / tolerance
    return float(scaled.max() + 0.05 * np.sqrt(np.mean(scaled ** 2)))


def fit_and_report(data, machine: Machine, start, keep=None) -> np.ndarray:
    """Fit the parameters to the points where ``keep`` is True (default: all), from
    ``start`` (us, us, GB/s, ns); print the fit and a Markdown table of every point's
    error (left-out points marked), and return the fitted parameters."""
    keep = np.ones(len(data), dtype=bool) if keep is None else np.asarray(keep)
    fitted = [d for d, k in zip(data, keep) if k]
    sizes = np.array([row["size_bytes"] for _, _, row in fitted])
    tolerance = np.log1p(np.where(sizes >= MIB, GOAL_FROM_1MIB, GOAL_BELOW))
    begin = time.perf_counter()
    fit = least_squares(errors, x0=start, args=(fitted, machine), bounds=BOUNDS,
                        diff_step=1e-3)
    print(f"least squares: {np.round(fit.x, 2).tolist()}", flush=True)
    fit = minimize(worst, fit.x, args=(fitted, machine, tolerance), method="Nelder-Mead",
                   options={"maxfev": 260, "xatol": 1e-3, "fatol": 1e-4})
    alpha, launch, gamma, ring_cost = fit.x
    print(f"fit in {time.perf_counter() - begin:.0f} s: alpha {alpha:.2f} us, launch "
          f"{launch:.2f} us, gamma {gamma:.1f} GB/s, ring_packet_cost {ring_cost:.1f} ns")
    err = np.expm1(errors(fit.x, data, machine)) * 100
    print("| op | algorithm | size | measured (us) | netsim (us) | error |")
    print("|---|---|---|---|---|---|")
    for (op, algorithm, row), e, k in zip(data, err, keep):
        print(f"| {op} | {algorithm} | {int(row['size_bytes'])} | {row['time_s'] * 1e6:.2f} | "
              f"{row['time_s'] * 1e6 * (1 + e / 100):.2f} | {e:+.1f}%"
              f"{'' if k else ' (left out)'} |")
    every = np.array([row["size_bytes"] for _, _, row in data])
    print(f"worst |error| from 1 MiB: {np.abs(err[every >= MIB]).max():.1f}%; below: "
          f"{np.abs(err[(every < MIB) & keep]).max():.1f}%"
          f"{'' if keep.all() else ' (left-out sizes aside)'}")
    return fit.x
