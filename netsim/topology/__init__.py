"""Topologies: the array-based model, generators, spec strings, files and summaries.

>>> from netsim.topology import parse_topology, summarize
>>> summarize(parse_topology("torus:4x4,bw=25GB/s"))["bisection_bandwidth_Bps"]
200000000000.0
"""

from .grid import mesh, torus
from .model import Topology, TopologyBuilder
from .ring import ring
from .spec import FAMILIES, register_family
from .summary import (bisection_bandwidth, diameter, injection_bandwidth, normalize_injection,
                      summarize)
from .switched import full_mesh, nvswitch
from .trees import fat_tree, leaf_spine
from .calibration import calibrated_alpha, calibrated_gamma
from .catalogue import find_preset, preset_names
from . import clusters  # noqa: F401,E402  (registers the 'dgxcluster' spec family)

# Reading machines from text (spec strings, files, presets) pulls in pydantic (a few
# hundred ms): load it on first use, not on import.
_LAZY_IO = ("check_connected", "from_networkx", "load_topology_file", "load_yaml",
            "read_graphml", "save_topology_file", "to_graphml", "topology_file_schema",
            "parse_topology", "load_preset", "preset_table")


def __getattr__(name: str):
    if name in _LAZY_IO:
        from . import io

        return getattr(io, name)
    raise AttributeError(f"module 'netsim.topology' has no attribute {name!r}")


__all__ = [
    "Topology", "TopologyBuilder",
    "ring", "mesh", "torus", "fat_tree", "leaf_spine", "nvswitch", "full_mesh",
    "parse_topology", "register_family", "FAMILIES",
    "from_networkx", "to_graphml", "read_graphml", "load_topology_file", "load_yaml",
    "save_topology_file", "topology_file_schema", "check_connected",
    "summarize", "diameter", "bisection_bandwidth", "injection_bandwidth",
    "normalize_injection",
    "calibrated_alpha", "calibrated_gamma", "find_preset", "preset_names", "preset_table",
    "load_preset",
]
