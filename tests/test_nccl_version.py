"""NCCL's model picks with the tuner of the release a run used: the constants that changed
(NVLS tree's network latency 14 -> 20.9 us in 2.28.9, NVLS's NVLink latency 23 -> 25 us in
2.21, the NVLS/NVLS-tree bandwidth formula in 2.28) move where NVLS tree is chosen; logs
and annotations say the release, --nccl VERSION= sets it, and records name it."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from cli_helpers import run_main
from netsim.algorithms.nccl import NcclView, candidates, choose
from netsim.algorithms.nccl.tuning import NCCL_VERSION, parse_nccl_version
from netsim.errors import InputError
from netsim.run import measured_nccl_version, read_measured_run

# 2 and 4 x DGX H100 as NCCL sees them (tests/test_nccl_multinode.py): 8 NICs of 50 GB/s.
TWO = NcclView(ranks=16, arch="hopper", gpu_bw=18 * 20.6, nvls=True, nodes=2, nics=8,
               nic_bw=50.0)
FOUR = replace(TWO, ranks=32, nodes=4)
MiB = 1 << 20


def _entry(view, algorithm, protocol, size):
    return next(c for c in candidates("allreduce", view, size)
                if (c.algorithm, c.protocol) == (algorithm, protocol))


@pytest.mark.parametrize("text, version", [("2.26.2", (2, 26, 2)), ("2.28", (2, 28, 0)),
                                           ("2.20.5+cuda12.4", (2, 20, 5)),
                                           ("22807", (2, 28, 7)), (22602, (2, 26, 2))])
def test_versions_are_read_as_nccl_prints_them(text, version):
    assert parse_nccl_version(text) == version


@pytest.mark.parametrize("text, says", [("2.18.5", "2.19 to 2.30"), ("2.31.0", "2.19 to 2.30"),
                                        ("two", "not X.Y.Z"), ("2.x.1", "not X.Y.Z")])
def test_versions_the_model_does_not_know_are_refused(text, says):
    with pytest.raises(ValueError, match=says):
        parse_nccl_version(text)


def test_nvls_tree_network_latency_is_the_releases():
    old = replace(TWO, version=(2, 28, 7))
    new = replace(TWO, version=(2, 28, 9))
    # tuning.cc: intraLat + 2 log2(nodes) x hwLat[NET][NVLSTree]: 25 + 2 x 14 / 2 x 20.9
    assert _entry(old, "nvls_tree", "Simple", MiB).latency_us == pytest.approx(25 + 2 * 14.0)
    assert _entry(new, "nvls_tree", "Simple", MiB).latency_us == pytest.approx(25 + 2 * 20.9)
    # NVLink NVLS latency 23 us up to 2.20 (one node)
    one = NcclView(ranks=8, gpu_bw=18 * 20.6, nvls=True)
    assert _entry(replace(one, version=(2, 20, 5)), "nvls", "Simple", MiB).latency_us == 23.0
    assert _entry(replace(one, version=(2, 21, 5)), "nvls", "Simple", MiB).latency_us == 25.0


def test_before_2_28_nvls_tree_rates_five_sixths_of_its_graph():
    # channels x min(bwIntra, bwInter) x 5/6 on 2 nodes, bwInter / 2 beyond (2.19-2.27);
    # the NVLS-tree graph is 8 heads at 48 GB/s (test_nccl_multinode.py)
    assert _entry(replace(TWO, version=(2, 26, 2)), "nvls_tree", "Simple", MiB).busbw_GBps \
        == pytest.approx(8 * 48.0 * 5 / 6)
    assert _entry(replace(FOUR, version=(2, 26, 2)), "nvls_tree", "Simple", MiB).busbw_GBps \
        == pytest.approx(8 * 24.0 * 5 / 6)
    # 2.28's own formula is the default's
    assert _entry(replace(TWO, version=(2, 28, 3)), "nvls_tree", "Simple", MiB).busbw_GBps \
        == _entry(TWO, "nvls_tree", "Simple", MiB).busbw_GBps


def test_older_releases_leave_tree_for_nvls_tree_at_smaller_sizes():
    """The measured 2-node curve of NCCL 2.26.2 (nccl309_xe9680) jumps onto NVLS tree's
    floor at 512 KiB-1 MiB; 2.30's tuner keeps tree LL128 to 2 MiB."""
    assert TWO.version == NCCL_VERSION
    assert choose("allreduce", TWO, 2 * MiB).algorithm == "tree"
    assert choose("allreduce", replace(TWO, version=(2, 26, 2)), 2 * MiB).algorithm \
        == "nvls_tree"
    first = {v: next(s for s in (2 ** k for k in range(16, 30))
                     if choose("allreduce", replace(TWO, version=v), s).algorithm == "nvls_tree")
             for v in ((2, 26, 2), NCCL_VERSION)}
    assert first[(2, 26, 2)] < first[NCCL_VERSION]


LOG = """\
# nccl-tests version 2.17.9 nccl-headers=22602 nccl-library=22602
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 2097152 maxBytes 2097152 step: 2(factor) warmup iters: 5
#
""" + "".join(f"#  Rank {r:2d} Group  0 Pid {1000 + r:6d} on   node{r // 8} device {r % 8:2d} "
              f"[0x07] NVIDIA H100 80GB HBM3\n" for r in range(16)) + """\
#
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
     2097152        524288     float     sum      -1    76.20   27.52   51.60      0    76.60   27.38   51.33      0
"""


def test_a_log_says_its_release_and_coll_picks_with_it(tmp_path, capsys):
    log = tmp_path / "ar.log"
    log.write_text(LOG)
    assert read_measured_run(log).nccl_version == "2.26.2"
    base = ["coll", "allreduce", "--topo", "dgx-h100-cluster:nodes=2", "--size", "2MiB",
            "--format", "json"]
    code, out, err = run_main([*base, "--measured", str(log)], capsys)
    assert code == 0, err
    measured = json.loads(out)["records"][0]
    assert (measured["nccl_version"], measured["nccl_algorithm"]) == ("2.26.2", "nvls_tree")
    code, out, err = run_main(base, capsys)
    default = json.loads(out)["records"][0]
    assert (default["nccl_version"], default["nccl_algorithm"]) == ("2.30.7", "tree")
    code, out, err = run_main([*base, "--nccl", "VERSION=2.26.2"], capsys)
    assert json.loads(out)["records"][0]["nccl_algorithm"] == "nvls_tree"
    # the command's own VERSION wins over the log's
    code, out, err = run_main([*base, "--measured", str(log), "--nccl", "VERSION=2.30.7"],
                              capsys)
    assert json.loads(out)["records"][0]["nccl_algorithm"] == "tree"


def test_a_release_the_model_does_not_know_is_one_line(capsys):
    code, _, err = run_main(["coll", "allreduce", "--topo", "dgx-h100", "--nccl",
                             "VERSION=2.18.5"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "--nccl: NCCL version 2.18.5: the model knows" in err


def test_annotation_gives_the_release_and_must_agree_with_the_log(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_text("# netsim-validate: topo=dgx-h100 op=allreduce ranks=8 nccl_version=2.24\n"
                   "size_bytes,time_us\n1048576,40\n")
    assert measured_nccl_version(csv) == "2.24.0"
    quoted = tmp_path / "q.csv"
    quoted.write_text("# NCCL 2.28.7 (nccl-headers=22807 nccl-library=22807)\n"
                      "size_bytes,time_us\n1048576,40\n")
    assert measured_nccl_version(quoted) == "2.28.7"
    log = tmp_path / "ar.log"
    log.write_text("# netsim-validate: nccl_version=2.28.3\n" + LOG)
    with pytest.raises(InputError, match="nccl_version=2.28.3 but the file prints NCCL 2.26.2"):
        read_measured_run(log)
    csv.write_text("# netsim-validate: nccl_version=1.0\nsize_bytes,time_us\n1048576,40\n")
    with pytest.raises(InputError, match=r"m.csv:1: netsim-validate: NCCL version 1.0.0"):
        read_measured_run(csv)


def _times(out: str) -> list[float]:
    return [r["time_s"] for r in json.loads(out)["records"]]


def test_nccl_settings_give_one_time_through_coll_compare_and_a_scenario(tmp_path, capsys):
    """--nccl and --gpus-per-thread (coll, compare) and a scenario job's nccl: and
    gpus_per_thread: are one reader's settings (netsim.algorithms.nccl_options): the same
    settings give the same times everywhere, and they change the run (ring where the
    tuner takes tree or NVLS tree; -g 8 raises the host floor)."""
    sizes = ["--sizes", "512KiB:1MiB", "--format", "json"]
    topo = "dgx-h100-cluster:nodes=2"
    flags = ["--nccl", "ALGO=ring,VERSION=2.26.2", "--gpus-per-thread", "8"]
    _, plain, _ = run_main(["coll", "allreduce", "--topo", topo, *sizes], capsys)
    code, coll, err = run_main(["coll", "allreduce", "--topo", topo, *sizes, *flags], capsys)
    assert code == 0, err
    code, compare, err = run_main(["compare", "allreduce", "--topo", topo, "--topo", "mesh:4x4",
                                   *sizes, *flags], capsys)
    assert code == 0, err
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"name: s\ntopology: {topo}\njobs:\n  - kind: collective\n"
                        "    op: allreduce\n    sizes: [512KiB, 1MiB]\n    gpus_per_thread: 8\n"
                        "    nccl: {ALGO: Ring, VERSION: 2.26.2}\n")
    code, ran, err = run_main(["run", str(scenario), "--format", "json"], capsys)
    assert code == 0, err
    want = _times(coll)
    assert want != _times(plain)
    records = json.loads(compare)["records"]
    assert [r["time_s"] for r in records if r["topology"] == topo] == want
    # the other machine of the comparison runs as it would alone
    _, mesh, _ = run_main(["compare", "allreduce", "--topo", "mesh:4x4", *sizes], capsys)
    assert [r["time_s"] for r in records if r["topology"] == "mesh:4x4"] == _times(mesh)
    assert _times(ran) == want
    assert {r["nccl_version"] for r in json.loads(ran)["records"]} == {"2.26.2"}


@pytest.mark.parametrize("args, message", [
    (["compare", "allreduce", "--topo", "mesh:4x4", "--nccl", "ALGO=ring"],
     "no machine here runs it"),
    (["compare", "allreduce", "--topo", "dgx-h100", "--nccl", "ALGO=bad"],
     "--nccl: ALGO='bad' is not one of nvls, nvls_tree, ring, tree"),
    # read with the settings, before any machine runs (not a note on one row)
    (["compare", "allreduce", "--topo", "dgx-h100", "--topo", "mesh:4x4", "--nccl",
      "VERSION=3.0"], "--nccl: NCCL version 3.0.0: the model knows the tuner of releases"),
    (["coll", "allreduce", "--topo", "dgx-h100", "--nccl", "MIN_NCHANNELS=4"],
     "'MIN_NCHANNELS' is not modelled (ALGO, PROTO, VERSION)"),
])
def test_nccl_settings_that_do_not_apply_are_one_line(args, message, capsys):
    code, _, err = run_main(args, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err


@pytest.mark.parametrize("job, message", [
    ("    nccl: {ALGO: nope}\n", "jobs[0].nccl: ALGO='nope' is not one of nvls, nvls_tree, ring, tree"),
    ("    nccl: {FOO: 1}\n", "jobs[0].nccl: 'FOO' is not modelled"),
    ("    nccl: {VERSION: 2.18}\n", "jobs[0].nccl: NCCL version 2.18.0: the model knows"),
    ("    gpus_per_thread: 8\n    algorithm: ring\n",
     "gpus_per_thread and nccl apply to NCCL's model"),
])
def test_a_scenario_job_names_its_bad_nccl_setting(job, message, tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntopology: dgx-h100\njobs:\n  - kind: collective\n"
                        "    op: allreduce\n    size: 1MiB\n" + job)
    code, _, err = run_main(["run", str(scenario)], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


def test_a_one_rank_run_records_its_release_too(capsys):
    """One rank is NCCL's copy, the same in every release, but its record names the
    release as every other row of a sweep does (and a release the model does not know is
    refused there too)."""
    base = ["coll", "allreduce", "--topo", "dgx-h100", "--ranks", "1", "--format", "json"]
    code, out, err = run_main([*base, "--nccl", "VERSION=2.26.2"], capsys)
    record = json.loads(out)["records"][0]
    assert code == 0 and (record["nccl"], record["nccl_version"]) == ("one-rank copy", "2.26.2")
    code, _, err = run_main([*base, "--nccl", "VERSION=2.10.0"], capsys)
    assert code == 2 and "NCCL version 2.10.0" in err
