"""Every preset's default curve (what its library runs, or auto) is free of busbw drops no
published measurement shows: from 1 MiB up, busbw never falls by more than 15% from one
size to the next (tests/test_nvidia_curves.py covers the NVIDIA presets to 8 GiB)."""

from __future__ import annotations

import pytest

from netsim.run import run_sweep
from netsim.topology import parse_topology, preset_names

MiB = 1 << 20
NVIDIA_SINGLE = {"dgx-a100", "dgx-h100", "dgx-b200", "gb200-nvl72"}


@pytest.mark.parametrize("op", ["allreduce", "allgather"])
@pytest.mark.parametrize("preset", sorted(set(preset_names()) - NVIDIA_SINGLE))
def test_default_curve_has_no_drop(preset, op):
    sizes = [MiB << k for k in range(0, 11, 2)]           # 1 MiB .. 1 GiB
    runs = run_sweep(op, parse_topology(preset), "default", sizes)
    busbw = [run.busbw_GBps for run in runs]
    for size, before, after in zip(sizes[1:], busbw, busbw[1:]):
        assert after >= 0.85 * before, (preset, op, size, before, after,
                                        [r.algorithm for r in runs])
