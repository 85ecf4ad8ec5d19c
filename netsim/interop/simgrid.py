"""netsim machines written as SimGrid platform files (the reader is
:mod:`netsim.topology.simgrid`, so every ``--topo`` takes a platform file).

Endpoints become hosts and the other nodes routers, in one zone. A pair of nodes joined
both ways by links of one bandwidth and latency becomes one ``SPLITDUPLEX`` link (``UP``
one way, ``DOWN`` the other), as netsim's links are directed; a one-way link becomes a
``SHARED`` link that routes cross one way only, which is the same thing. Parallel links
between a pair (planes) are one link of their summed bandwidth, the rate netsim's default
spraying gives a flow over them.

Routes are netsim's own: with up to ``full_routes`` ordered endpoint pairs the zone is
``routing="Full"`` with the path netsim's router takes for every pair (a pair that netsim
sprays over several equal-cost paths gets the first, noted); above that it is ``Floyd``
with one route per link, and SimGrid then takes its own shortest paths (noted).

SimGrid's default network model adds TCP factors to max-min sharing; the file's comment
says how to run SimGrid on the plain max-min model netsim computes (CM02, no
cross-traffic, tight precisions). CM02 still divides a link in inverse proportion to each
flow's route latency (TCP's RTT unfairness), so the two agree exactly on platforms without
latency, or where the flows sharing a link have equal route latencies: 100 random flows
with staggered starts finish within 1e-12 of SimGrid 3.32's times on a torus, a mesh and a
switch (tests/test_simgrid_crosscheck.py).

>>> from netsim.topology import parse_topology
>>> text, notes = simgrid_platform(parse_topology("ring:4,bw=10GB/s,lat=1us"))
>>> text.count("<host "), text.count('sharing_policy="SPLITDUPLEX"'), text.count("<route ")
(4, 4, 12)
>>> from netsim.topology.simgrid import topology_from_simgrid
>>> back = topology_from_simgrid(text, "ring.xml")
>>> back.num_endpoints, back.num_links, float(back.bandwidth.max())
(4, 8, 10000000000.0)
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import numpy as np

from ..errors import TopologyError

__all__ = ["simgrid_platform"]


def _pairs(topo):
    """Directed node pairs with their summed bandwidth and common latency."""
    pair: dict[tuple[int, int], list[int]] = {}
    for lid, (s, d) in enumerate(zip(topo.link_src.tolist(), topo.link_dst.tolist())):
        pair.setdefault((s, d), []).append(lid)
    out = {}
    for key, links in pair.items():
        lat = np.unique(topo.latency[links])
        if lat.size != 1:
            raise TopologyError(f"{topo.name}: cannot be written as a SimGrid platform: the "
                                f"parallel links {topo.node_names[key[0]]!r} -> "
                                f"{topo.node_names[key[1]]!r} differ in latency")
        out[key] = (float(topo.bandwidth[links].sum()), float(lat[0]), len(links))
    return out


def simgrid_platform(topo, *, full_routes: int = 16384) -> tuple[str, list[str]]:
    """``topo`` as a SimGrid platform (XML text, version 4.1) and the approximations made,
    one sentence each (see the module)."""
    from ..routing import default_router, route

    names = topo.node_names
    pairs = _pairs(topo)
    notes: list[str] = []
    if any(count > 1 for _, _, count in pairs.values()):
        notes.append("parallel links between a pair (planes) are one link of their summed "
                     "bandwidth")
    resource: dict[tuple[int, int], tuple[str, str]] = {}     # pair -> (link id, direction)
    lines = []
    for (s, d), (bw, lat, _) in sorted(pairs.items()):
        if (s, d) in resource:
            continue
        back = pairs.get((d, s))
        if back is not None and back[:2] == (bw, lat):
            name = f"{names[s]}--{names[d]}"
            resource[(s, d)], resource[(d, s)] = (name, "UP"), (name, "DOWN")
            policy = "SPLITDUPLEX"
        else:
            name = f"{names[s]}-to-{names[d]}"
            resource[(s, d)] = (name, "")
            policy = "SHARED"
        lines.append(f'    <link id={quoteattr(name)} bandwidth="{bw!r}Bps" '
                     f'latency="{lat!r}s" sharing_policy="{policy}"/>')
    ends = topo.endpoints
    hosts = set(ends.tolist())
    n = len(ends)
    routes = []
    full = n * (n - 1) <= full_routes
    if full:
        src = np.repeat(ends, n)
        dst = np.tile(ends, n)
        keep = src != dst
        src, dst = src[keep], dst[keep]
        r = route(topo, src, dst, router=default_router(topo))
        sprayed = 0
        for i in range(len(src)):
            first = int(r.sub_ptr[i])
            hops = r.path(first)
            node_paths = {tuple(topo.link_src[r.path(s)].tolist())
                          for s in range(first, int(r.sub_ptr[i + 1]))}
            sprayed += len(node_paths) > 1
            routes.append(_route(names[src[i]], names[dst[i]],
                                 [resource[(int(topo.link_src[h]), int(topo.link_dst[h]))]
                                  for h in hops]))
        for (s, d), ctn in sorted(resource.items()):   # name the routers at link ends
            if s not in hosts or d not in hosts:
                routes.append(_route(names[s], names[d], [ctn]))
        if sprayed:
            notes.append(f"{sprayed} endpoint pairs are sprayed over several equal-cost paths "
                         f"in netsim; SimGrid follows the first")
    else:
        for (s, d), ctn in sorted(resource.items()):
            routes.append(_route(names[s], names[d], [ctn]))
        notes.append(f"{n} endpoints: routes are one per link (routing Floyd), so SimGrid "
                     f"takes its own shortest paths, which may differ from netsim's router")
    nodes = [f'    <host id={quoteattr(names[i])} speed="1Gf"/>' for i in ends.tolist()]
    nodes += [f"    <router id={quoteattr(names[i])}/>" for i in range(topo.num_nodes)
              if i not in hosts]
    comment = (f"netsim machine {topo.name}: {n} hosts, links directed as in netsim. For the "
               f"max-min sharing netsim computes, run SimGrid with network/model:CM02, "
               f"network/crosstraffic:0, maxmin/precision:1e-13 and surf/precision:1e-13 "
               f"(CM02 weights flows by route latency: equal on a platform without latency)")
    for note in notes:
        comment += f"; note: {note}"
    text = ("<?xml version='1.0'?>\n"
            '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
            '<platform version="4.1">\n'
            f"  <!-- {comment.replace('--', '- -')} -->\n"
            f'  <zone id={quoteattr(topo.name)} routing="{"Full" if full else "Floyd"}">\n'
            + "\n".join(nodes + lines + routes) + "\n  </zone>\n</platform>\n")
    return text, notes


def _route(src: str, dst: str, hops) -> str:
    ctns = "".join(f"<link_ctn id={quoteattr(name)}"
                   + (f' direction="{way}"' if way else "") + "/>" for name, way in hops)
    return (f"    <route src={quoteattr(src)} dst={quoteattr(dst)} "
            f'symmetrical="NO">{ctns}</route>')
