"""Plugins: installed packages that add machines, algorithms, placements or job kinds.

A package declares entry points in one of the groups of :data:`PLUGIN_GROUPS`; each names a
module or a function (``my_pkg.netsim_plugin:register``). netsim loads them once
(:func:`load_plugins`; every CLI command and every sweep worker does): a module registers
what it adds when imported, a function when called with no arguments, in both cases with
netsim's own ``register_*`` functions::

    # pyproject.toml of the plugin
    [project.entry-points."netsim.topologies"]
    dragonfly = "my_pkg.dragonfly:register"      # calls register_family("dragonfly", ...)

A plugin that fails to load is reported (``PluginInfo.error``: one line) and skipped; it
never stops netsim.

>>> sorted(PLUGIN_GROUPS)
['netsim.algorithms', 'netsim.jobs', 'netsim.placements', 'netsim.topologies']
>>> all(p.error is None or "\\n" not in p.error for p in load_plugins())
True
"""

from __future__ import annotations

import importlib.metadata as metadata
import inspect
from dataclasses import dataclass
from types import ModuleType

__all__ = ["PLUGIN_GROUPS", "PluginInfo", "load_plugins"]

#: Entry-point group -> what its plugins add, and the function they register it with.
PLUGIN_GROUPS = {
    "netsim.topologies": "machine families (netsim.topology.register_family)",
    "netsim.algorithms": "collective algorithms (netsim.algorithms.register)",
    "netsim.placements": "placement strategies (netsim.placement.register_strategy)",
    "netsim.jobs": "scenario job kinds (netsim.run.register_job)",
}


@dataclass(frozen=True)
class PluginInfo:
    """One entry point: its group, name, target (``module:attr``), the distribution that
    declares it (name, version), where its code lives, and its load error (or None)."""

    group: str
    name: str
    value: str
    dist: str | None
    version: str | None
    location: str | None
    error: str | None = None

    def record(self) -> dict:
        return {"group": self.group, "name": self.name, "value": self.value,
                "dist": self.dist, "version": self.version, "location": self.location,
                "status": "ok" if self.error is None else f"error: {self.error}"}


_LOADED: dict[tuple[str, str, str], PluginInfo] = {}


def _entry_points(group: str):
    return sorted(metadata.entry_points(group=group), key=lambda ep: (ep.name, ep.value))


def _load(group: str, ep) -> PluginInfo:
    dist = getattr(ep, "dist", None)
    error, location = None, None
    try:
        target = ep.load()
        if callable(target) and not isinstance(target, ModuleType):
            target()
        source = target if isinstance(target, ModuleType) else inspect.getmodule(target)
        location = getattr(source, "__file__", None)
    except Exception as err:        # noqa: BLE001 (a broken plugin must not stop netsim)
        error = " ".join(f"{type(err).__name__}: {err}".split())
    return PluginInfo(group, ep.name, ep.value, dist.name if dist else None,
                      dist.version if dist else None, location, error)


def load_plugins() -> list[PluginInfo]:
    """Load every plugin not loaded yet (each once per process); every plugin's info."""
    infos = []
    for group in PLUGIN_GROUPS:
        for ep in _entry_points(group):
            key = (group, ep.name, ep.value)
            if key not in _LOADED:
                _LOADED[key] = _load(group, ep)
            infos.append(_LOADED[key])
    return infos


