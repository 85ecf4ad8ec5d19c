"""--tolerance (the engine's approximate mode) from the CLI and the Python API."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_helpers import run_main
from netsim.run import run_collective


def test_coll_tolerance_zero_is_the_default_and_a_positive_one_is_said():
    exact = run_collective("alltoall", "mesh:3x3", "direct", "1MiB")
    zero = run_collective("alltoall", "mesh:3x3", "direct", "1MiB", tolerance=0.0)
    assert zero.time_s == exact.time_s and "tolerance" not in zero.record()
    loose = run_collective("alltoall", "mesh:3x3", "direct", "1MiB", tolerance=0.05)
    assert loose.record()["tolerance"] == 0.05
    assert loose.time_s <= exact.time_s * (1 + 1e-12)     # completions only come earlier
    assert loose.time_s == pytest.approx(exact.time_s, rel=0.2)


def test_cli_tolerance_out_of_range_is_one_line_and_json_carries_it(capsys):
    code, out, err = run_main(["coll", "alltoall", "--topo", "mesh:3x3", "--size", "1MiB",
                               "--tolerance", "1.5"], capsys)
    assert code == 2 and "--tolerance" in err and "Traceback" not in err
    code, out, err = run_main(["coll", "alltoall", "--topo", "mesh:3x3", "--size", "1MiB",
                               "--tolerance", "0.01", "--format", "json"], capsys)
    assert code == 0
    assert json.loads(out)["records"][0]["tolerance"] == 0.01
    code, out, _ = run_main(["compare", "alltoall", "--topo", "mesh:3x3", "--size", "1MiB",
                             "--algo", "direct", "--tolerance", "0", "--format", "json"], capsys)
    assert code == 0 and np.isfinite(json.loads(out)["records"][0]["time_s"])
