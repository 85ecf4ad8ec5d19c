"""The flow-file and schedule-file formats as strict pydantic models.

They state the formats once: what each record may hold, its types and units (sizes, rates
and times accept unit strings such as ``"1MiB"``, ``"50GB/s"``, ``"1us"``), for the JSON
Schema editors use (``FlowFileModel.model_json_schema()``) and for the per-record checks
whose errors name the file, the record and the field (``flows[3].bytes: ...``). What a
model cannot see (a node that is not in the topology, a dependency cycle, a path that does
not lead to its destination) is checked by the loaders, :mod:`.flowfile` and :mod:`.ir`;
large flow files are checked column-wise first (:mod:`.flowcolumns`).

>>> FlowModel.model_validate({"src": "a", "dst": "b", "bytes": "1KiB"}).bytes
1024.0
>>> sorted(FlowFileModel.model_json_schema()["properties"])
['description', 'flows', 'links', 'topology']
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BeforeValidator, Field, StrictBool, StrictInt, StrictStr

from .._inputs import schema as _units
from .._inputs.schema import Strict

__all__ = ["Id", "LinkModel", "FlowModel", "FlowFileModel", "SendOpModel", "ComputeOpModel",
           "BarrierOpModel", "ScheduleFileModel", "OP_MODELS"]


def _list_of(what: str, non_empty: bool = False):
    """A list check whose message says what the list holds (pydantic's does not)."""
    def check(value: Any) -> Any:
        if not isinstance(value, list) or (non_empty and not value):
            raise ValueError(f"expected a {'non-empty ' if non_empty else ''}list of {what}, "
                             f"got {value!r}")
        return value
    return BeforeValidator(check)


def _integer(value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {value!r}")
    return value


# The unit types of every input file: numbers in SI units or unit strings; their JSON
# Schema takes both (netsim._inputs.schema.unit_json_schema).
Size, Rate, Time = _units.Size, _units.Rate, _units.Time

#: A node, link, flow or op id: a string or an integer (``1`` and ``"1"`` name the same
#: node or link; two flows whose ids differ only so are refused as ambiguous).
Id = Union[StrictStr, StrictInt]
Integer = Annotated[int, BeforeValidator(_integer)]


class LinkModel(Strict):
    """One directed link of a flow file's network."""

    id: Optional[Id] = Field(None, description="Name used by paths and results [l<index>]")
    src: Id = Field(description="Node the link leaves")
    dst: Id = Field(description="Node the link enters")
    bandwidth: Rate = Field(description="Bytes/s one way, or a rate string ('50GB/s')")
    latency: Time = Field(0.0, description="Seconds, or a time string ('1us')")


class FlowModel(Strict):
    """One flow: ``bytes`` from ``src`` to ``dst``, after ``deps`` and not before ``start``."""

    id: Optional[Id] = Field(None, description="Name used by deps and results [its index]")
    src: Id = Field(description="Source node")
    dst: Id = Field(description="Destination node")
    bytes: Size = Field(description="Bytes, or a size string ('1MiB')")
    start: Time = Field(0.0, description="Earliest release, s, or a time string")
    path: Annotated[Optional[list[Id]], _list_of("link ids", non_empty=True)] = Field(
        None, description="Link ids from src to dst [routed by the machine's router]")
    deps: Annotated[list[Id], _list_of("flow ids")] = Field(
        [], description="Ids of flows that must finish first")


class FlowFileModel(Strict):
    """A flow file: explicit flows on explicit ``links`` or a generated ``topology``."""

    description: Optional[str] = None
    links: Optional[list[LinkModel]] = Field(None, min_length=1,
                                            description="The network, link by link")
    topology: Optional[StrictStr] = Field(None, description="Or a topology spec ('mesh:4x4')")
    flows: list[FlowModel] = Field(min_length=1)


class _Op(Strict):
    id: Optional[Id] = Field(None, description="Name used by deps [its index]")
    deps: Annotated[list[Id], _list_of("op ids")] = Field(
        [], description="Ids of earlier ops that must finish first")
    tag: Optional[StrictStr] = Field(None, description="Phase or group name")


class SendOpModel(_Op):
    """``bytes`` (or ``fraction`` of the message) from rank ``src`` to rank ``dst``."""

    op: Literal["send"] = "send"
    src: Integer
    dst: Integer
    bytes: Size = 0.0
    fraction: Optional[float] = Field(None, description="Share of the message size, in a "
                                                        "relative file")


class ComputeOpModel(_Op):
    """``seconds`` of local work on ``rank``."""

    op: Literal["compute"]
    rank: Integer
    seconds: Time = 0.0


class BarrierOpModel(_Op):
    """A no-op that completes with its dependencies."""

    op: Literal["barrier"]


OP_MODELS = {"send": SendOpModel, "compute": ComputeOpModel, "barrier": BarrierOpModel}


class ScheduleFileModel(Strict):
    """A schedule file (see :meth:`netsim.schedule.Schedule.to_dict`)."""

    format: Optional[Literal["netsim-schedule"]] = None
    version: Optional[Literal[1]] = None
    ranks: Integer = Field(ge=1, description="Ranks, the extra (switch) ranks included")
    relative: StrictBool = Field(False, description="Sizes are fractions of the message")
    ops: list[Annotated[Union[SendOpModel, ComputeOpModel, BarrierOpModel],
                        Field(union_mode="left_to_right")]]
    meta: dict[str, Any] = {}
    extra_nodes: list[Annotated[int, Field(ge=0)]] = Field(
        [], description="Topology nodes of the last len(extra_nodes) ranks (switches)")
