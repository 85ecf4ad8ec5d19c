"""JSON Schemas of the files users write, from the models that validate them.

Unit fields accept what users write (``"450GB/s"``, ``"711ns"``, ``"64MiB"``) as well as
numbers in SI units. The scenario schema is built when asked, from the job kinds registered
then (plugins included): ``jobs`` is a list whose items match one job kind's model.

>>> schema = file_schema("scenario")
>>> schema["title"], "jobs" in schema["required"]
('netsim scenario file', True)
>>> sorted(FILE_KINDS)
['flows', 'scenario', 'schedule', 'topology']
"""

from __future__ import annotations

from typing import Any, Callable, Union

from pydantic import Field, create_model

from ..errors import unknown_name
from ..topology import topology_file_schema

__all__ = ["file_schema", "FILE_KINDS", "scenario_schema"]

_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# PyYAML reads `1e9` as a string, which the models take as a number: the schema accepts a
# number written so wherever it takes a number (its bounds are then checked by netsim).
_NUMBER_TEXT = {"type": "string", "pattern": r"^\s*[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)"
                                            r"([eE][-+]?[0-9]+)?\s*$"}


def _numbers_as_text(node: Any) -> Any:
    """``node`` with every plain ``{"type": "number", ...}`` also taking a numeric string."""
    if isinstance(node, list):
        return [_numbers_as_text(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {key: _numbers_as_text(value) for key, value in node.items()}
    if node.get("type") == "number":
        rest = {k: v for k, v in node.items() if k in ("title", "default", "description")}
        number = {k: v for k, v in node.items() if k not in rest}
        return {"anyOf": [number, _NUMBER_TEXT], **rest}
    return node


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of scenario files (with every job kind registered now)."""
    from .._inputs.schema import Strict
    from .scenarios.jobs import JOB_KINDS
    from .scenarios.scenario import _ScenarioModel, _import_job_kinds
    from .sweep import SweepSpec

    _import_job_kinds()
    # A job's own `faults:` list is taken out before its model validates it.
    jobs = tuple(create_model(model.__name__, __base__=model, faults=(Any, None))
                 for model, _ in JOB_KINDS.values())
    fields: dict[str, Any] = {name: (info.annotation, info)
                              for name, info in _ScenarioModel.model_fields.items()}
    fields["jobs"] = (list[Union[jobs]], Field(min_length=1))      # type: ignore[valid-type]
    fields["sweep"] = (SweepSpec | None, None)
    fields["version"] = (int | None, Field(default=None, ge=1))
    model = create_model("Scenario", __base__=Strict, **fields)
    return model.model_json_schema()


def _flows_schema() -> dict[str, Any]:
    from ..schedule import FlowFileModel

    return FlowFileModel.model_json_schema()


def _schedule_schema() -> dict[str, Any]:
    from ..schedule import ScheduleFileModel

    return ScheduleFileModel.model_json_schema()


#: Schema of each file kind; one entry per kind.
FILE_KINDS: dict[str, Callable[[], dict[str, Any]]] = {
    "scenario": scenario_schema,
    "topology": topology_file_schema,
    "flows": _flows_schema,
    "schedule": _schedule_schema,
}


def file_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``kind`` files, with a title."""
    if kind not in FILE_KINDS:
        raise unknown_name("file kind", kind, FILE_KINDS)
    schema = _numbers_as_text(FILE_KINDS[kind]())
    return {"$schema": _DIALECT, **schema, "title": f"netsim {kind} file"}
