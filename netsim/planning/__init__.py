"""Planning: choose a training job's parallel layout and placement on a machine.

* :mod:`.models`: model descriptions (shipped YAML files and the user's own);
* :mod:`.step`: one training step of a layout as one netsim schedule (compute, collectives,
  1F1B pipeline), its memory per chip, and its simulated time split;
* :mod:`.phases`: the simulated times of a step's collectives, shared where exact;
* :mod:`.search`: enumerate the layouts that fit, bound, simulate the best, rank.

The formulas are in ``docs/plan.md``.
"""

from .models import DTYPE_BYTES, ModelSpec, load_model, model_names
from .phases import PhaseTimes, describe_stats
from .search import (PlacementScore, PlanResult, enumerate_layouts, evaluate_layout,
                     lower_bound, plan)
from .step import (COMPUTE_EFFICIENCY, MEMORY_USABLE, Chip, StepBreakdown, TrainLayout,
                   TrainStep, algorithm_of, block_seconds, breakdown, build_train_step,
                   chip_of, collective_times, memory_per_chip, parse_train_layout,
                   step_phases)

__all__ = ["DTYPE_BYTES", "ModelSpec", "load_model", "model_names",
           "PhaseTimes", "describe_stats", "PlacementScore", "PlanResult", "enumerate_layouts",
           "evaluate_layout", "lower_bound", "plan",
           "COMPUTE_EFFICIENCY", "MEMORY_USABLE", "Chip", "StepBreakdown", "TrainLayout",
           "TrainStep", "algorithm_of", "block_seconds", "breakdown", "build_train_step",
           "chip_of", "collective_times", "memory_per_chip", "parse_train_layout",
           "step_phases"]
