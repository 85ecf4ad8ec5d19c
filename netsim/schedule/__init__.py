"""Schedules: the contract between algorithms and machines, as data.

* :mod:`.ir`: the Schedule IR (a DAG of sends, computes and barriers over ranks) and its
  JSON files;
* :mod:`.flowfile`: flow files (explicit flows on explicit or generated links), checked
  column-wise (:mod:`.flowcolumns`); flow tables in npz or Parquet (:mod:`.flowtable`);
* :mod:`.filemodels`: the flow-file and schedule-file formats as pydantic models;
* :mod:`.traffic`: synthetic traffic patterns (all-to-all, permutations, ...).

>>> b = ScheduleBuilder(2)
>>> _ = b.send(0, 1, 1e6)
>>> b.build().num_ops
1
"""

from .ir import (BARRIER, COMPUTE, MAX_SENDS, SEND, Schedule, ScheduleBuilder, concurrent,
                 load_schedule, read_json, save_schedule, schedule_from_dict,
                 sends_from_arrays, sequential)
from .blocks import BlockSchedule
from .flowfile import FlowSet, flows_from_dict, load_flow_file
from .flowtable import (TABLE_SUFFIXES, flows_to_table, load_flow_table, require_pyarrow,
                        write_flow_table)
from .traffic import PATTERNS, all_to_all, make_pattern, permutation, shift

__all__ = ["SEND", "COMPUTE", "BARRIER", "MAX_SENDS", "Schedule", "ScheduleBuilder",
           "BlockSchedule",
           "concurrent", "sequential", "sends_from_arrays", "schedule_from_dict",
           "load_schedule", "save_schedule", "read_json",
           "FlowSet", "load_flow_file", "flows_from_dict",
           "FlowFileModel", "ScheduleFileModel",
           "TABLE_SUFFIXES", "load_flow_table", "flows_to_table", "write_flow_table",
           "require_pyarrow",
           "PATTERNS", "make_pattern", "all_to_all", "permutation", "shift"]


def __getattr__(name: str):
    # The file models need pydantic; load it when they are asked for, not with the package.
    if name in ("FlowFileModel", "ScheduleFileModel"):
        from . import filemodels

        return getattr(filemodels, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
