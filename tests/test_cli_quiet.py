"""``netsim -q`` drops the "wrote FILE" lines; without it every written file is named."""

from __future__ import annotations

import pathlib
import re

import pytest

from cli_helpers import run_main

CASES = {
    "coll -o and --plot": lambda d: ["coll", "allreduce", "--topo", "ring:4", "--sizes",
                                     "1KiB:4KiB", "--format", "csv", "-o", str(d / "a.csv"),
                                     "--plot", str(d / "a.svg"), "--save-result",
                                     str(d / "r.json")],
    "compare --plot": lambda d: ["compare", "allgather", "--topo", "ring:4", "--topo",
                                 "mesh:2x2", "--plot", str(d / "c.svg"), "-o",
                                 str(d / "c.txt")],
}


@pytest.mark.parametrize("case", CASES)
def test_quiet_drops_the_wrote_lines(case, tmp_path, capsys):
    loud, quiet = tmp_path / "loud", tmp_path / "quiet"
    loud.mkdir(), quiet.mkdir()
    code, _, err = run_main(CASES[case](loud), capsys)
    assert code == 0, err
    written = sorted(p.name for p in loud.iterdir())
    assert sorted(pathlib.Path(line.split()[1]).name
                  for line in err.splitlines() if line.startswith("wrote ")) == written
    code, _, err = run_main(["-q", *CASES[case](quiet)], capsys)
    assert code == 0 and err == ""
    assert sorted(p.name for p in quiet.iterdir()) == written     # -q still writes them


def test_heatmap_is_quiet_too(tmp_path, capsys):
    result = tmp_path / "r.json"
    code, _, err = run_main(["coll", "alltoall", "--topo", "mesh:2x2", "--size", "1MiB",
                             "--save-result", str(result), "-o", str(tmp_path / "t.txt")],
                            capsys)
    assert code == 0, err
    code, _, err = run_main(["-q", "heatmap", str(result), "-o", str(tmp_path / "h.png")],
                            capsys)
    assert code == 0 and err == "" and (tmp_path / "h.png").stat().st_size > 0


def test_every_command_names_files_through_one_helper():
    cli = pathlib.Path(__file__).parent.parent / "netsim" / "cli"
    direct = [f"{path.name}:{n}" for path in sorted(cli.glob("*.py"))
              for n, line in enumerate(path.read_text().splitlines(), 1)
              if re.search(r"echo\(f?[\"']wrote ", line) and "def wrote" not in line]
    assert len(direct) == 1 and direct[0].startswith("options.py:")     # inside wrote()
