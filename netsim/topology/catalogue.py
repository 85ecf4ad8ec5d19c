"""The machine catalogue: real systems as topology YAML files, loaded by name.

A preset is a topology file (:mod:`netsim.topology.io`) called ``<name>.yaml`` in one of
:func:`netsim.catalogue_paths.search_dirs` ``('topologies')``: the folders listed in
``NETSIM_PATH`` first, then the built-in ``topologies/`` folder. Spec strings reach presets
by name, with generator or calibration options as overrides (``dgx-h100``,
``galaxy-wh,links=1``, ``t3000,links=1,fabric=ring``).

>>> load_preset("dgx-h100").num_endpoints
8
>>> "galaxy-wh" in preset_names()
True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from .catalogue_paths import search_dirs
from ..errors import unknown_name

__all__ = ["find_preset", "preset_names", "preset_table", "load_preset"]

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


def load_preset(name: str, overrides: Mapping[str, Any] | None = None):
    """The Topology of preset ``name``; ``overrides`` as in a spec (``{'links': 1}``)."""
    from .io import load_topology_file

    path = find_preset(name)
    if path is None:
        raise unknown_name("machine preset", name, preset_names())
    return load_topology_file(path, overrides=dict(overrides or {}))


def preset_table() -> list[dict[str, Any]]:
    """One row per preset: name, endpoints, switches, links (directed), description, sources.

    Sources are joined with ``'; '``. A preset that fails to load shows its error as the
    description, so one broken file does not hide the catalogue.
    """
    rows = []
    for name in preset_names():
        try:
            topo = load_preset(name)
        except Exception as err:  # noqa: BLE001 - shown to the user, not swallowed silently
            rows.append({"name": name, "endpoints": None, "switches": None, "links": None,
                         "description": f"error: {err}", "sources": ""})
            continue
        rows.append({"name": name, "endpoints": int(topo.num_endpoints),
                     "switches": int(topo.num_switches), "links": int(topo.num_links),
                     "description": topo.meta.get("description", ""),
                     "sources": "; ".join(topo.meta.get("sources", []))})
    return rows
