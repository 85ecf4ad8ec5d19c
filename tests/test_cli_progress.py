"""Progress bars: drawn on a terminal only, one tick per unit of known work."""

from __future__ import annotations

import io

from cli_helpers import run_main
from netsim.cli.options import ProgressBar


def test_nothing_is_printed_without_a_terminal(capsys):
    code, out, err = run_main(["coll", "allreduce", "--topo", "ring:4", "--sizes", "1KiB:8KiB",
                               "--format", "csv"], capsys)
    assert code == 0 and err == ""
    assert len(out.splitlines()) == 1 + 4              # header and the four sizes


def test_the_bar_counts_ticks_after_each_item():
    from rich.console import Console

    screen = io.StringIO()
    bar = ProgressBar(4, "allreduce", console=Console(file=screen, force_terminal=True,
                                                      width=100))
    assert bar.drawn
    seen = []
    with bar:
        for item in bar.each(range(4)):
            seen.append((item, bar.done))                # the tick comes after the work
            bar.reporter()(10 * item, 1e-6)
    assert seen == [(0, 0), (1, 1), (2, 2), (3, 3)] and bar.done == 4
    text = screen.getvalue()
    assert "allreduce" in text and "4/4" in text and "30 events" in text


def test_no_bar_for_one_step_or_without_a_terminal():
    assert not ProgressBar(1, "x", console=io.StringIO()).drawn   # one size: no bar
    bar = ProgressBar(5, "x")                                     # pytest's stderr: no tty
    assert not bar.drawn and bar.reporter() is None
    with bar:
        bar.advance(2)
    assert bar.done == 2


def test_the_placement_search_reports_each_step_of_its_budget():
    # run_placement_study(progress=) is called once per search step, up to the budget.
    from netsim.run import PlacementStudy, run_placement_study

    study = PlacementStudy(topology="mesh:2x4,bw=10GB/s", layout={"tp": 4, "dp": 2},
                           bytes={"tp": "4MB"}, strategies="row_major,search", budget=5)
    calls = []
    run_placement_study(study, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(k, 5) for k in range(1, 6)]
