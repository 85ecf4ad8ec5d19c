"""One placement study, run by one function, whichever door the case comes through."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from netsim.cli import cli
from netsim.errors import InputError
from netsim.run import PlacementStudy, load_scenario, run_placement_study, run_scenario

SPEC = "mesh:2x4,bw=10GB/s"


def test_the_cli_and_a_scenario_job_give_the_same_records(tmp_path):
    (tmp_path / "s.yaml").write_text(
        f"name: s\ntopology: '{SPEC}'\nseed: 3\njobs:\n  - kind: placement\n"
        "    layout: {tp: 4, dp: 2}\n    bytes: {tp: 2MB, dp: 1MB}\n    repeat: {tp: 3}\n"
        "    strategies: row_major,interleaved,search\n    budget: 2\n    seconds: 1min\n")
    jobs = {r["strategy"]: r for r in run_scenario(load_scenario(tmp_path / "s.yaml")).records}
    result = CliRunner().invoke(cli, [
        "place", "--topo", SPEC, "--tp", "4", "--dp", "2", "--tp-bytes", "2MB",
        "--dp-bytes", "1MB", "--repeat", "tp=3", "--strategies", "row_major,interleaved,search",
        "--budget", "2", "--seconds", "1min", "--seed", "3", "--format", "json"])
    assert result.exit_code == 0, result.output
    cli_rows = {r["strategy"]: r for r in json.loads(result.stdout)["records"]}
    assert cli_rows.keys() == jobs.keys() == {"row_major", "interleaved", "search"}
    for name, row in cli_rows.items():
        assert {k: jobs[name][k] for k in row} == row


def test_repeat_multiplies_the_phase_it_names():
    base = dict(topology=SPEC, layout="tp=4,dp=2", strategies="row_major")
    once = run_placement_study(PlacementStudy(**base, bytes={"tp": "4MB"})).records()[0]
    thrice = run_placement_study(
        PlacementStudy(**base, bytes={"tp": "4MB"}, repeat={"tp": 3})).records()[0]
    assert thrice["step_s"] == pytest.approx(3 * once["step_s"])
    assert once["step_s"] == pytest.approx(1.5 * 4e6 / 10e9)    # ring: 2 (n-1)/n S / B


def test_all_puts_explicit_before_the_search_only_with_a_map():
    study = PlacementStudy(topology=SPEC, layout="tp=8", bytes={"tp": 1.0})
    names = study.strategy_names()
    assert names[-1] == "search" and "explicit" not in names
    with_map = study.model_copy(update={"map": "m.json"}).strategy_names()
    assert with_map == [*names[:-1], "explicit", "search"]


@pytest.mark.parametrize("fields, message", [
    (dict(bytes={"tp": 1.0}, strategies=["explicit"]), "strategy explicit needs --map FILE"),
    (dict(model={"hidden": 8, "seq_len": 8, "layers": 2}, repeat={"tp": 2}),
     "repeat goes with bytes"),
    (dict(bytes={"tp": 1.0}, repeat={"tq": 2}), "unknown parallel dimension 'tq'"),
    (dict(bytes={"tp": 1.0}, seconds="0s"), "must be > 0 s"),
])
def test_bad_studies_are_refused(fields, message):
    with pytest.raises(ValueError, match=message):
        PlacementStudy(topology=SPEC, layout="tp=8", **fields)


def test_a_study_without_a_topology_is_a_one_line_error():
    with pytest.raises(InputError, match="no topology"):
        run_placement_study(PlacementStudy(layout="tp=8", bytes={"tp": 1.0}))
