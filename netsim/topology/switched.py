"""Single-hop machines: NVSwitch-style crossbars and fully connected meshes."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import TopologyError
from ..budget import require_topology
from ._generate import (DEFAULT_BANDWIDTH, DEFAULT_LATENCY, assemble, check_bandwidth,
                        check_latency, check_links, duplex, positive_int)
from .model import Topology

__all__ = ["nvswitch", "full_mesh"]


def _links_per_switch(links, links_per_switch, switches: int) -> tuple[int, ...]:
    if links is not None and links_per_switch is not None:
        raise TopologyError("nvswitch: give links or links_per_switch, not both")
    if links_per_switch is None:
        return (check_links(1 if links is None else links, "nvswitch"),) * switches
    if isinstance(links_per_switch, (int, np.integer)) and not isinstance(links_per_switch, bool):
        return (check_links(links_per_switch, "nvswitch"),) * switches
    counts = tuple(links_per_switch)
    if len(counts) != switches:
        raise TopologyError(f"nvswitch: links_per_switch must have one entry per switch "
                            f"({switches}), got {counts!r}")
    return tuple(positive_int(c, "links_per_switch", "nvswitch") for c in counts)


def nvswitch(gpus: int, *, switches: int = 1, bandwidth: float | str = DEFAULT_BANDWIDTH,
             latency: float | str = DEFAULT_LATENCY, links: int | None = None,
             links_per_switch: int | Sequence[int] | None = None, reduce: bool = False,
             reduce_bandwidth: float | str | None = None,
             name: str | None = None) -> Topology:
    """GPUs ``gpu0..`` each cabled to every one of ``switches`` switch planes ``sw0..``.

    Unlike the other generators, ``bandwidth`` is the **total per GPU per direction**
    (e.g. 450 GB/s for an H100), split evenly over all of the GPU's links: GPU-switch pair
    s gets ``links_per_switch[s]`` parallel links (planes) per direction, each of
    ``bandwidth / sum(links_per_switch)``. ``links`` (an int, default 1) is the same count
    for every switch; ``links_per_switch`` may give one count per switch instead.

    ``reduce=True`` marks every switch able to reduce in-network (NVLS / SHARP), with an
    optional ``reduce_bandwidth`` (bytes/s) node attribute. ``latency`` is s per link.
    Family ``'nvswitch'``, ``params={'gpus', 'switches', 'links_per_switch'}``.

    DGX H100: 18 NVLink4 links of 25 GB/s per GPU over 4 switches, split 5/4/4/5:

    >>> t = nvswitch(8, switches=4, bandwidth="450GB/s", links_per_switch=(5, 4, 4, 5),
    ...              reduce=True)
    >>> t.num_endpoints, t.num_switches, t.num_links, float(t.bandwidth[0])
    (8, 4, 288, 25000000000.0)
    """
    gpus = positive_int(gpus, "gpus", "nvswitch")
    switches = positive_int(switches, "switches", "nvswitch")
    require_topology(gpus + switches, 2 * gpus * switches, f"nvswitch:{gpus}")   # >= 1 plane
    total = check_bandwidth(bandwidth, "nvswitch")
    lat = check_latency(latency, "nvswitch")
    counts = _links_per_switch(links, links_per_switch, switches)
    switch_attrs: dict = {}
    if reduce:
        switch_attrs["reduce"] = True
        if reduce_bandwidth is not None:
            switch_attrs["reduce_bandwidth"] = check_bandwidth(reduce_bandwidth, "nvswitch",
                                                               "reduce_bandwidth")
    elif reduce_bandwidth is not None:
        raise TopologyError("nvswitch: reduce_bandwidth needs reduce=True")
    # Cables gpu g <-> switch s, repeated so each pair gets counts[s] planes.
    parts = [duplex(np.arange(gpus), np.full(gpus, gpus + s), c) for s, c in enumerate(counts)]
    src, dst, plane = (np.concatenate([p[i] for p in parts]) for i in range(3))
    names = [f"gpu{g}" for g in range(gpus)] + [f"sw{s}" for s in range(switches)]
    xs = np.concatenate([np.arange(gpus, dtype=float),
                         (np.arange(switches) + 0.5) * gpus / switches - 0.5])
    return assemble(
        name or f"nvswitch-{gpus}", "nvswitch",
        {"gpus": gpus, "switches": switches, "links_per_switch": counts}, names,
        src=src, dst=dst, bandwidth=total / sum(counts), latency=lat, plane=plane,
        is_switch=np.arange(gpus + switches) >= gpus,
        coords=[(0.0, float(x)) for x in xs[:gpus]] + [(1.0, float(x)) for x in xs[gpus:]],
        node_attrs=[{} for _ in range(gpus)] + [dict(switch_attrs) for _ in range(switches)])


def full_mesh(n: int, *, bandwidth: float | str = DEFAULT_BANDWIDTH,
              latency: float | str = DEFAULT_LATENCY, links: int = 1,
              name: str | None = None) -> Topology:
    """``n`` nodes ``n0..`` with a direct cable between every pair (n(n-1)/2 cables).

    ``bandwidth`` is bytes/s of each link in one direction (default 50 GB/s), ``latency``
    s per link; ``links=k`` makes k separate links per pair per direction, each of
    ``bandwidth`` (not one link of k x bandwidth). Family ``'full_mesh'``,
    ``params={'n': n}``.

    >>> t = full_mesh(8, bandwidth="100GB/s")
    >>> t.num_endpoints, t.num_links
    (8, 56)
    """
    n = positive_int(n, "n", "full_mesh", minimum=2)
    bw = check_bandwidth(bandwidth, "full_mesh")
    lat = check_latency(latency, "full_mesh")
    links = check_links(links, "full_mesh")
    require_topology(n, n * (n - 1) * links, f"full_mesh:{n}")
    a, b = np.triu_indices(n, k=1)
    src, dst, plane, _ = duplex(a, b, links)
    angle = 2 * np.pi * np.arange(n) / n  # drawn on a circle
    return assemble(name or f"full_mesh-{n}", "full_mesh", {"n": n},
                    [f"n{i}" for i in range(n)], src=src, dst=dst, bandwidth=bw, latency=lat,
                    plane=plane,
                    coords=[(float(np.sin(t)), float(np.cos(t))) for t in angle])
