"""SimGrid platform files (XML, ``<platform version="4.1">``) read as netsim machines.

SimGrid (simgrid.org) describes a platform as hosts, routers and links inside a zone, and
routes between them as lists of links (``<route src dst><link_ctn id/></route>``); a link
is a resource with no ends of its own. netsim places each link between two nodes by
following the routes: the first link of a route leaves its source, each next link leaves
where the previous one arrived, the last one arrives at the destination. Junctions that no
host or router names become switches. What is read:

* zones with ``routing`` Full, Floyd, Dijkstra, DijkstraCache or None, holding ``host``,
  ``router``, ``link`` (``bandwidth``, ``latency``, ``sharing_policy``) and ``route``
  (``symmetrical``, default YES: the reverse route uses the links backwards);
* ``cluster``: hosts ``prefix<i>suffix`` for ``radical`` (``0-15`` or ``0-3,8``), each on
  its private link (``bw``, ``lat``) to the cluster's router, through a backbone (``bb_bw``,
  ``bb_lat``) where one is given;
* units as SimGrid takes them: ``Bps kBps MBps GBps TBps``, ``KiBps MiBps GiBps TiBps``,
  the same in bits (``bps Mbps Gbps ...``); ``s ms us ns ps``.

A SPLITDUPLEX link is two directed links (``direction="UP"``/``"DOWN"``), as netsim's
links are. A SHARED link (SimGrid's default) has one capacity for both directions; where
routes use it both ways it becomes one directed link per direction, each at the full
bandwidth, and the topology says so in ``meta["notes"]``. FATPIPE links (no sharing at all),
nested zones (``zoneRoute``), ``bypassRoute`` and other elements are refused in one line.

>>> topo = topology_from_simgrid('''<platform version="4.1"><zone id="z" routing="Full">
...   <host id="a" speed="1Gf"/><host id="b" speed="1Gf"/>
...   <link id="l" bandwidth="10GBps" latency="1us" sharing_policy="SPLITDUPLEX"/>
...   <route src="a" dst="b"><link_ctn id="l" direction="UP"/></route>
... </zone></platform>''', "two.xml")
>>> topo.num_endpoints, topo.num_links, float(topo.bandwidth[0]), float(topo.latency[0])
(2, 2, 10000000000.0, 1e-06)
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ..errors import TopologyError

__all__ = ["is_simgrid_text", "topology_from_simgrid", "parse_rate", "parse_seconds"]

_RATE_UNITS = {"": 1.0}
for _prefix, _factor in (("", 1.0), ("k", 1e3), ("K", 1e3), ("M", 1e6), ("G", 1e9), ("T", 1e12),
                         ("Ki", 2.0**10), ("Mi", 2.0**20), ("Gi", 2.0**30), ("Ti", 2.0**40)):
    _RATE_UNITS[f"{_prefix}Bps"] = _factor
    _RATE_UNITS[f"{_prefix}bps"] = _factor / 8 if _factor >= 8 else -8.0
# a factor below 1 is kept as a divisor (50us = 50 / 1e6 exactly as written, not 50 x 1e-6)
_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": -1e3, "us": -1e6, "ns": -1e9, "ps": -1e12,
               "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")
_ROUTED = ("Full", "Floyd", "Dijkstra", "DijkstraCache", "None")


def _quantity(text: str | None, units: dict, what: str, where: str) -> float:
    match = _NUMBER.match(text or "")
    if match is None or match.group(2) not in units:
        raise TopologyError(f"{where}: {what}={text!r} is not a SimGrid {what} (e.g. "
                            f"{'125MBps' if units is _RATE_UNITS else '50us'})")
    factor = units[match.group(2)]
    value = float(match.group(1))
    return value / -factor if factor < 0 else value * factor


def parse_rate(text: str, where: str = "simgrid") -> float:
    """A SimGrid bandwidth in bytes/s: ``parse_rate('10Gbps') == 1.25e9``."""
    return _quantity(text, _RATE_UNITS, "bandwidth", where)


def parse_seconds(text: str, where: str = "simgrid") -> float:
    """A SimGrid latency in s: ``parse_seconds('50us') == 5e-05``."""
    return _quantity(text, _TIME_UNITS, "latency", where)


def is_simgrid_text(text: str) -> bool:
    """Does ``text`` look like a SimGrid platform (an XML document with ``<platform``)?"""
    head = text.lstrip()[:4096]
    return head.startswith("<") and "<platform" in head


def _root(text: str, source: str) -> ET.Element:
    # an internal DTD subset is where entity bombs live; SimGrid files only name the DTD
    doctype = re.search(r"<!DOCTYPE[^>]*", text)
    if "<!ENTITY" in text or (doctype and "[" in doctype.group(0)):
        raise TopologyError(f"{source}: entity declarations are not allowed in a platform file")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise TopologyError(f"{source}: invalid XML: {err}") from None
    if root.tag != "platform":
        raise TopologyError(f"{source}: the root element is <{root.tag}>, not <platform>")
    return root


class _Ends:
    """Union-find over link ends: where each directed link use leaves and arrives."""

    def __init__(self) -> None:
        self.parent: list[int] = []
        self.named: dict[int, str] = {}          # root -> host/router name

    def new(self, name: str | None = None) -> int:
        self.parent.append(len(self.parent))
        if name is not None:
            self.named[len(self.parent) - 1] = name
        return len(self.parent) - 1

    def find(self, x: int) -> int:
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: int, b: int, why: str) -> None:
        a, b = self.find(a), self.find(b)
        if a == b:
            return
        na, nb = self.named.get(a), self.named.get(b)
        if na is not None and nb is not None:
            raise TopologyError(f"{why}: the routes put {na!r} and {nb!r} at the same end of "
                                f"a link (routes that disagree about where a link is)")
        self.parent[b] = a
        if nb is not None:
            self.named[a] = nb


class _Platform:
    def __init__(self, source: str) -> None:
        self.source = source
        self.hosts: list[str] = []
        self.routers: list[str] = []
        self.node_end: dict[str, int] = {}
        self.links: dict[str, dict[str, Any]] = {}
        self.uses: dict[tuple[str, str], tuple[int, int]] = {}   # (link, way) -> (tail, head)
        self.ends = _Ends()
        self.table: list[tuple[str, str, list[tuple[str, str]]]] = []   # Full zones' routes
        self.full = False

    def node(self, name: str, *, host: bool, where: str) -> None:
        if name in self.node_end:
            raise TopologyError(f"{where}: id {name!r} is given twice")
        (self.hosts if host else self.routers).append(name)
        self.node_end[name] = self.ends.new(name)

    def link(self, name: str, bandwidth: float, latency: float, policy: str, where: str):
        if name in self.links:
            raise TopologyError(f"{where}: link id {name!r} is given twice")
        if policy not in ("SHARED", "SPLITDUPLEX", "FATPIPE"):
            raise TopologyError(f"{where}: sharing_policy={policy!r} is not SHARED, "
                                f"SPLITDUPLEX or FATPIPE")
        if bandwidth <= 0 or latency < 0:
            raise TopologyError(f"{where}: bandwidth must be > 0 and latency >= 0")
        self.links[name] = {"bandwidth": bandwidth, "latency": latency, "policy": policy}

    def use(self, name: str, way: str) -> tuple[int, int]:
        """The (tail, head) ends of link ``name`` crossed ``way`` (UP/DOWN for SPLITDUPLEX,
        fwd/bwd for SHARED)."""
        key = (name, way)
        if key not in self.uses:
            self.uses[key] = (self.ends.new(), self.ends.new())
        return self.uses[key]

    def route(self, src: str, dst: str, hops: list[tuple[str, str]], where: str) -> None:
        for end in (src, dst):
            if end not in self.node_end:
                raise TopologyError(f"{where}: {end!r} is not a host or router of this zone")
        if src == dst or not hops:
            return
        if self.full:
            self.table.append((src, dst, hops))
        at = self.node_end[src]
        for name, way in hops:
            tail, head = self.use(name, way)
            self.ends.union(at, tail, where)
            at = head
        self.ends.union(at, self.node_end[dst], where)


def _hops(route: ET.Element, p: _Platform, where: str) -> list[tuple[str, str]]:
    hops = []
    for ctn in route:
        if ctn.tag != "link_ctn":
            raise TopologyError(f"{where}: <{ctn.tag}> inside a route (only link_ctn)")
        name = ctn.get("id")
        if name not in p.links:
            raise TopologyError(f"{where}: link_ctn id={name!r} is not a link of this zone")
        policy = p.links[name]["policy"]
        if policy == "FATPIPE":
            raise TopologyError(f"{where}: link {name!r} is FATPIPE (each flow at the full "
                                f"bandwidth, no sharing), which flow sharing cannot express")
        if policy == "SPLITDUPLEX":
            way = (ctn.get("direction") or "").upper()
            if way not in ("UP", "DOWN"):
                raise TopologyError(f"{where}: SPLITDUPLEX link {name!r} needs "
                                    f"direction=\"UP\" or \"DOWN\"")
        else:
            way = "fwd"
        hops.append((name, way))
    return hops


def _reverse(hops: list[tuple[str, str]]) -> list[tuple[str, str]]:
    flip = {"UP": "DOWN", "DOWN": "UP", "fwd": "bwd", "bwd": "fwd"}
    return [(name, flip[way]) for name, way in reversed(hops)]


def _radical(text: str | None, where: str) -> list[int]:
    out: list[int] = []
    for part in (text or "").split(","):
        lo, _, hi = part.strip().partition("-")
        try:
            a, b = int(lo), int(hi or lo)
        except ValueError:
            raise TopologyError(f"{where}: radical={text!r} is not like '0-15' or "
                                f"'0-3,8'") from None
        out += range(a, b + 1)
    if not out or len(out) > 1 << 20:
        raise TopologyError(f"{where}: radical={text!r} gives {len(out)} hosts "
                            f"(1 to 2^20)")
    return out


def _cluster(el: ET.Element, p: _Platform, where: str) -> None:
    cid = el.get("id") or "cluster"
    prefix, suffix = el.get("prefix", ""), el.get("suffix", "")
    bw = parse_rate(el.get("bw"), where)
    lat = parse_seconds(el.get("lat", "0s"), where)
    policy = el.get("sharing_policy", "SPLITDUPLEX").upper()
    router = el.get("router_id") or f"{prefix}{cid}_router{suffix}"
    p.node(router, host=False, where=where)
    hub_in = hub_out = router
    if el.get("bb_bw") is not None:
        bb_policy = el.get("bb_sharing_policy", "SHARED").upper()
        p.link(f"{cid}_backbone", parse_rate(el.get("bb_bw"), where),
               parse_seconds(el.get("bb_lat", "0s"), where), bb_policy, where)
        if bb_policy == "FATPIPE":
            raise TopologyError(f"{where}: bb_sharing_policy=FATPIPE (no sharing on the "
                                f"backbone) cannot be expressed by flow sharing")
        # every route crosses the backbone the same way: one resource for all flows
        hub_out = f"{cid}_backbone_out"
        p.node(hub_out, host=False, where=where)
        p.route(hub_in, hub_out, [(f"{cid}_backbone", "fwd")], where)
    for i in _radical(el.get("radical"), where):
        host = f"{prefix}{i}{suffix}"
        p.node(host, host=True, where=where)
        name = f"{cid}_link_{i}"
        p.link(name, bw, lat, policy, where)
        if policy == "FATPIPE":
            raise TopologyError(f"{where}: sharing_policy=FATPIPE cannot be expressed by flow "
                                f"sharing")
        up, down = ("UP", "DOWN") if policy == "SPLITDUPLEX" else ("fwd", "bwd")
        p.route(host, hub_in, [(name, up)], where)
        p.route(hub_out, host, [(name, down)], where)


def _zone(zone: ET.Element, p: _Platform) -> None:
    zid = zone.get("id", "?")
    routing = zone.get("routing", "None")
    where = f"{p.source}: zone {zid!r}"
    if zone.tag == "cluster":
        _cluster(zone, p, where)
        return
    if routing not in _ROUTED:
        raise TopologyError(f"{where}: routing={routing!r} is not read (Full, Floyd, Dijkstra, "
                            f"DijkstraCache, None; or a <cluster>)")
    routes = []
    p.full = routing == "Full"
    for el in zone:
        tag = el.tag
        here = f"{where}: <{tag} id={el.get('id')!r}>" if el.get("id") else f"{where}: <{tag}>"
        if tag == "host":
            p.node(el.get("id"), host=True, where=here)
        elif tag == "router":
            p.node(el.get("id"), host=False, where=here)
        elif tag == "link":
            p.link(el.get("id"), parse_rate(el.get("bandwidth"), here),
                   parse_seconds(el.get("latency", "0s"), here),
                   el.get("sharing_policy", "SHARED").upper(), here)
        elif tag == "route":
            routes.append(el)
        elif tag in ("prop", "trace", "trace_connect"):
            continue
        elif tag in ("cluster",):
            full, p.full = p.full, False
            _cluster(el, p, here)
            p.full = full
        else:
            raise TopologyError(f"{here}: <{tag}> is not read (nested zones, zoneRoute, "
                                f"bypassRoute, peers and the like are not supported)")
    for el in routes:
        here = f"{where}: route {el.get('src')!r} -> {el.get('dst')!r}"
        hops = _hops(el, p, here)
        p.route(el.get("src"), el.get("dst"), hops, here)
        if (el.get("symmetrical") or "YES").upper() in ("YES", "TRUE", "1"):
            p.route(el.get("dst"), el.get("src"), _reverse(hops), here)


def topology_from_simgrid(text: str, source: str = "simgrid platform"):
    """A netsim machine from the text of a SimGrid platform file (see the module)."""
    from .model import TopologyBuilder

    root = _root(text, source)
    zones = [el for el in root if el.tag in ("zone", "AS", "cluster")]
    others = [el.tag for el in root if el.tag not in ("zone", "AS", "cluster", "config", "prop")]
    if len(zones) != 1 or others:
        raise TopologyError(f"{source}: expected one <zone> (or <cluster>) in <platform>, got "
                            f"{', '.join(el.tag for el in root) or 'nothing'}")
    p = _Platform(source)
    _zone(zones[0], p)
    if not p.hosts:
        raise TopologyError(f"{source}: no hosts")
    name = Path(source).stem or "simgrid"
    b = TopologyBuilder(name, "custom")
    node_of: dict[int, int] = {}
    for host in p.hosts:
        node_of[p.ends.find(p.node_end[host])] = b.add_node(host)
    for router in p.routers:
        node_of[p.ends.find(p.node_end[router])] = b.add_node(router, switch=True)
    both_ways = {name for name, way in p.uses if way == "bwd"} & \
        {name for name, way in p.uses if way == "fwd"}
    link_id: dict[tuple[str, str], int] = {}
    for (link, way), (tail, head) in p.uses.items():
        ends = []
        for end in (tail, head):
            root_end = p.ends.find(end)
            if root_end not in node_of:         # a junction no host or router names
                node_of[root_end] = b.add_node(f"_j{len(node_of)}", switch=True)
            ends.append(node_of[root_end])
        if ends[0] == ends[1]:
            continue
        spec = p.links[link]
        suffix = {"UP": "", "DOWN": "_DOWN", "fwd": "", "bwd": "_back"}[way]
        link_id[(link, way)] = b.add_link(ends[0], ends[1], spec["bandwidth"],
                                          spec["latency"], name=link + suffix)
    b.set_endpoints([node_of[p.ends.find(p.node_end[h])] for h in p.hosts])
    if both_ways:
        b.meta["notes"] = [f"{len(both_ways)} SHARED links (one capacity for both directions "
                           f"in SimGrid) are used both ways: read as one link per direction "
                           f"at the full bandwidth (e.g. {sorted(both_ways)[0]!r})"]
    if p.table:              # a Full zone's routes are the machine's: netsim follows them
        from .routes import route_table

        node = {name: node_of[p.ends.find(end)] for name, end in p.node_end.items()}
        b.meta["routes"] = route_table(
            (node[src], node[dst], [link_id[h] for h in hops if h in link_id])
            for src, dst, hops in p.table)
    b.meta["source_file"] = source
    return b.build()
