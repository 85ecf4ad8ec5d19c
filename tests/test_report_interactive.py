"""The interactive report's figures: what each frame shows, one colour scale, the page."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("plotly", reason="the interactive report needs Plotly (netsim[report])")

from netsim.cli import main  # noqa: E402
from netsim.engine import simulate  # noqa: E402
from netsim.report.interactive import (COLOUR_BINS, busiest_links_figure,  # noqa: E402
                                       network_figure, write_interactive_report)
from netsim.report.layout import link_geometry  # noqa: E402
from netsim.report.windows import link_windows  # noqa: E402
from netsim.schedule.traffic import all_to_all  # noqa: E402
from netsim.topology import parse_topology  # noqa: E402


@pytest.fixture(scope="module")
def run():
    topo = parse_topology("torus:3x3,bw=10GB/s,lat=1us")
    return topo, simulate(topo, all_to_all(9, 1e6), record_timeline=True)


def test_one_frame_per_window_on_one_scale(run):
    topo, result = run
    fig = network_figure(topo, result, windows=6, title="a2a")
    assert len(fig.frames) == 6 and len(fig.layout.sliders[0].steps) == 6
    links = [t for t in fig.data if t.name == "links"][0]
    assert links.marker.cmin == 0 and links.marker.cmax == pytest.approx(1.0)
    util = link_windows(result, 6).utilization
    for k, frame in enumerate(fig.frames):
        np.testing.assert_allclose(frame.data[-1].marker.color, util[k], atol=1e-4)
        assert f"window {k + 1}/6" in frame.layout.title.text
        # every link drawn once per frame, in the bin of its colour: each of its pieces
        # (a wrap-around link has two) ends with a None
        drawn = sum(sum(x is None for x in trace.x) for trace in frame.data[:COLOUR_BINS])
        assert drawn == sum(len(pieces) for pieces in link_geometry(topo).paths)


def test_hover_text_names_the_link_and_its_numbers(run):
    topo, result = run
    fig = network_figure(topo, result, windows=4)
    text = fig.frames[2].data[-1].text
    assert len(text) == topo.num_links
    assert topo.link_names[0] in text[0] and "window 3/4" in text[0]
    assert "utilisation" in text[0] and "flows at once" in text[0]
    assert "ops in flight" in text[0]


def test_busiest_links_and_the_page(run, tmp_path):
    topo, result = run
    fig = busiest_links_figure(topo, result, windows=5, top=3)
    assert len(fig.data) == 3 and all(t.line.shape == "hv" for t in fig.data)
    yaml = tmp_path / "s.yaml"
    yaml.write_text("name: t\njobs:\n  - kind: collective\n    topology: ring:4\n"
                    "    op: allreduce\n    sizes: [1MiB, 4MiB]\n")
    main(["run", str(yaml), "--report", str(tmp_path / "r.html")])
    page = (tmp_path / "r.html").read_text()
    assert page.count("Plotly.newPlot") == 3        # busbw curve, network, busiest links
    assert page.count("<script type=\"text/javascript\">/**") <= 1   # plotly.js once
    assert "https://cdn" not in page.split("<body>")[1][:2000]


def test_the_report_needs_timelines(run, tmp_path):
    from netsim.errors import InputError

    import dataclasses

    topo, result = run
    with pytest.raises(InputError, match="kept no timeline"):
        network_figure(topo, dataclasses.replace(result, timeline=None))
    # a run without one (the packet model, a placement search) is drawn as a whole
    page = write_interactive_report(tmp_path / "r.html", _Outcome(topo, result, None))
    text = page.read_text()
    assert "Not over time: the run on torus-3x3 kept no timeline" in text
    assert "data:image/png;base64," in text and "Plotly.newPlot" not in text


class _Outcome:
    """A scenario outcome of one job whose run kept no timeline."""

    def __init__(self, topo, result, timeline):
        import dataclasses
        from types import SimpleNamespace

        result = dataclasses.replace(result, timeline=timeline)
        self.scenario = SimpleNamespace(name="t", description="")
        self.records = [{"job": "j"}]
        self.jobs = [SimpleNamespace(name="j", kind="traffic", records=self.records,
                                     results={"j": result}, topologies={"j": topo})]


def test_failed_links_from_the_window_they_failed_in():
    from netsim.run import parse_fault_option, recording_timelines, run_collective

    with recording_timelines():
        run = run_collective("allreduce", "mesh:4x4", "ring", "4MiB",
                             faults=[parse_fault_option("1_1<->1_2@40us", "fail")])
    fig = network_figure(run.machine, run.result, windows=4)
    failed = [len([x for x in frame.data[COLOUR_BINS].x if x is None])
              for frame in fig.frames]
    assert failed == [0, 2, 2, 2]                       # both directions, from window 2
    lid = run.machine.link_names.index("1_1->1_2")
    assert "failed at 40 us" in fig.frames[1].data[-1].text[lid]
    assert "failed" not in fig.frames[0].data[-1].text[lid]


def test_placement_jobs_are_drawn_over_time(tmp_path):
    """A placement job's kept result records its timeline in the report: its TP and DP
    phases are in the hover's ops in flight."""
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    page = tmp_path / "r.html"
    main(["run", str(root / "scenarios" / "placement-training-t3000.yaml"), "--report",
          str(page)])
    text = page.read_text()
    assert "Not over time" not in text and text.count("Plotly.newPlot") == 4
    assert "ops in flight (" in text
