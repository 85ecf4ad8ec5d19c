"""Every command's JSON output holds exactly the fields its record schema documents, each
of the documented type (``netsim schema --records COMMAND``): runs that add fields (auto's
candidates, NCCL's choice, tt-metal's, faults, groups, the packet model, a measurement)
included, so a new field without a unit and a meaning fails here."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from cli_helpers import run_main
from netsim.run import RECORD_FIELDS, record_schema

ROOT = Path(__file__).resolve().parent.parent
LOG = str(ROOT / "examples" / "logs" / "h100-4gpu-all_reduce_perf.txt")

RUNS = {
    "coll nccl": ["coll", "allreduce", "--topo", "dgx-h100", "--sizes", "1KiB,64MiB"],
    "coll tt-metal axis": ["coll", "allgather", "--topo", "t3000", "--axis", "1",
                           "--size", "1MiB"],
    "coll auto faults": ["coll", "allreduce", "--topo", "mesh:3x3", "--algo", "auto",
                         "--size", "64KiB", "--fail-link", "0_0<->0_1"],
    "coll packet": ["coll", "allreduce", "--topo", "mesh:2x2", "--algo", "ring", "--size",
                    "16KiB", "--model", "both"],
    "coll measured": ["coll", "allreduce", "--topo", "dgx-h100", "--sizes", "8MiB",
                      "--measured", LOG],
    "compare": ["compare", "allreduce", "--topo", "mesh:2x2", "--topo", "ring:4",
                "--size", "1MiB"],
    "flows": ["flows", str(ROOT / "examples" / "flows" / "incast.json"), "--model", "both"],
    "topo": ["topo", "dgx-h100"],
    "place": ["place", "--topo", "t3000", "--tp", "4", "--dp", "2", "--tp-bytes", "1MiB",
              "--dp-bytes", "4MiB", "--strategies", "row_major,snake"],
    "validate": ["validate", "--quick", "--family", "n300"],
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_output_matches_its_documented_schema(name, capsys):
    code, out, err = run_main(RUNS[name] + ["--format", "json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    jsonschema.validate(doc, record_schema(doc["command"]))


def test_every_field_says_what_it_is():
    for command, fields in RECORD_FIELDS.items():
        for name, field in fields.items():
            assert len(field.get("description", "")) > 8, f"{command}.{name}"
            if name.endswith("_s"):
                assert "(s" in field["description"] or "s)" in field["description"], name
            if name.endswith("_GBps"):
                assert "GB/s" in field["description"], name


def test_a_field_not_documented_is_refused():
    doc = {"netsim": "0", "command": "topo", "records": [{"name": "x", "speed": 1}]}
    with pytest.raises(jsonschema.ValidationError, match="speed"):
        jsonschema.validate(doc, record_schema("topo"))


def test_the_schema_command_prints_it(capsys):
    code, out, err = run_main(["schema", "--records", "coll"], capsys)
    assert code == 0, err
    assert json.loads(out)["title"] == "netsim coll output"
