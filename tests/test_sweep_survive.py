"""Sweeps that survive their workers, and workers that do not survive their sweep.

``kill -9`` of one local worker (or the kernel's OOM killer) does not abort the sweep with a
BrokenProcessPool traceback: the points under way run again once in a new pool and the
sweep finishes. ``kill -9`` of the main process leaves no worker running: each checks
every half second that the main process is still there.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from test_signals import SWEEP, _descendants, _gone

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(),
                                reason="reads process trees from /proc")


def _start(folder: Path):
    (folder / "sweep.yaml").write_text(SWEEP)
    return subprocess.Popen([sys.executable, "-m", "netsim", "sweep", "sweep.yaml", "--out",
                             "out", "--workers", "2", "--format", "json"], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _workers(pid: int, count: int = 2, within: float = 60.0) -> list[int]:
    """The pool's workers: the grandchildren (children of the fork server)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        children = set(map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split()))
        workers = sorted(_descendants(pid) - children)
        if len(workers) >= count:
            return workers
        time.sleep(0.02)
    raise AssertionError("the pool's workers never started")


@pytest.mark.slow
def test_a_killed_worker_is_replaced_and_its_point_run_again(tmp_path):
    proc = _start(tmp_path)
    try:
        victim = _workers(proc.pid)[0]
        time.sleep(0.5)                   # inside its first point
        subprocess.run(["kill", "-9", str(victim)], check=True)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:           # pragma: no cover - only when an assert failed
            proc.kill()
            proc.wait()
    err = err.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "its worker died; running it again" in err
    table = json.loads(out)
    assert (table["points"], table["failed"]) == (6, 0)
    stored = [json.loads(p.read_text()) for p in (tmp_path / "out" / "points").glob("*.json")]
    assert len(stored) == 6 and all("records" in s for s in stored)


def test_killing_the_main_process_leaves_no_worker(tmp_path):
    proc = _start(tmp_path)
    try:
        _workers(proc.pid)
        family = _descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        # not reaped yet, as when its parent is busy: the workers must not wait for that
        assert not _gone(family - {proc.pid}, within=10.0)
    finally:
        proc.kill()
        proc.wait()


# --- Point keys count the content of the files a point reads -------------------------------

def test_an_edited_topology_file_is_computed_again_and_an_unchanged_one_reused(tmp_path):
    from netsim.run import load_sweep, run_sweep_points

    (tmp_path / "machine.yaml").write_text('name: m\ngenerator: "ring:4,bw=1GB/s"\n')
    (tmp_path / "s.yaml").write_text(
        "name: s\njobs:\n  - kind: collective\n    op: allreduce\n    topology: machine.yaml\n"
        "    algorithm: ring\n    size: 1MB\nsweep:\n  grid:\n    jobs[0].size: [1MB, 2MB]\n")
    out = tmp_path / "out"
    first = run_sweep_points(load_sweep(tmp_path / "s.yaml"), out)
    again = run_sweep_points(load_sweep(tmp_path / "s.yaml"), out)
    assert (again.computed, again.reused) == (0, 2) and again.rows == first.rows
    (tmp_path / "machine.yaml").write_text('name: m\ngenerator: "ring:4,bw=2GB/s"\n')
    edited = run_sweep_points(load_sweep(tmp_path / "s.yaml"), out)
    assert (edited.computed, edited.reused) == (2, 0)
    # ring all-reduce is bandwidth-bound here: twice the bandwidth, half the time
    for old, new in zip(first.rows, edited.rows):
        assert new["time_s"] == pytest.approx(old["time_s"] / 2, rel=1e-3)


def test_files_named_by_a_named_file_count_too(tmp_path):
    from netsim.run.sweep.points import file_digests

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.json").write_text("{}")
    (tmp_path / "outer.yaml").write_text("generator: sub/inner.json\n")
    doc = {"jobs": [{"topology": "outer.yaml", "algorithm": "ring"}]}
    digests = file_digests(doc, tmp_path)
    assert list(digests) == ["outer.yaml", "outer.yaml > sub/inner.json"]
    (tmp_path / "sub" / "inner.json").write_text("{ }")
    assert file_digests(doc, tmp_path)["outer.yaml > sub/inner.json"] != \
        digests["outer.yaml > sub/inner.json"]
