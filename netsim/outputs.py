"""Writing result files safely: atomically, never over an existing file unless asked, and
never replacing what is not a regular file.

* :func:`check_outputs` checks every output of a command before any is written (exists
  without ``--overwrite``, a folder that cannot be made, two outputs on one path), so a
  refused run leaves nothing behind;
* missing folders of an output are made when it is written (not when it is checked, so a
  run refused later leaves no empty folder either);
* :func:`write_atomic` writes a regular file through a temporary file and a rename; a
  device or a FIFO (``/dev/null``, a named pipe) is written through, never replaced by a
  regular file; a symbolic link is followed, and the file it points to is replaced;
* an operating-system error while writing (disk full, read-only, no permission) is a
  one-line :class:`~netsim.errors.OutputError`.
"""

from __future__ import annotations

import math

import os
import secrets
import stat
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Iterable, Iterator

from .errors import InputError, OutputError

__all__ = ["check_writable", "check_outputs", "write_atomic", "to_jsonable", "all_or_nothing"]


def _target(path: Path) -> Path:
    """Where writing ``path`` lands: a symbolic link is followed, never replaced."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _is_special(path: Path) -> bool:
    """Does ``path`` exist as something that is neither a regular file nor a folder (a
    device, a FIFO, a socket)? Those are written through, never replaced."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def check_writable(path: str | Path, overwrite: bool) -> Path:
    """Fail early, before any work, if ``path`` cannot be written as asked."""
    path = Path(path)
    target = _target(path)
    if target.is_dir():
        raise InputError(f"{path}: is a folder, not a file")
    if _is_special(target):
        return path                  # written through (like a shell's `>`), never replaced
    if target.exists() and not overwrite:
        raise InputError(f"{path}: already exists (use --overwrite to replace it)")
    folder = target.parent
    while not folder.exists():              # made at write time: check the first that is
        folder = folder.parent
    if not folder.is_dir():
        raise InputError(f"{path}: cannot make a folder inside {str(folder)!r}: it is a file")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputError(f"{path}: cannot write into folder {str(folder)!r}: "
                          f"permission denied or read-only")
    return path


def check_outputs(paths: Iterable[str | Path | None], *, overwrite: bool) -> list[Path]:
    """Check every output a command will write, before it writes any: each is writable
    and no two of them land on the same file (the second would silently replace the
    first). ``None`` entries (options not given) are skipped."""
    checked: list[Path] = []
    seen: dict[str, Path] = {}
    for path in paths:
        if path is None:
            continue
        path = check_writable(path, overwrite)
        key = os.path.realpath(path)
        if key in seen and not _is_special(Path(key)):
            raise InputError(f"{path}: written twice by this command (also as "
                             f"{str(seen[key])!r}); give each output its own file")
        seen[key] = path
        checked.append(path)
    return checked


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: Files written inside :func:`all_or_nothing` (None outside it).
_WRITTEN: ContextVar[list | None] = ContextVar("netsim_written", default=None)


@contextmanager
def all_or_nothing() -> Iterator[None]:
    """Files :func:`write_atomic` writes in this block are removed if the block fails: a
    command with several outputs (``-o`` and ``--heatmap``, one per size) leaves all of
    them or none, not the first few of a run that hit a full disk."""
    token = _WRITTEN.set([])
    try:
        yield
    except BaseException:
        for path in _WRITTEN.get():
            Path(path).unlink(missing_ok=True)
        raise
    finally:
        _WRITTEN.reset(token)


def write_atomic(path: str | Path, data: str | bytes, overwrite: bool = False) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it into place.

    A crash or an error half-way leaves no partial file behind. A device or FIFO is
    written through; a symbolic link's target is what gets replaced.
    """
    path = check_writable(path, overwrite)
    target = _target(path)
    mode = "wb" if isinstance(data, bytes) else "w"
    try:
        if _is_special(target):
            with open(target, mode) as handle:
                handle.write(data)
            return path
        target.parent.mkdir(parents=True, exist_ok=True)
        # The temporary file's name is chosen before it is made, inside the try: a Ctrl-C
        # landing just after it is created (which mkstemp's return would leave unnamed
        # here; seen in tests/test_signals.py) still finds it to remove.
        tmp = target.parent / f".{target.name}.{secrets.token_hex(6)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, mode) as handle:
                handle.write(data)
            os.chmod(tmp, 0o666 & ~_umask())   # made 0600; give the usual permissions
            os.replace(tmp, target)
            written = _WRITTEN.get()
            if written is not None:
                written.append(target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    except OSError as err:
        raise OutputError(f"{path}: cannot write: {err.strerror or err}") from None
    return path


def to_jsonable(value):
    """numpy scalars and arrays -> Python numbers and lists, recursively (tuples become
    lists, keys become strings): what JSON and YAML writers accept.

    >>> import numpy as np
    >>> to_jsonable({1: (np.int64(2), np.arange(2.0)), "b": np.bool_(True)})
    {'1': [2, [0.0, 1.0]], 'b': True}
    >>> to_jsonable([float("nan"), np.float64("inf")])      # not numbers in JSON: null
    [None, None]
    """
    import numpy as np

    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist()) if value.dtype.kind in "fc" else value.tolist()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None             # JSON has no NaN or infinity: a bare NaN breaks its readers
    return value
