"""The registry API, argument checks, nccl-tests size semantics and one-line errors."""

from __future__ import annotations

import numpy as np
import pytest

from netsim.algorithms import (AlgoOptions, algorithms_for, build_schedule, get_algorithm,
                               register)
from netsim.algorithms import registry
from netsim.algorithms.registry import OPS
from netsim.errors import InputError
from netsim.schedule import ScheduleBuilder
from netsim.topology import mesh, nvswitch, ring

EXPECTED = {
    "allreduce": {"ring", "bidir_ring", "dbtree", "halving_doubling", "recursive_doubling",
                  "direct", "dimensionwise", "hierarchical", "innetwork"},
    "reducescatter": {"ring", "bidir_ring", "halving", "direct", "dimensionwise"},
    "allgather": {"ring", "bidir_ring", "doubling", "direct", "bruck", "dimensionwise"},
    "alltoall": {"direct", "pairwise", "bruck", "dimensionwise"},
    "broadcast": {"chain", "binomial"},
    "reduce": {"chain", "binomial"},
}


def test_every_op_has_the_required_algorithms():
    assert OPS == ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast",
                   "reduce")
    for op in OPS:
        names = {a.name for a in algorithms_for(op)}
        assert EXPECTED[op] <= names
        for a in algorithms_for(op):
            assert a.op == op and a.summary and "\n" not in a.summary


def test_requirements_are_declared():
    assert get_algorithm("allreduce", "recursive_doubling").power_of_two
    assert get_algorithm("allreduce", "dimensionwise").requires == "grid"
    assert get_algorithm("allreduce", "hierarchical").requires == "groups"
    assert get_algorithm("allreduce", "innetwork").requires == "reducing-switch"
    assert get_algorithm("allreduce", "ring").requires is None


def test_unknown_names_suggest_the_closest():
    with pytest.raises(InputError, match="unknown collective op 'alreduce': did you mean "
                                         "'allreduce'"):
        get_algorithm("alreduce", "ring")
    with pytest.raises(InputError, match="unknown allreduce algorithm 'rign': did you mean "
                                         "'ring'"):
        build_schedule("allreduce", "rign", 4, 1e6)


def test_power_of_two_refusal_names_the_alternatives():
    with pytest.raises(InputError) as err:
        build_schedule("allreduce", "recursive_doubling", 6, 1e6)
    message = str(err.value)
    assert message.startswith("recursive_doubling needs a power of two number of ranks, "
                              "got 6; use ring, bidir_ring, ")
    assert "halving_doubling" in message and "dimensionwise" not in message
    assert "\n" not in message


def test_requirements_refuse_clearly():
    dim = get_algorithm("allreduce", "dimensionwise")
    assert dim.applies(8, AlgoOptions(topology=mesh((2, 4))))
    assert not dim.applies(8, AlgoOptions())
    assert "mesh, torus or ring" in dim.why_not(8, AlgoOptions(topology=nvswitch(8)))
    assert "fill a box" in dim.why_not(6, AlgoOptions(topology=mesh((2, 4))))
    innet = get_algorithm("allreduce", "innetwork")
    assert not innet.applies(8, AlgoOptions(topology=nvswitch(8)))
    assert innet.applies(8, AlgoOptions(topology=nvswitch(8, reduce=True)))
    hier = get_algorithm("allreduce", "hierarchical")
    assert hier.applies(6, AlgoOptions(groups=((0, 1, 2), (3, 4, 5))))
    assert "one size" in hier.why_not(5, AlgoOptions(groups=((0, 1, 2), (3, 4))))
    assert "exactly once" in hier.why_not(4, AlgoOptions(groups=((0, 1), (1, 3))))
    assert hier.applies(8, AlgoOptions(topology=nvswitch(8)))      # one group: the box
    with pytest.raises(InputError, match="^innetwork needs a switch with reduce: true"):
        build_schedule("allreduce", "innetwork", 4, 1e6, AlgoOptions(topology=ring(4)))


@pytest.mark.parametrize("kwargs,match", [
    (dict(num_ranks=0), "number of ranks must be a positive integer, got 0"),
    (dict(num_ranks=2.5), "number of ranks must be a positive integer, got 2.5"),
    (dict(size=-1), "size must be a finite number of bytes >= 0, got -1.0"),
    (dict(size="lots"), "size must be a number of bytes, got 'lots'"),
    (dict(options=AlgoOptions(chunks=0)), "chunks must be a positive integer, got 0"),
    (dict(options=AlgoOptions(gamma=-1.0)), "gamma must be a positive number"),
    (dict(options=AlgoOptions(root=4)), r"root must be a rank in 0\.\.3, got 4"),
    (dict(options=AlgoOptions(order="snkae")), "unknown rank order 'snkae': did you mean "
                                               "'snake'"),
    (dict(options=AlgoOptions(order="snake")), "rank order 'snake' needs a topology"),
])
def test_bad_arguments_are_one_line_errors(kwargs, match):
    args = dict(num_ranks=4, size=1e6, options=AlgoOptions())
    args.update(kwargs)
    with pytest.raises(InputError, match=match) as err:
        build_schedule("allreduce", "ring", args["num_ranks"], args["size"], args["options"])
    assert "\n" not in str(err.value)


def test_options_are_checked_even_where_unused():
    with pytest.raises(InputError, match="unknown rank order 'snkae'"):
        build_schedule("allreduce", "halving_doubling", 4, 1e6, AlgoOptions(order="snkae"))


def test_meta_records_op_algorithm_size_and_ranks():
    s = build_schedule("allgather", "bruck", 6, 3e6)
    assert {k: s.meta[k] for k in ("op", "algorithm", "size", "ranks")} == {
        "op": "allgather", "algorithm": "bruck", "size": 3e6, "ranks": 6}


@pytest.mark.parametrize("op,name,total", [
    ("allreduce", "ring", lambda p, S: 2 * (p - 1) * S),            # 2(p-1)/p S per rank
    ("allgather", "ring", lambda p, S: (p - 1) * S),                # S is the output
    ("reducescatter", "ring", lambda p, S: (p - 1) * S),            # S is the input
    ("alltoall", "direct", lambda p, S: (p - 1) * S),               # S/p to each peer
    ("broadcast", "chain", lambda p, S: (p - 1) * S),
    ("reduce", "binomial", lambda p, S: (p - 1) * S),
])
def test_sizes_follow_nccl_tests(op, name, total):
    p, size = 6, 6e6
    assert build_schedule(op, name, p, size).total_bytes == pytest.approx(total(p, size))


def test_annotation_is_on_for_small_schedules_and_can_be_switched():
    assert build_schedule("allreduce", "ring", 8, 1e6).data
    assert not build_schedule("allreduce", "ring", 65, 1e6).data
    assert build_schedule("allreduce", "ring", 65, 1e6,
                          AlgoOptions(extra={"annotate": True})).data


def test_big_ring_builds_as_arrays():
    s = build_schedule("allreduce", "ring", 256, 1e9)
    assert s.num_sends == 2 * 255 * 256
    assert np.all(s.nbytes == 1e9 / 256)
    assert np.all((s.dst - s.src) % 256 == 1)


def test_the_registry_is_open():
    @register("broadcast", "test_star", "root sends to everyone at once")
    def star(num_ranks, size, options):
        b = ScheduleBuilder(num_ranks)
        for r in range(num_ranks):
            if r != options.root:
                b.send(options.root, r, size)
        return b.build()

    try:
        s = build_schedule("broadcast", "test_star", 5, 1e6, AlgoOptions(root=2))
        assert s.num_sends == 4 and s.meta["algorithm"] == "test_star"
        assert "test_star" in {a.name for a in algorithms_for("broadcast")}
    finally:
        del registry._REGISTRY["broadcast"]["test_star"]
    with pytest.raises(InputError, match="unknown collective op"):
        register("gather", "x", "y")
    with pytest.raises(InputError, match="unknown requirement"):
        register("broadcast", "x", "y", requires="gpu")
