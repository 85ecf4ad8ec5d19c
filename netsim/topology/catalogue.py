"""The machine catalogue: real systems as topology YAML files, found by name.

A preset is a topology file (:mod:`netsim.topology.io`) called ``<name>.yaml`` in one of
:func:`netsim.catalogue_paths.search_dirs` ``('topologies')``: the folders listed in
``NETSIM_PATH`` first, then the built-in ``topologies/`` folder. Spec strings reach presets
by name, with generator or calibration options as overrides (``dgx-h100``,
``galaxy-wh,links=1``, ``t3000,links=1,fabric=ring``); :func:`netsim.topology.io.load_preset`
loads one.

>>> find_preset("dgx-h100").name
'dgx-h100.yaml'
>>> "galaxy-wh" in preset_names()
True
"""

from __future__ import annotations

from pathlib import Path

from .catalogue_paths import search_dirs

__all__ = ["find_preset", "preset_names"]

_SUFFIXES = (".yaml", ".yml")


def _files() -> dict[str, Path]:
    """Preset name (lower case) -> file; earlier search folders win."""
    found: dict[str, Path] = {}
    for folder in search_dirs("topologies"):
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in _SUFFIXES and path.is_file():
                found.setdefault(path.stem.lower(), path)
    return found


def find_preset(name: str) -> Path | None:
    """The file of preset ``name`` (case-insensitive), or None if there is none."""
    text = str(name).strip().lower()
    if not text or "/" in text or "\\" in text:
        return None
    return _files().get(text)


def preset_names() -> list[str]:
    """Every preset name, sorted."""
    return sorted(_files())
