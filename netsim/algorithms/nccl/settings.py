"""NCCL's environment, as a user sets it for a run of NCCL's model: the one reader of
``ALGO``, ``PROTO`` and ``VERSION`` for ``coll --nccl``, ``compare --nccl`` and a scenario
job's ``nccl:`` mapping, so that the same settings give the same run everywhere.

``ALGO`` and ``PROTO`` force NCCL's choice as ``NCCL_ALGO`` and ``NCCL_PROTO`` do (one
value each; the ``NCCL_`` prefix and the case are free); ``VERSION`` is not an environment
variable but the release whose tuner picks (2.19-2.30, read by
:func:`.tuning.parse_nccl_version` here, so that a release the model does not know is refused
before anything runs).

>>> nccl_options({"NCCL_ALGO": "Ring", "proto": "ll128"}, where="--nccl")
{'nccl_algorithm': 'ring', 'nccl_protocol': 'LL128'}
>>> nccl_options({"NCCL_ALGO": "NVLSTree"}, where="--nccl")
{'nccl_algorithm': 'nvls_tree'}
>>> nccl_options({"VERSION": "2.26.2"}, where="--nccl")
{'nccl_version': '2.26.2'}
>>> nccl_options({"NCCL_MIN_NCHANNELS": "4"}, where="jobs[0].nccl")
Traceback (most recent call last):
...
netsim.errors.InputError: jobs[0].nccl: 'NCCL_MIN_NCHANNELS' is not modelled (ALGO, PROTO, VERSION): channel counts come from NCCL's graph search in the model
>>> nccl_options({"VERSION": "3.0"}, where="--nccl")
Traceback (most recent call last):
...
netsim.errors.InputError: --nccl: NCCL version 3.0.0: the model knows the tuner of releases 2.19 to 2.30.x
"""

from __future__ import annotations

from typing import Mapping

from ...errors import InputError
from .tuning import parse_nccl_version

__all__ = ["NCCL_SETTINGS", "nccl_options"]

#: The settings taken: NCCL's name (without NCCL_) -> the model's option and the values
#: NCCL takes (lower case -> NCCL's spelling); VERSION's values: parse_nccl_version.
NCCL_SETTINGS = {
    # NCCL's own spellings (src/init.cc ncclAlgoStr; parseList compares without case)
    "ALGO": ("nccl_algorithm", {"ring": "ring", "tree": "tree", "nvls": "nvls",
                                "nvlstree": "nvls_tree", "nvls_tree": "nvls_tree"}),
    "PROTO": ("nccl_protocol", {"ll": "LL", "ll128": "LL128", "simple": "Simple"}),
    "VERSION": ("nccl_version", None),
}


def nccl_options(settings: Mapping[str, object], *, where: str) -> dict:
    """NCCL's ``settings`` (name -> value) as NCCL's model options (``AlgoOptions.extra``);
    an unknown name or value is a one-line :class:`~netsim.errors.InputError` that starts
    with ``where`` (the option or field the settings came from; "" where the reader of a
    file names the field itself)."""
    at = f"{where}: " if where else ""
    out: dict = {}
    for key, raw in settings.items():
        name = str(key).strip().upper().removeprefix("NCCL_")
        value = str(raw).strip()
        if name not in NCCL_SETTINGS:
            why = (": channel counts come from NCCL's graph search in the model"
                   if "CHANNELS" in name else "")
            raise InputError(f"{at}{str(key).strip()!r} is not modelled "
                             f"({', '.join(NCCL_SETTINGS)}){why}")
        if not value:
            raise InputError(f"{at}{name} has no value")
        option, values = NCCL_SETTINGS[name]
        if values is None:                 # VERSION: a release the model knows, checked
            try:                           # here, before any run (compare's other machines)
                parse_nccl_version(value)
            except ValueError as error:
                raise InputError(f"{at}{error}") from None
            out[option] = value
            continue
        if value.lower() not in values:
            raise InputError(f"{at}{name}={value!r} is not one of "
                             f"{', '.join(sorted(set(values.values())))}")
        out[option] = values[value.lower()]
    return out
