"""The run pipeline's shared steps: calibrated costs applied in one place, the memory
estimate counting the chunks the build will make, named parameters throughout."""

from __future__ import annotations

import inspect

import pytest

from netsim.algorithms import AlgoOptions, get_algorithm
from netsim.algorithms.registry import default_chunks
from netsim.errors import InputError
from netsim.run import run_collective, run_sweep
from netsim.run import machine_costs
from netsim.run.placed import _chunks
from netsim.topology import calibrated_alpha, calibrated_gamma, parse_topology


def test_machine_costs_take_the_calibration_unless_given():
    topo = parse_topology("galaxy-wh")
    alpha, options = machine_costs(topo, None, AlgoOptions())
    assert alpha == calibrated_alpha(topo) > 0
    assert options.gamma == calibrated_gamma(topo) is not None
    alpha, options = machine_costs(topo, 2e-6, AlgoOptions(gamma=1e-12))
    assert (alpha, options.gamma) == (2e-6, 1e-12)
    assert machine_costs(parse_topology("ring:4"), None, AlgoOptions()) == (0.0, AlgoOptions())
    with pytest.raises(InputError, match="alpha"):
        machine_costs(topo, -1.0, AlgoOptions())


def test_the_memory_estimate_counts_the_chunks_the_build_makes():
    algo = get_algorithm("allreduce", "innetwork")
    size = float(2**30)
    assert default_chunks(size) > 1
    assert _chunks(algo, size, AlgoOptions()) == default_chunks(size)
    assert _chunks(algo, size, AlgoOptions(chunks=3)) == 3
    ring = get_algorithm("allreduce", "ring")          # not pipelined: one chunk
    assert _chunks(ring, size, AlgoOptions()) == 1


def test_a_group_run_and_a_whole_machine_run_pay_the_same_calibrated_costs():
    """--nodes on every endpoint is the whole machine: the same time, so both resolve alpha
    and gamma the same way."""
    topo = parse_topology("t3000")
    names = ",".join(topo.node_names[i] for i in topo.endpoints)
    whole = run_collective("allreduce", topo, "ring", "1MiB")
    named = run_collective("allreduce", topo, "ring", "1MiB", nodes=names)
    assert named.time_s == whole.time_s


def test_a_sweep_names_its_parameters():
    """Readers and tools see what a sweep takes (no **kwargs), and they are run_collective's."""
    sweep = inspect.signature(run_sweep).parameters
    single = inspect.signature(run_collective).parameters
    assert not any(p.kind is p.VAR_KEYWORD for p in sweep.values())
    assert set(single) - {"size"} <= set(sweep)


def test_a_record_says_what_each_message_paid():
    """An algorithm may set its own per-message cost (NCCL's model: its protocol's step
    latency) in place of alpha; the record says which cost was paid, so it is not silent."""
    topo = parse_topology("dgx-h100")
    ring = run_collective("allreduce", topo, "ring", "1MiB").record()
    assert ring["overhead_s"] == calibrated_alpha(topo)
    nccl = run_collective("allreduce", topo, "nccl", "1MiB").record()
    assert nccl["overhead_s"] != calibrated_alpha(topo) and nccl["overhead_s"] >= 0
    given = run_collective("allreduce", topo, "ring", "1MiB", alpha=2e-6).record()
    assert given["overhead_s"] == 2e-6
