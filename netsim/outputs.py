"""Writing result files safely: atomically, and never over an existing file unless asked."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import InputError

__all__ = ["check_writable", "write_atomic", "to_jsonable"]


def check_writable(path: str | Path, overwrite: bool) -> Path:
    """Fail early, before any work, if ``path`` exists and ``overwrite`` is off."""
    path = Path(path)
    if path.exists() and not overwrite:
        raise InputError(f"{path}: already exists (use --overwrite to replace it)")
    if path.parent and not path.parent.exists():
        raise InputError(f"{path}: folder {str(path.parent)!r} does not exist")
    return path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: str | bytes, overwrite: bool = False) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place.

    A crash or an error half-way leaves no partial file behind.
    """
    path = check_writable(path, overwrite)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, mode) as handle:
            handle.write(data)
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes 0600; give the usual permissions
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def to_jsonable(value):
    """numpy scalars and arrays -> Python numbers and lists, recursively (tuples become
    lists, keys become strings): what JSON and YAML writers accept.

    >>> import numpy as np
    >>> to_jsonable({1: (np.int64(2), np.arange(2.0)), "b": np.bool_(True)})
    {'1': [2, [0.0, 1.0]], 'b': True}
    """
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
