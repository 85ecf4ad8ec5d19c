"""``netsim schema``: every shipped file validates against the printed JSON Schema, the
schema refuses the bad-input corpus cases it can express, and ``version:`` keys."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from netsim._inputs.yamlio import load_yaml

from cli_helpers import run_main

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(__file__).parent / "corpus"
# Kind -> the folder of files shipped with netsim (and their pattern).
SHIPPED = {"scenario": ("scenarios", "*.yaml"), "topology": ("topologies", "*.yaml"),
           "schedule": ("collectives", "*.json")}
KINDS = ["scenario", "topology", "schedule", "flows"]
# Corpus cases whose rule is structural (a type, a bound, an unknown or missing key, a unit
# string's shape), so the schema alone must refuse them. The others need netsim itself
# (an unknown preset, a disconnected machine, a size above the sanity limit ...).
REFUSED = {
    "scenario": ["alpha-negative", "empty", "job-kind-typo", "job-not-mapping", "jobs-empty",
                 "jobs-missing", "name-is-bool", "not-a-mapping", "overhead-negative",
                 "placement-negative-seed", "ranks-1e3-string", "seed-float", "seed-negative",
                 "size-negative", "unknown-header-key", "unknown-job-key"],
    "topology": ["bandwidth-word", "count-zero", "negative-latency", "unknown-field",
                 "zero-bandwidth"],
    "flows": ["bytes-word", "deps-not-list", "empty-flows", "missing-flows", "negative-bytes",
              "not-an-object", "start-negative", "unknown-flow-key", "unknown-link-key",
              "negative-latency"],
    "schedule": ["deps-not-list", "missing-ops", "negative-bytes", "ranks-zero", "src-float",
                 "unknown-op-key"],
}


@pytest.fixture(scope="module")
def validators():
    from click.testing import CliRunner

    from netsim.cli import cli

    found = {}
    for kind in KINDS:
        out = CliRunner().invoke(cli, ["schema", kind])
        assert out.exit_code == 0, out.output
        schema = json.loads(out.output)
        jsonschema.Draft202012Validator.check_schema(schema)
        found[kind] = jsonschema.Draft202012Validator(schema)
    return found


def _doc(path: Path):
    if path.suffix == ".json":
        return json.loads(path.read_text())
    return load_yaml(path.read_text(), str(path))[0]


@pytest.mark.parametrize("kind", sorted(SHIPPED))
def test_every_shipped_file_validates(validators, kind):
    folder, pattern = SHIPPED[kind]
    files = sorted((ROOT / folder).glob(pattern))
    assert files
    for path in files:
        errors = [e.message for e in validators[kind].iter_errors(_doc(path))]
        assert not errors, f"{path.name}: {errors[:1]}"


@pytest.mark.parametrize("kind, case", [(k, c) for k, cases in REFUSED.items() for c in cases])
def test_the_schema_refuses_bad_inputs_it_can_express(validators, kind, case):
    suffix = ".json" if kind in ("flows", "schedule") else ".yaml"
    assert not validators[kind].is_valid(_doc(CORPUS / kind / f"{case}{suffix}"))


def test_the_corpus_files_netsim_accepts_validate(validators):
    assert validators["flows"].is_valid(_doc(CORPUS / "flows" / "minimal-ok.json"))


def test_unit_strings_and_numbers_are_both_accepted(validators):
    link = {"nodes": [{"name": "a"}, {"name": "b"}],
            "links": [{"src": "a", "dst": "b", "bandwidth": "450GB/s", "latency": "711ns"}]}
    assert validators["topology"].is_valid(link)
    link["links"][0].update(bandwidth=4.5e11, latency=7.11e-7)
    assert validators["topology"].is_valid(link)
    link["links"][0]["bandwidth"] = "-450GB/s"
    assert not validators["topology"].is_valid(link)


def test_unknown_kind_is_a_usage_error(capsys):
    code, _, err = run_main(["schema", "sceanrio"], capsys)
    assert code == 2 and "scenario" in err


@pytest.mark.parametrize("version, ok", [(1, True), (2, False)])
def test_version_key(tmp_path, capsys, version, ok):
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"name: s\nversion: {version}\njobs:\n  - kind: traffic\n"
                        f"    topology: 'ring:4'\n    size: 1MB\n")
    code, out, err = run_main(["run", str(scenario), "--format", "json"], capsys)
    assert (code == 0) == ok, err
    if not ok:
        assert "newer than this netsim reads" in err and "line 2" in err
    topo = tmp_path / "t.yaml"
    topo.write_text(f"version: {version}\ngenerator: 'ring:4'\n")
    code, out, err = run_main(["topo", str(topo)], capsys)
    assert (code == 0) == ok, err
    if not ok:
        assert "version" in err and "upgrade netsim" in err
