"""Optional packages: imported where they are needed, with a one-line error naming the
extra that installs them (``pip install 'netsim[sweep]'``) when they are missing.

>>> require("json", "sweep", "reading JSON").__name__
'json'
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ..errors import NetsimError

__all__ = ["require", "MissingExtraError"]


class MissingExtraError(NetsimError):
    """An optional package is not installed; the message says which extra brings it."""

    exit_code = 2


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """``import module``, or a :class:`MissingExtraError` naming ``netsim[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        top = module.split(".")[0]
        raise MissingExtraError(f"{purpose} needs the optional package {top!r}: "
                                f"pip install 'netsim[{extra}]'") from None
