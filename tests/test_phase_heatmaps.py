"""Placement heatmaps per phase: a short phase's links read busy while it runs, where the
step average shows them idle."""

from __future__ import annotations

import numpy as np
import pytest

import netsim
from netsim.report import draw_phase_heatmaps
from netsim.run import StepModel

from cli_helpers import run_main


def _model():
    galaxy = netsim.parse_topology("mesh:4x4,bw=10GB/s")
    return StepModel(galaxy, netsim.ParallelLayout(tp=4, dp=4),
                     netsim.bytes_workload(tp_bytes=4 * 2**20, dp_bytes=256 * 2**20))


def test_phase_utilisation_is_each_phase_over_its_own_time():
    model = _model()
    score = model.evaluate(list(range(16)), strategy="row_major")
    phases = model.phase_utilisation(score)
    assert set(phases) == set(score.phase_s)
    for name, util in phases.items():
        assert util.max() <= 1 + 1e-9 and util.max() > 0
    # bytes are conserved: sum over phases of util x bw x phase time = the step's link bytes
    bw = model.topology.bandwidth
    total = sum(util * bw * score.phase_s[name] for name, util in phases.items())
    np.testing.assert_allclose(total, score.link_bytes, rtol=1e-9, atol=1e-3)
    # the short TP phase's busiest link is far busier during it than on the step average
    tp = phases["tp-allreduce"]
    busiest = int(np.argmax(tp))
    assert tp[busiest] > 5 * score.link_util[busiest]


def test_place_heatmap_draws_one_panel_per_phase(tmp_path, capsys):
    out = tmp_path / "heat.png"
    code, _, err = run_main(["place", "--topo", "mesh:4x4,bw=10GB/s", "--tp", "4", "--dp", "4",
                             "--tp-bytes", "4MiB", "--dp-bytes", "256MiB", "--strategies",
                             "row_major", "--heatmap", str(out)], capsys)
    assert code == 0, err
    assert (tmp_path / "heat-row_major.png").read_bytes()[:4] == b"\x89PNG"
    model = _model()
    score = model.evaluate(list(range(16)), strategy="row_major")
    fig = draw_phase_heatmaps(model.topology, model.phase_utilisation(score))
    titles = [ax.get_title() for ax in fig.axes]
    assert "tp-allreduce" in titles and "dp-allreduce" in titles


def test_no_phases_is_refused():
    from netsim.errors import InputError

    with pytest.raises(InputError, match="no phases"):
        draw_phase_heatmaps(netsim.parse_topology("mesh:2x2"), {})
