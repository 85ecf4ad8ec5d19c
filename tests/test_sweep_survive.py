"""Sweeps that survive their workers, and workers that do not survive their sweep.

``kill -9`` of one local worker (or the kernel's OOM killer) used to abort the sweep with a
BrokenProcessPool traceback: now the points under way run again once in a new pool and
the sweep finishes. ``kill -9`` of the main process leaves no worker running: each checks
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
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:           # pragma: no cover
            proc.kill()
            proc.wait()
    assert not _gone(family, within=10.0)
