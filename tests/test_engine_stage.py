"""The engine's reduce-run-expand stage: it picks the form a run takes (a ring's blocks,
alike in-network planes a few per class, every op) and the reduced forms give the full
schedule's answer."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from netsim.engine.stage import simulate
from netsim.engine import fail_links
from netsim.run import resolve_request
from netsim.run.placed import algorithm_forms
from netsim.topology import nvswitch


def _forms(machine, algorithm: str, size: float):
    request = resolve_request("allreduce", machine, algorithm, size, alpha=0.0)
    return request, algorithm_forms(request, request.candidates[0], size)


def test_a_ring_runs_on_its_blocks_and_gives_every_ops_answer():
    request, forms = _forms("ring:8,bw=25GB/s,lat=1us", "ring", 8e6)
    blocks = simulate(forms, router=request.router)
    full = simulate(replace(forms, blocks=None), router=request.router)
    assert (blocks.form, full.form) == ("blocks", "full")
    assert blocks.result.makespan == pytest.approx(full.result.makespan, rel=1e-12)
    np.testing.assert_allclose(blocks.result.link_bytes, full.result.link_bytes, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(blocks.result.op_finish),
                               np.asarray(full.result.op_finish), rtol=1e-12)
    # a timeline needs every link's flows, a fault breaks the symmetry: every op
    assert simulate(forms, router=request.router, record_timeline=True).form == "full"
    fault = fail_links(request.topology, [0], 1e-6)
    assert simulate(forms, router=request.router, faults=[fault]).form == "full"


def test_alike_planes_run_a_few_per_class_and_expand_to_every_plane():
    machine = nvswitch(8, switches=5, bandwidth="500GB/s", latency=1e-6, reduce=True,
                       reduce_bandwidth=5e10)        # NVL72-like: five alike planes
    request, forms = _forms(machine, "innetwork", 2**20)
    few = simulate(forms, router=request.router)
    every = simulate(replace(forms, planes=None), router=request.router)
    assert (few.form, every.form) == ("planes", "full")
    assert few.result.meta["planes"] == {"planes": 5, "simulated": 2}
    assert few.result.makespan == pytest.approx(every.result.makespan, rel=1e-12)
    assert few.result.num_flows == every.result.num_flows
    np.testing.assert_allclose(few.result.link_bytes, every.result.link_bytes, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(few.result.op_finish),
                               np.asarray(every.result.op_finish), rtol=1e-12)
