"""Outputs: every output checked before any is written, nothing left behind on error,
devices, FIFOs and symbolic links never replaced by a regular file, I/O errors one line.

Device nodes are made in tmp_path (as root) so that no real /dev node is ever at risk.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cli_helpers import run_main

SMALL = ["coll", "allreduce", "--topo", "mesh:2x2", "--size", "1KiB", "--format", "json"]


_run = run_main


def _one_line_error(code, err, *texts):
    assert code != 0 and "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error: "), err
    for text in texts:
        assert text in lines[0], err


def _device(path: Path, minor: int) -> Path:
    """A character device (1, minor) at ``path``: 3 is null, 7 is full."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("making a device node needs root")
    return path


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
def test_output_onto_a_device_writes_through_and_keeps_the_device(tmp_path, capsys, overwrite):
    null = _device(tmp_path / "null", 3)
    code, _, err = _run(SMALL + ["-o", str(null), *overwrite], capsys)
    assert code == 0, err
    assert stat.S_ISCHR(null.stat().st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["null"]      # no temporary file left


def test_a_full_device_is_one_line_and_stays_a_device(tmp_path, capsys):
    full = _device(tmp_path / "full", 7)
    code, _, err = _run(SMALL + ["-o", str(full), "--overwrite"], capsys)
    _one_line_error(code, err, str(full), "No space left on device")
    assert stat.S_ISCHR(full.stat().st_mode)


def test_output_onto_a_fifo_writes_through(tmp_path, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    code, _, err = _run(SMALL + ["-o", str(fifo)], capsys)
    reader.join(timeout=30)
    assert code == 0, err
    assert b'"busbw_GBps"' in received[0]
    assert stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_symlink_is_written_through_not_replaced(tmp_path, capsys):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    code, _, err = _run(SMALL + ["-o", str(link)], capsys)
    _one_line_error(code, err, "already exists")
    assert target.read_text() == "old"
    code, _, err = _run(SMALL + ["-o", str(link), "--overwrite"], capsys)
    assert code == 0, err
    assert link.is_symlink() and '"busbw_GBps"' in target.read_text()


def test_stdout_on_a_full_disk_is_one_line():
    with open("/dev/full", "w") as full:      # only written to, through the redirection
        done = subprocess.run([sys.executable, "-m", "netsim", "topo", "mesh:2x2"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        "netsim: error: standard output: No space left on device"], done.stderr


def test_missing_folders_are_made_when_the_output_is_written(tmp_path, capsys):
    target = tmp_path / "no" / "such" / "out.json"
    code, _, err = _run(SMALL + ["-o", str(target)], capsys)
    assert code == 0, err
    assert target.is_file()


def test_a_refused_run_makes_no_folder(tmp_path, capsys):
    code, _, err = _run(["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "no-such",
                         "--size", "1KiB", "-o", str(tmp_path / "new" / "out.json")], capsys)
    assert code == 2 and not (tmp_path / "new").exists()


def test_a_file_where_a_folder_must_be_made_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("mine")
    code, _, err = _run(SMALL + ["-o", str(tmp_path / "file" / "out.json")], capsys)
    _one_line_error(code, err, "it is a file")
    assert code == 2 and (tmp_path / "file").read_text() == "mine"


def test_a_heatmap_series_is_checked_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "hm-2KiB.png").write_text("mine")
    out = tmp_path / "out.json"
    code, _, err = _run(["coll", "allreduce", "--topo", "mesh:2x2", "--sizes", "1KiB:2KiB",
                         "--heatmap", str(tmp_path / "hm.png"), "--save-result",
                         str(tmp_path / "r.json"), "-o", str(out)], capsys)
    _one_line_error(code, err, "hm-2KiB.png", "already exists")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hm-2KiB.png"]
    assert (tmp_path / "hm-2KiB.png").read_text() == "mine"


def test_two_outputs_on_one_file_are_refused(tmp_path, capsys):
    same = tmp_path / "same.json"
    code, _, err = _run(SMALL + ["-o", str(same), "--save-result", str(same)], capsys)
    _one_line_error(code, err, "written twice")
    assert not same.exists()


def test_run_checks_its_heatmap_series_and_report(tmp_path, capsys):
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\ntopology: mesh:2x2\njobs:\n"
                        "  - {kind: collective, op: allreduce, size: 1KiB}\n"
                        "  - {kind: collective, op: allgather, size: 1KiB}\n")
    (tmp_path / "hm-2.png").write_text("mine")
    code, _, err = _run(["run", str(scenario), "--heatmap", str(tmp_path / "hm.png"),
                         "--report", str(tmp_path / "r.html"), "-o",
                         str(tmp_path / "out.txt")], capsys)
    _one_line_error(code, err, "hm-2.png", "already exists")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hm-2.png", "s.yaml"]
    code, _, err = _run(["run", str(scenario), "--report", str(tmp_path / "x.html"),
                         "-o", str(tmp_path / "x.html")], capsys)
    _one_line_error(code, err, "written twice")


def test_place_json_is_byte_identical_across_runs(capsys):
    argv = ["place", "--topo", "mesh:2x4", "--tp", "4", "--dp", "2", "--tp-bytes", "1MB",
            "--budget", "3", "--format", "json"]
    first, second = _run(argv, capsys), _run(argv, capsys)
    assert first[0] == 0 and first[1] == second[1]
    assert '"seconds"' not in first[1]
