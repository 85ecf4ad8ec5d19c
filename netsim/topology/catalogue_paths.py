"""Where the data catalogues live: ``topologies/``, ``collectives/``, ``scenarios/``.

They are top-level folders of the source tree, so a user adds a machine or an algorithm
without writing Python. A source checkout (or an editable install) reads them in place;
a wheel carries a copy under ``netsim/_data`` (symlinks that the build follows).
Extra folders may be listed in ``NETSIM_PATH`` (``os.pathsep``-separated); they are
searched first.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["data_dir", "search_dirs"]

_PACKAGE = Path(__file__).resolve().parent.parent     # the netsim package


def data_dir(kind: str) -> Path:
    """The built-in folder of ``kind`` (``'topologies'``, ``'collectives'``, ``'scenarios'``)."""
    source_tree = _PACKAGE.parent / kind
    if source_tree.is_dir():
        return source_tree
    return _PACKAGE / "_data" / kind


def search_dirs(kind: str) -> list[Path]:
    """Folders searched for a named ``kind`` entry: ``NETSIM_PATH`` entries, then built-in."""
    extra = [Path(p) / kind for p in os.environ.get("NETSIM_PATH", "").split(os.pathsep) if p]
    extra += [Path(p) for p in os.environ.get("NETSIM_PATH", "").split(os.pathsep) if p]
    return [d for d in extra if d.is_dir()] + [data_dir(kind)]
