"""netsim against SimGrid itself, on a platform netsim wrote (`topo --format simgrid`):
random flows with staggered starts finish at the same times. Needs SimGrid's Python
bindings in this Python or the system's (Debian: python3-simgrid); skipped without them.

SimGrid's CM02 model divides a link among flows in inverse proportion to their route
latency (TCP's RTT unfairness); netsim shares max-min fairly. The platforms here have no
latency, where the two are the same model."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from netsim.interop import simgrid_platform
from netsim.run import simulate_flows
from netsim.schedule import flows_from_dict
from netsim.topology import parse_topology

RUNNER = Path(__file__).parent / "simgrid" / "run_flows.py"


def _simgrid_python() -> str | None:
    for python in (sys.executable, shutil.which("python3"), "/usr/bin/python3"):
        if python and subprocess.run([python, "-c", "import simgrid"], capture_output=True,
                                     timeout=60).returncode == 0:
            return python
    return None


PYTHON = _simgrid_python()
pytestmark = pytest.mark.skipif(PYTHON is None, reason="SimGrid's Python bindings are not "
                                "installed (Debian: apt install python3-simgrid)")


@pytest.mark.parametrize("spec,seed", [("torus:4x4,bw=10GB/s", 0), ("mesh:3x3,bw=25GB/s", 1),
                                       ("nvswitch:8,switches=1,bw=50GB/s", 2)])
def test_finish_times_match_simgrid(spec, seed, tmp_path):
    topo = parse_topology(spec)
    names = [topo.node_names[i] for i in topo.endpoints]
    rng = np.random.default_rng(seed)
    flows = []
    for k in range(100):
        src, dst = rng.choice(len(names), 2, replace=False)
        size = float(np.round(rng.lognormal(13, 1.5)))      # about 0.4 MB, heavy tail
        start = float(np.round(rng.uniform(0, 100e-6), 9))
        flows.append([names[src], names[dst], size, start])
    platform = tmp_path / "platform.xml"
    platform.write_text(simgrid_platform(topo)[0])
    (tmp_path / "flows.json").write_text(json.dumps(flows))
    out = subprocess.run([PYTHON, str(RUNNER), str(platform), str(tmp_path / "flows.json")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    simgrid = np.array(json.loads(out.stdout.strip().splitlines()[-1]))
    flowset = flows_from_dict({"topology": spec, "flows": [
        {"id": k, "src": s, "dst": d, "bytes": b, "start": t}
        for k, (s, d, b, t) in enumerate(flows)]}, "flows.json")
    result = simulate_flows(flowset)
    netsim = np.asarray(result.op_finish)
    np.testing.assert_allclose(netsim, simgrid, rtol=1e-12, atol=0)
