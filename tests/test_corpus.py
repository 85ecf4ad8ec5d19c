"""The bad-input corpus (tests/corpus/cases.yaml) through the real command line.

Every case must fail with exactly one line on stderr, ``netsim: error: ...``, that names
the file, the field or line and the value; the expected exit code (2 for input and usage
errors); no traceback; and no output file although ``-o FILE`` was given. Cases marked
``xfail`` are bad messages in modules the corpus does not own (see their reasons).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from netsim.cli import cli

from cli_helpers import run_main

CORPUS = Path(__file__).parent / "corpus"
CASES = yaml.safe_load((CORPUS / "cases.yaml").read_text())
MEMORY_LIMIT = 3 * 2**30        # bytes of address space for the child-process cases


def _available(command: str, option: str) -> bool:
    found = cli.get_command(None, command)
    return found is not None and any(option in p.opts for p in found.params)


def _params():
    for case in CASES:
        marks = [pytest.mark.xfail(strict=True, reason=case["xfail"])] if "xfail" in case else []
        if "requires" in case and not _available(*case["requires"]):
            marks.append(pytest.mark.skip(reason=f"no `netsim {' '.join(case['requires'])}` "
                                                 f"yet"))
        yield pytest.param(case, id=case["id"], marks=marks)


def _in_process(argv: list[str], capsys) -> tuple[int, str]:
    """(exit code, stderr) of ``netsim ARGV`` run by the console script's main()."""
    code, _, err = run_main(argv, capsys)
    return code, err


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def _child(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr) of ``python -m netsim ARGV`` under a memory and a time limit."""
    done = subprocess.run([sys.executable, "-m", "netsim", *argv], capture_output=True,
                          text=True, timeout=120, preexec_fn=_limit_memory,
                          env={**os.environ, "COLUMNS": "120"})
    return done.returncode, done.stderr


def test_the_corpus_is_big_and_covers_every_loader():
    commands = {case["argv"][0] for case in CASES}
    assert len(CASES) >= 50
    assert {"run", "flows", "topo", "coll", "place"} <= commands
    folders = {case["id"].split("/")[0] for case in CASES}
    assert {"scenario", "schedule", "flows", "topology", "spec", "measured",
            "placement"} <= folders
    for case in CASES:
        for arg in case["argv"]:
            if "{corpus}" in arg and "no-such" not in arg:
                assert Path(arg.replace("{corpus}", str(CORPUS))).exists(), arg


@pytest.mark.parametrize("case", list(_params()))
def test_bad_input_fails_with_one_clear_line(case, tmp_path, capsys):
    out = tmp_path / "out.txt"
    argv = [a.replace("{corpus}", str(CORPUS)) for a in case["argv"]] + ["-o", str(out)]
    code, stderr = _child(argv) if case.get("subprocess") else _in_process(argv, capsys)
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("netsim: error: "), stderr
    assert len(lines[0]) < 1000, "error messages quote a shortened value"
    missing = [text for text in case["expect"] if text not in lines[0]]
    assert not missing, f"{missing} not in {lines[0]!r}"
    assert code == case["exit"], stderr
    assert not out.exists()


def test_edge_inputs_that_are_valid_still_run(tmp_path, capsys):
    """Neighbours of the corpus that must work: a huge shift offset (taken modulo the
    ranks), YAML's 1e9 as a string, grid node names with underscores, zero-byte traffic."""
    path = tmp_path / "edge.yaml"
    path.write_text("name: edge\ntopology: mesh:4x4\njobs:\n"
                    "  - {kind: traffic, pattern: shift, offset: 99999999999999999999999}\n"
                    "  - {kind: traffic, pattern: alltoall, size: 1e3, ranks: 4}\n"
                    "  - {kind: traffic, pattern: shift, size: 0, faults: [{node: 3_3, "
                    "factor: 0.5}]}\n")
    code, stderr = _in_process(["run", str(path), "--format", "json"], capsys)
    assert code == 0 and stderr == ""
    code, _ = _in_process(["flows", str(CORPUS / "flows" / "minimal-ok.json")], capsys)
    assert code == 0


@pytest.mark.parametrize("argv", [
    ["flows", str(CORPUS / "flows" / "bom-ok.json")],
    ["coll", "allreduce", "--topo", "mesh:4x4", "--size", "1MiB", "--measured",
     str(CORPUS / "measured" / "bom-ok.csv")],
    ["place", "--topo", "mesh:4x4", "--tp", "4", "--dp", "4", "--tp-bytes", "1MiB",
     "--strategies", "explicit", "--map", str(CORPUS / "placement" / "bom-ok.csv")],
])
def test_a_byte_order_mark_is_accepted(argv, capsys):
    """Spreadsheets save CSV (and some editors JSON) with a UTF-8 byte-order mark."""
    code, stderr = _in_process(argv, capsys)
    assert code == 0, stderr
