"""The docs stay true to the code.

* Figures quoted next to commands are what the tool gives: docs/placement.md's section 8
  tables against the scenarios they name; a time or busbw that follows an inline
  `netsim coll ...`; the workload rows of docs/interop.md on the traces its own example
  writes. Limits and depths the pages quote are the code's constants.
* The files the pages cite exist, and the options they name with a command are options of
  that command.
* Docs, code and test comments say what the code is, not what it was.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from cli_helpers import run_main
from netsim.run.scenarios.scenario import load_scenario, run_scenario

ROOT = Path(__file__).resolve().parent.parent
THIS = Path(__file__).name
PAGE = (ROOT / "docs" / "placement.md").read_text()
SECTION = PAGE[PAGE.index("## 8. Measured"):]


def _steps(name: str) -> dict[str, dict[str, float]]:
    """job -> strategy -> step time (s) of ``scenarios/NAME``."""
    outcome = run_scenario(load_scenario(ROOT / "scenarios" / name))
    return {job.name: {r["strategy"]: r["step_s"] for r in job.records}
            for job in outcome.jobs}


def _seconds(text: str) -> float:
    value, unit = re.match(r"([0-9.]+) (ms|s)", text.strip()).groups()
    return float(value) * (1e-3 if unit == "ms" else 1.0)


def _table(after: str) -> list[list[str]]:
    """The rows (cells) of the first Markdown table after the text ``after``."""
    lines = SECTION[SECTION.index(after):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows[2:]                              # past the header and its rule


def test_the_decode_table_is_todays():
    steps = _steps("placement-llama70b-decode-galaxy.yaml")["llama70b-decode"]
    rows = _table("Llama-70B-like decode")
    assert {row[0].split()[0] for row in rows} == set(steps)
    for row in rows:
        quoted = _seconds(row[1])
        assert steps[row[0].split()[0]] == pytest.approx(quoted, rel=6e-4), row


def test_the_training_tables_are_todays():
    galaxy = _steps("placement-training-galaxy.yaml")
    rows = {row[0]: row for row in _table("Training, Llama-70B-like")}
    for job, label in (("train-70b-galaxy", "galaxy-wh"),
                       ("train-70b-dgx-h100-cluster", "4 x DGX H100 (rows = servers)")):
        for cell, strategy in zip(rows[label][1:], ("row_major", "column_major", "tiles",
                                                    "search")):
            assert galaxy[job][strategy] == pytest.approx(_seconds(cell), rel=2e-3), \
                (job, strategy)
    t3000 = _steps("placement-training-t3000.yaml")["train-8b-t3000"]
    sentence = SECTION[SECTION.index("Training an 8B model"):][:400]
    quoted = {name: _seconds(value) for name, value in
              re.findall(r"(row_major|tiles|snake) ([0-9.]+ m?s)", sentence)}
    assert set(quoted) == {"row_major", "tiles", "snake"}
    for name, value in quoted.items():
        assert t3000[name] == pytest.approx(value, rel=3e-3), name


PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: A repository path cited in a page (examples/ is left out: the pages also cite ASTRA-sim's
#: own examples/ files).
CITED = re.compile(r"(?<![\w./-])((?:netsim|benchmarks|tests|scenarios|topologies|collectives"
                   r"|docs)/[\w./-]*\w)(?![\w*{-])")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def _options() -> tuple[dict[str, set[str]], set[str]]:
    """Options of every netsim command, and the options of ``netsim`` itself."""
    import click

    from netsim.cli import cli

    ctx = click.Context(cli)
    commands = {name: {o for p in cli.get_command(ctx, name).params
                       for o in (*p.opts, *p.secondary_opts)}
                for name in cli.list_commands(ctx)}
    return commands, {o for p in cli.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}


def _quoted_times():
    """(page, command words, seconds, digits after the point, seconds per unit) of every
    inline `netsim coll ...` span that a time in ms or us follows in the same clause."""
    for page in PAGES:
        for span, after in re.findall(r"`(netsim coll [^`]+)`([^`]{0,70})", page.read_text()):
            time = re.match(r"[^.;:`]*?\(?\b([0-9]+)(?:\.([0-9]+))? ?(ms|us)\b", after)
            if time:
                whole, decimals, unit = time.groups()
                scale = 1e-3 if unit == "ms" else 1e-6
                yield (page.name, shlex.split(span)[1:],
                       float(f"{whole}.{decimals or 0}") * scale, len(decimals or ""), scale)


QUOTED_TIMES = list(_quoted_times())


def test_there_are_times_quoted_after_commands():
    assert len(QUOTED_TIMES) >= 3


@pytest.mark.parametrize("page,words,seconds,digits,scale", QUOTED_TIMES,
                         ids=[" ".join(q[1][:4]) for q in QUOTED_TIMES])
def test_a_time_quoted_after_a_command_is_what_it_gives(page, words, seconds, digits, scale,
                                                        capsys):
    """"`netsim coll ...` takes 14.32 ms": the command gives that time, to the digits
    quoted."""
    code, out, err = run_main([*words, "--format", "json"], capsys)
    assert code == 0, err
    (record,) = json.loads(out)["records"]
    assert record["time_s"] == pytest.approx(seconds, abs=0.5 * 10.0**-digits * scale), page


def _quoted_busbw():
    """(page, command words, {size in bytes: busbw GB/s}, digits) of every inline
    `netsim coll ...` span followed by "busbw X GB/s at SIZE (and Y GB/s at SIZE)"."""
    from netsim.units import parse_size

    for page in PAGES:
        for span, after in re.findall(r"`(netsim coll [^`]+)` gives\s+busbw ([^(`]*)",
                                      page.read_text()):
            pairs = re.findall(r"([0-9]+\.([0-9]+)) GB/s at ([0-9]+ ?[KMG]iB)", after)
            if pairs:
                yield (page.name, shlex.split(span)[1:],
                       {parse_size(size.replace(" ", "")): float(value)
                        for value, _, size in pairs}, min(len(d) for _, d, _ in pairs))


QUOTED_BUSBW = list(_quoted_busbw())


def test_there_are_busbws_quoted_after_commands():
    assert QUOTED_BUSBW


@pytest.mark.parametrize("page,words,busbw,digits", QUOTED_BUSBW,
                         ids=[" ".join(q[1][:4]) for q in QUOTED_BUSBW])
def test_a_busbw_quoted_after_a_command_is_what_it_gives(page, words, busbw, digits, capsys):
    code, out, err = run_main([*words, "--format", "json"], capsys)
    assert code == 0, err
    given = {r["size_bytes"]: r["busbw_GBps"] for r in json.loads(out)["records"]}
    for size, value in busbw.items():
        assert given[size] == pytest.approx(value, abs=0.5 * 10.0**-digits), (page, size)


def test_the_sanity_limits_the_architecture_quotes_are_the_codes():
    from netsim.schedule import MAX_SENDS
    from netsim.topology.spec import MAX_GRID_NODES, MAX_LINK_RATE
    from netsim.units import MAX_SIZE

    page = " ".join((ROOT / "docs" / "architecture.md").read_text().split())
    limits = page[page.index("Sanity limits refuse typos"):][:240]
    assert "sizes above 1 EiB" in limits and MAX_SIZE == 2**60
    assert "more than 2^31 - 1" in limits and MAX_SENDS == 2**31 - 1
    assert "grids above 2^20 chips" in limits and MAX_GRID_NODES == 2**20
    assert "links above 1 EB/s" in limits and MAX_LINK_RATE == 1e18


def test_the_pipelining_depth_the_pages_quote_is_the_codes():
    from netsim.algorithms.registry import default_chunks

    page = " ".join((ROOT / "docs" / "architecture.md").read_text().split())
    assert "sqrt(S / 256 KiB) chunks, 1 to 64" in page
    assert [default_chunks(s) for s in (1, 256 << 10, 257 << 10, 16 << 20, 1 << 30, 1 << 40)] \
        == [1, 1, 2, 8, 64, 64]


def test_the_files_the_pages_cite_exist():
    missing = [f"{page.name}: {path}" for page in PAGES
               for path in CITED.findall(page.read_text())
               if "..." not in path and not (ROOT / path).exists()]
    assert not missing, missing


def test_options_named_with_a_command_are_its_options():
    """Inline `netsim CMD ... --opt` spans, and sentences such as "`--chunks` ... in `coll`
    and `place`", name only options CMD has."""
    commands, common = _options()
    wrong = []
    for page in PAGES:
        text = page.read_text()
        for span in re.findall(r"`netsim (\w+)([^`\n]*)`", text):
            name, rest = span
            if name in commands:
                wrong += [f"{page.name}: netsim {name} {option}" for option in OPTION.findall(rest)
                          if option not in commands[name] | common]
        for option, where in re.findall(r"`(--[a-z][a-z0-9-]*)`[^`;.]*? in "
                                        r"((?:`\w+`(?:, | and | or )?)+)", text):
            wrong += [f"{page.name}: {option} in {name}" for name in re.findall(r"`(\w+)`", where)
                      if name in commands and option not in commands[name]]
    assert not wrong, wrong


#: Phrases that narrate the project's history instead of explaining the code (what it was,
#: how fast it used to be, which issue or release changed it). History is kept by git and
#: dated figures by benchmarks/RESULTS.md.
HISTORY = re.compile(
    r"for one release|\(issue \d+\)|\b[Ii]ssue \d+'s|the issue's|\bused to (?:be|spin|loop|"
    r"abort|drop|take|run)\b|\(was [^)]*\)|\bwas [0-9.,]+ ?(?:s|ms|us|%|x|GB/s)(?!\w)|"
    r"[0-9.]+ ?m?s before\b|[0-9.]+ ?(?:s|ms|GB|MB|%) before\)|before runs were|"
    r"earlier version|\bpreviously\b|\bformerly\b|"
    r"\b(?:is|are) deprecated\b|deprecated (?:spelling|option|alias|name)|"
    r"\bnow (?:takes|runs|prints|includes|reduces|launches|rates|does)\b")


def test_docs_and_comments_speak_in_the_present():
    files = [*PAGES, ROOT / "pyproject.toml", *sorted((ROOT / "netsim").rglob("*.py")),
             *(path for path in sorted((ROOT / "tests").glob("*.py")) if path.name != THIS)]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}" for path in files
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if HISTORY.search(line)]
    assert not found, "\n".join(found)


def test_the_workload_runs_of_the_interop_page_give_its_table(tmp_path, monkeypatch, capsys):
    """docs/interop.md writes Chakra traces with its Python example and shows what
    `netsim run --workload` gives on them: each shown row's exposed communication and total
    are what the command gives, to the digits shown."""
    pytest.importorskip("chakra.src.generator.generator")
    page = (ROOT / "docs" / "interop.md").read_text()
    example = next(block for block in re.findall(r"```python\n(.*?)```", page, re.S)
                   if "step.{rank}.et" in block)
    monkeypatch.chdir(tmp_path)
    exec(compile(example, "docs/interop.md", "exec"), {})
    shown = re.findall(r"^\$ (netsim run --workload [^#\n]*?)\s*(?:#.*)?\n(?:┃.*\n)?"
                       r"│ step\.%d\.et │\s+0 │[^│]+│[^│]+│\s*([0-9.]+ (?:ms|us))\s*│"
                       r"\s*([0-9.]+ (?:ms|us))\s*│", page, re.M)
    assert len(shown) >= 3
    for command, exposed, total in shown:
        code, out, err = run_main([*shlex.split(command)[1:], "--format", "json"], capsys)
        assert code == 0, err
        record = json.loads(out)["records"][0]
        for key, quoted in (("exposed_comm_s", exposed), ("total_s", total)):
            number, unit = quoted.split()
            scale = 1e-3 if unit == "ms" else 1e-6
            digits = len(number.partition(".")[2])
            assert record[key] == pytest.approx(float(number) * scale,
                                                abs=0.5 * 10.0**-digits * scale), (command, key)
