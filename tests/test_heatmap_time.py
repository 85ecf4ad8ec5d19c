"""Link loads over time: windows of a recorded timeline, --at and --windows heatmaps."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from netsim.cli import main
from netsim.engine import simulate
from netsim.errors import InputError
from netsim.report.heatmap import draw_time_heatmaps, draw_window_heatmaps
from netsim.report.windows import link_windows, utilization_at, window_at
from netsim.run import recording_timelines, run_collective
from netsim.schedule.traffic import all_to_all, shift
from netsim.topology import parse_topology, ring


@pytest.fixture(scope="module")
def mesh_run():
    topo = parse_topology("mesh:3x3,bw=10GB/s,lat=1us")
    return topo, simulate(topo, all_to_all(9, 1e6), record_timeline=True)


@pytest.mark.parametrize("count", [1, 2, 7, 50])
def test_windows_add_up_to_the_link_bytes(mesh_run, count):
    topo, run = mesh_run
    w = link_windows(run, count)
    assert w.bytes.shape == (count, topo.num_links)
    np.testing.assert_allclose(w.bytes.sum(axis=0), run.link_bytes, rtol=1e-12, atol=1e-6)
    # no window carries more than the link's bandwidth for the window's length
    assert (w.utilization <= 1 + 1e-9).all() and (w.bytes >= -1e-9).all()
    assert w.edges[0] == 0 and w.edges[-1] == pytest.approx(run.makespan)


def test_a_lone_flow_fills_its_windows():
    # 1 MB at 1 GB/s after 1 us of latency: idle in [0, 1 us), then 1.0 until 1.001 ms
    run = simulate(ring(4, bandwidth=1e9, latency=1e-6), shift(4, 1e6), record_timeline=True)
    assert run.makespan == pytest.approx(1.001e-3)
    w = link_windows(run, 143)               # 7 us windows: the first idle for 1 us of 7
    assert w.utilization[0, 0] == pytest.approx(6 / 7, rel=1e-9)
    np.testing.assert_allclose(w.utilization[1:, 0], 1.0, rtol=1e-6)
    assert int((w.bytes.sum(axis=0) > 0).sum()) == 4       # one way round the ring only
    assert utilization_at(run, 0.5e-6)[0] == 0.0 and utilization_at(run, 5e-4)[0] == 1.0
    assert window_at(w, 0.0) == 0 and window_at(w, run.makespan) == 142


def test_a_timeline_of_part_of_a_run_is_refused(mesh_run):
    _, run = mesh_run
    half = dataclasses.replace(run, timeline=run.timeline[: len(run.timeline) // 2])
    with pytest.raises(InputError, match="does not add up"):
        link_windows(half, 4)
    with pytest.raises(InputError, match="kept no timeline"):
        link_windows(dataclasses.replace(run, timeline=None), 4)
    with pytest.raises(InputError, match="outside the run"):
        utilization_at(run, 2 * run.makespan)


@pytest.mark.parametrize("topo", ["ring:8", "torus:4x4"])
def test_recorded_runs_keep_every_link_and_the_same_time(topo):
    """Ring runs simulate one send per block without a timeline; with one they simulate
    every op: the same makespan, and a timeline that adds up to the link bytes."""
    plain = run_collective("allreduce", topo, "ring", "4MiB")
    with recording_timelines():
        timed = run_collective("allreduce", topo, "ring", "4MiB")
    assert plain.result.timeline is None and timed.result.timeline is not None
    assert timed.time_s == pytest.approx(plain.time_s, rel=1e-12)
    w = link_windows(timed.result, 5)
    np.testing.assert_allclose(w.bytes.sum(axis=0), plain.result.link_bytes, rtol=1e-9)


def test_small_multiples_one_panel_per_window_on_one_scale(mesh_run):
    topo, run = mesh_run
    w = link_windows(run, 3)
    fig = draw_window_heatmaps(topo, w)
    panels, bars = fig.axes[:3], fig.axes[3:]
    assert len(bars) == 1                          # one colour bar: one scale for all
    titles = [ax.get_title() for ax in panels]
    assert [t.split(":")[0] for t in titles] == [f"window {k}/3" for k in range(1, 4)]
    assert titles[-1].endswith(f"-{run.makespan * 1e6:.3g} us")
    assert bars[0].get_ylim() == pytest.approx((0.0, 1.0))
    # one scale: equal utilisations get equal colours, in any panel, and a panel whose
    # largest value is 0.4 is not drawn as full (a shift on a ring: 0.25 ms of latency,
    # then 1 ms at full rate; the other direction idle throughout)
    topo = ring(4, bandwidth=1e9, latency=0.25e-3)
    w = link_windows(simulate(topo, shift(4, 1e6), record_timeline=True), 3)
    assert w.utilization[:, 0] == pytest.approx([0.4, 1.0, 1.0])
    fig = draw_window_heatmaps(topo, w)
    colours = [_link_colours(ax) for ax in fig.axes[:3]]
    util = w.utilization
    seen: dict[float, set] = {}
    panels_of: dict[float, set] = {}
    for k in range(3):
        for i, name in enumerate(topo.link_names):
            seen.setdefault(round(float(util[k, i]), 9), set()).add(colours[k][name])
            panels_of.setdefault(round(float(util[k, i]), 9), set()).add(k)
    assert all(len(c) == 1 for c in seen.values())
    assert any(len(ks) > 1 for ks in panels_of.values())     # a value in several panels
    name = topo.link_names[0]
    assert colours[0][name] != colours[1][name] == colours[2][name]


def _link_colours(ax) -> dict[str, tuple]:
    """Link name -> edge colour of its arrow (arrows carry the link's name as gid)."""
    out = {}
    for patch in ax.patches:
        if patch.get_gid():
            out[patch.get_gid()] = tuple(np.round(patch.get_edgecolor(), 6))
    return out


def test_at_an_instant_and_in_a_window(mesh_run, tmp_path):
    topo, run = mesh_run
    at = run.makespan / 2
    drawn = draw_time_heatmaps(topo, run, tmp_path / "at.png", at=at, title="a2a")
    np.testing.assert_allclose(drawn.values, utilization_at(run, at))
    fig = draw_time_heatmaps(topo, run, at=at, windows=4)
    assert "in window 3/4" in fig.axes[0].get_title()
    w = link_windows(run, 4)
    drawn = draw_time_heatmaps(topo, run, tmp_path / "w.png", at=at, windows=4)
    np.testing.assert_allclose(drawn.values, w.utilization[window_at(w, at)])


def _fails(capsys, *args) -> str:
    with pytest.raises(SystemExit) as stop:
        main(["coll", "allreduce", "--topo", "ring:4", "--size", "1MiB", *map(str, args)])
    assert stop.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("netsim: error: ")
    return lines[0]


def test_cli_windows_and_at(tmp_path, capsys):
    out = tmp_path / "x.png"
    main(["coll", "allreduce", "--topo", "ring:4", "--size", "1MiB", "--windows", "3",
          "--heatmap", str(out)])
    assert out.read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    assert "outside the run" in _fails(capsys, "--at", "1s", "--heatmap", tmp_path / "y.png")
    assert "give --heatmap FILE" in _fails(capsys, "--windows", "3")
    assert "--at" in _fails(capsys, "--at", "soon", "--heatmap", tmp_path / "z.png")
    assert not (tmp_path / "y.png").exists() and not (tmp_path / "z.png").exists()


def test_run_windows_per_job(tmp_path, capsys):
    scenario = tmp_path / "two.yaml"
    scenario.write_text("name: two\ntopology: torus:3x3\njobs:\n"
                        "  - {kind: traffic, pattern: shift, size: 1MiB}\n"
                        "  - {kind: collective, op: allreduce, algorithm: ring, size: 1MiB}\n")
    main(["run", str(scenario), "--windows", "2", "--heatmap", str(tmp_path / "h.png")])
    assert (tmp_path / "h-1.png").exists() and (tmp_path / "h-2.png").exists()
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["run", str(scenario), "--at", "1us"])
    assert stop.value.code == 2
    assert "give --heatmap FILE" in capsys.readouterr().err


def test_a_failed_link_is_drawn_from_the_window_it_failed_in():
    from netsim.run import parse_fault_option

    with recording_timelines():
        run = run_collective("allreduce", "mesh:4x4", "ring", "4MiB",
                             faults=[parse_fault_option("1_1<->1_2@40us", "fail")])
    w = link_windows(run.result, 4)
    assert w.edges[1] < 40e-6 < w.edges[2]
    fig = draw_window_heatmaps(run.machine, w, faults=run.result.meta["faults"])
    crosses = [sum(line.get_marker() == "x" for line in ax.lines) for ax in fig.axes[:4]]
    assert crosses == [0, 2, 2, 2]                 # both directions, from window 2 on
    assert len({round(ax.get_position().x0, 6) for ax in fig.axes[:4]}) == 2   # 2 x 2
    # the bytes the links carried before they failed are in windows 1 and 2 only
    lids = [run.machine.link_names.index(n) for n in ("1_1->1_2", "1_2->1_1")]
    assert w.bytes[0, lids].sum() > 0 and w.bytes[2:, lids].sum() == 0
    at = draw_time_heatmaps(run.machine, run.result, at=30e-6)
    assert sum(line.get_marker() == "x" for line in at.axes[0].lines) == 0


def test_a_machine_sized_ring_stays_on_its_blocks():
    """A 160-rank ring all-reduce (50,880 sends) is past the cap: it runs on its blocks,
    keeps no timeline and takes the same time."""
    with recording_timelines():
        timed = run_collective("allreduce", "ring:160", "ring", "1MiB")
    assert timed.result.timeline is None
    assert timed.time_s == run_collective("allreduce", "ring:160", "ring", "1MiB").time_s
    with pytest.raises(InputError, match="rings run on their blocks keep none"):
        link_windows(timed.result, 4)
