"""Planning: choose a training job's parallel layout and placement on a machine.

* :mod:`.models`: model descriptions (shipped YAML files and the user's own);
* :mod:`.step`: one training step of a layout as one netsim schedule (compute, collectives,
  1F1B pipeline), its memory per chip, and its simulated time split;
* :mod:`.search`: enumerate the layouts that fit, bound, simulate the best, rank.

The formulas are in ``docs/plan.md``.
"""

from .models import DTYPE_BYTES, ModelSpec, load_model, model_names

__all__ = ["DTYPE_BYTES", "ModelSpec", "load_model", "model_names"]
