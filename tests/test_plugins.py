"""Plugins end to end: a test-only package (a module and a dist-info with entry points,
put on sys.path as an installed package would be) adds a machine family and a job kind
that the CLI then uses; a broken plugin is a one-line warning."""

from __future__ import annotations

import json
import textwrap

import pytest

import netsim.run.plugins as plugins
from netsim.run.scenarios.jobs import JOB_KINDS
from netsim.topology.spec import FAMILIES

from cli_helpers import run_main

PLUGIN = '''
CALLED = []

def register_topology():
    from netsim.topology import register_family, ring
    register_family("plugring", lambda args, options: ring(int(args), bandwidth=2e9))

def register_job():
    from typing import Literal
    from netsim._inputs.schema import Size, Strict
    from netsim.run import JobResult, register_job

    class Echo(Strict):
        kind: Literal["plug-echo"] = "plug-echo"
        size: Size

    register_job("plug-echo", Echo,
                 lambda job, ctx: JobResult("echo", "plug-echo",
                                            [{"job": "echo", "twice": 2 * job.size}]))

def register_algorithm():
    CALLED.append("algorithms")

def register_placement():
    CALLED.append("placements")
'''

ENTRY_POINTS = '''
[netsim.topologies]
plugring = netsim_testplug:register_topology
broken = netsim_testplug_missing:register

[netsim.jobs]
plug-echo = netsim_testplug:register_job

[netsim.algorithms]
plug-algorithm = netsim_testplug:register_algorithm

[netsim.placements]
plug-placement = netsim_testplug:register_placement
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    (tmp_path / "netsim_testplug.py").write_text(PLUGIN)
    info = tmp_path / "netsim_testplug-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: netsim-testplug\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(ENTRY_POINTS))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_LOADED", {})
    # the built-in job kinds register when their modules are first imported: import them
    # now, so that restoring the registry afterwards keeps them (it did not, and later
    # tests met "unknown job kind 'collective'")
    from netsim.run.scenarios.scenario import _import_job_kinds

    _import_job_kinds()
    families, kinds = dict(FAMILIES), dict(JOB_KINDS)
    yield tmp_path
    for registry, saved in ((FAMILIES, families), (JOB_KINDS, kinds)):
        registry.clear()
        registry.update(saved)


def test_plugins_are_listed_with_their_package(installed, capsys):
    code, out, err = run_main(["plugins", "--format", "json"], capsys)
    assert code == 0
    records = {r["name"]: r for r in json.loads(out)["records"]}
    assert set(records) == {"plugring", "broken", "plug-echo", "plug-algorithm",
                            "plug-placement"}
    assert records["plugring"]["dist"] == "netsim-testplug"
    assert records["plugring"]["version"] == "0.1"
    assert records["plugring"]["location"] == str(installed / "netsim_testplug.py")
    assert records["plugring"]["status"] == "ok"
    assert records["broken"]["status"].startswith("error: ModuleNotFoundError")
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "'broken'" in warnings[0] and "netsim-testplug" in warnings[0]
    import netsim_testplug

    assert sorted(netsim_testplug.CALLED) == ["algorithms", "placements"]


def test_a_plugin_machine_and_job_kind_work_from_the_cli(installed, capsys, tmp_path):
    code, out, err = run_main(["topo", "plugring:5", "--format", "json"], capsys)
    assert code == 0, err
    summary = json.loads(out)["records"][0]
    assert summary["endpoints"] == 5 and summary["max_link_bandwidth_Bps"] == 2e9
    scenario = tmp_path / "s.yaml"
    scenario.write_text("name: s\njobs:\n  - {kind: plug-echo, size: 1KiB}\n")
    code, out, err = run_main(["run", str(scenario), "--format", "json"], capsys)
    assert code == 0, err
    assert json.loads(out)["records"] == [{"job": "echo", "twice": 2048.0}]
    assert "not loaded" in err and "Traceback" not in err
