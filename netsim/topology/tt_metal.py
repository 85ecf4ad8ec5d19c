"""tt-metal's own machine descriptions read as netsim machines.

tt-metal (github.com/tenstorrent/tt-metal) describes a Tenstorrent machine in two files:

* a **cluster descriptor** (YAML, written by UMD's ``topology`` tool and by
  ``ttnn.cluster.serialize_cluster_descriptor()``): ``arch`` per chip, ``chips`` (each chip's
  Ethernet coordinates ``[x, y, rack, shelf]``; empty on Blackhole), ``ethernet_connections``
  (one entry per cable: ``[{chip, chan}, {chip, chan}]``) and ``chips_with_mmio`` (the chips
  on PCIe);
* a **mesh graph descriptor** (``tt_metal/fabric/mesh_graph_descriptors/``): the fabric's
  logical mesh, as YAML (``ChipSpec: {arch, ethernet_ports: {N, E, S, W}}``, ``Board``,
  ``Mesh``, ``Graph``) or as textproto (``mesh_descriptors { arch, device_topology { dims,
  dim_types }, channels { count } }``, ``top_level_instance``).

Either becomes a netsim machine with the Ethernet link rate and per-hop latency of its
chip generation (:data:`ARCHS`) and the calibration and library block of the matching
preset (``t3000`` for Wormhole, ``galaxy-bh`` for Blackhole), so that the descriptor of a
T3000 gives the same times as ``--topo t3000``:

* chips become the nodes of a grid. A cluster descriptor's chip at Ethernet coordinates
  (x, y) is node ``y_x`` (row y, column x). Where the cables are exactly the grid's
  neighbour pairs (with the wrap-around pairs of a torus), each with the same number of
  cables, the machine is ``mesh:RxC`` (or ``torus:RxC``) with that many parallel links;
  otherwise (or without coordinates) chip ``i`` is node ``chip<i>`` and every cable is a
  link of its own (``count`` parallel links per chip pair); a chip without a cable is
  refused;
* a mesh graph descriptor's ``device_topology`` dims are rows x columns; ``dim_types``
  RING wraps that dimension; ``channels.count`` (textproto) or the fewest
  ``ethernet_ports`` of a side (YAML) is the parallel links per neighbour pair;
* ``num_links`` (tt-metal's routing planes, the library block's option): where some chips
  are reached over an Ethernet tunnel instead of PCIe, one plane of every hop is reserved
  for fast dispatch (tt-metal tech_reports/CCLs/CCL_bandwidth.md, "Links available"), so a
  cluster descriptor with chips outside ``chips_with_mmio`` gets one link fewer than its
  cables. A mesh graph descriptor does not say which chips are on PCIe: Wormhole machines
  of 2 to 8 chips are built of n300 cards (n300, T3000), whose second chip is reached over
  Ethernet, so they get one link fewer; larger Wormhole machines (Galaxy) and Blackhole
  ones keep every link, as the galaxy-wh and galaxy-bh presets do.

Inter-mesh graphs (several meshes joined by ``Graph`` connections or ``graph_descriptors``)
are refused in one line.

>>> from netsim.topology.io import topology_from_dict
>>> doc = document_from_tt_metal_text('''
... mesh_descriptors {
...   name: "M0" arch: WORMHOLE_B0
...   device_topology { dims: [ 2, 4 ] }
...   host_topology { dims: [ 1, 1 ] }
...   channels { count: 2 policy: RELAXED }
... }
... top_level_instance { mesh { mesh_descriptor: "M0" mesh_id: 0 } }''', "t3k.textproto")
>>> doc["generator"]
'mesh:2x4,bw=12.5GB/s,lat=711ns,links=2'
>>> topo = topology_from_dict(doc, "t3k.textproto")
>>> topo.family, topo.params["dims"], topo.meta["library"]["options"]["num_links"]
('mesh', (2, 4), 1)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import TopologyError

__all__ = ["ARCHS", "is_tt_metal_data", "is_mesh_graph_textproto", "document_from_tt_metal",
           "document_from_tt_metal_text", "parse_textproto"]

#: Chip generation -> (Ethernet rate per link per direction, per-hop latency of the 1D fabric,
#: preset whose calibration and library block apply). Rates and latencies: tt-metal
#: tech_reports/CCLs/CCL_bandwidth.md ("Line rate": Wormhole 100 Gb/s = 12.5 GB/s;
#: Blackhole links "currently run at half their rated speed", 25 GB/s of 50; "Latency":
#: 711 ns and 515 ns per hop), as the presets t3000 and galaxy-bh state them.
ARCHS: dict[str, tuple[str, str, str]] = {
    "wormhole": ("12.5GB/s", "711ns", "t3000"),
    "blackhole": ("25GB/s", "515ns", "galaxy-bh"),
}


def _arch(value: Any, where: str) -> str:
    """'wormhole' or 'blackhole' from tt-metal's spellings (wormhole_b0, WORMHOLE_B0, ...)."""
    text = str(value).strip().lower()
    for arch in ARCHS:
        if text.startswith(arch):
            return arch
    raise TopologyError(f"{where}: arch={value!r} is not a chip netsim knows "
                        f"(allowed: {', '.join(ARCHS)})")


def is_tt_metal_data(data: Any) -> bool:
    """Whether parsed YAML is a tt-metal cluster descriptor or mesh graph descriptor."""
    return isinstance(data, dict) and (
        ("ethernet_connections" in data and "chips" in data)
        or ("ChipSpec" in data and "Mesh" in data))


def is_mesh_graph_textproto(text: str) -> bool:
    """Whether ``text`` is a mesh graph descriptor in textproto form."""
    return re.search(r"^\s*mesh_descriptors\s*\{", text, re.MULTILINE) is not None


# -- textproto -----------------------------------------------------------------------------

_TOKEN = re.compile(r'\s*(?:#[^\n]*|"((?:[^"\\]|\\.)*)"|([{}\[\]:,;])|([^\s{}\[\]:,;"#]+))')


def _tokens(text: str, source: str) -> list[tuple[str, str]]:
    out, at = [], 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            if text[at:].strip():
                raise TopologyError(f"{source}: cannot read textproto at {text[at:at + 20]!r}")
            break
        at = match.end()
        if match.group(1) is not None:
            out.append(("str", match.group(1)))
        elif match.group(2):
            out.append(("sym", match.group(2)))
        elif match.group(3):
            out.append(("word", match.group(3)))
    return out


def _scalar(kind: str, text: str) -> Any:
    if kind == "str":
        return text
    try:
        return int(text)
    except ValueError:
        return text


def parse_textproto(text: str, source: str = "textproto") -> dict[str, list]:
    """A protobuf text-format message as ``{field: [values]}`` (messages as nested dicts,
    repeated fields and ``[a, b]`` lists in order).

    >>> parse_textproto('a { dims: [ 2, 4 ] } b: "x" b: "y"')
    {'a': [{'dims': [2, 4]}], 'b': ['x', 'y']}
    """
    tokens = _tokens(text, source)
    at = 0

    def fail(what: str) -> TopologyError:
        near = " ".join(t for _, t in tokens[max(at - 3, 0):at + 2])
        return TopologyError(f"{source}: textproto: {what} near {near!r}")

    def message(closing: bool) -> dict[str, list]:
        nonlocal at
        fields: dict[str, list] = {}
        while at < len(tokens):
            kind, text_ = tokens[at]
            if kind == "sym" and text_ in ",;":     # optional separators between fields
                at += 1
                continue
            if kind == "sym" and text_ == "}":
                if not closing:
                    raise fail("unbalanced '}'")
                at += 1
                return fields
            if kind != "word":
                raise fail("expected a field name")
            at += 1
            if at < len(tokens) and tokens[at] == ("sym", ":"):
                at += 1
            if at >= len(tokens):
                raise fail(f"field {text_} has no value")
            kind2, value = tokens[at]
            if (kind2, value) == ("sym", "{"):
                at += 1
                fields.setdefault(text_, []).append(message(True))
            elif (kind2, value) == ("sym", "["):
                at += 1
                items = []
                while at < len(tokens) and tokens[at] != ("sym", "]"):
                    if tokens[at] != ("sym", ","):
                        items.append(_scalar(*tokens[at]))
                    at += 1
                if at >= len(tokens):
                    raise fail("unclosed '['")
                at += 1
                fields.setdefault(text_, []).extend(items)
            elif kind2 in ("str", "word"):
                at += 1
                fields.setdefault(text_, []).append(_scalar(kind2, value))
            else:
                raise fail(f"field {text_} has no value")
        if closing:
            raise fail("unclosed '{'")
        return fields

    return message(False)


# -- the machine ---------------------------------------------------------------------------

def _preset_blocks(arch: str) -> tuple[dict, dict, list]:
    """(calibration, library, sources) of the preset that models chips of ``arch``."""
    from .._inputs.yamlio import load_yaml
    from .catalogue import find_preset

    path = find_preset(ARCHS[arch][2])
    if path is None:
        return {}, {}, []
    data, _ = load_yaml(path.read_text(), str(path))
    return (dict(data.get("calibration") or {}), dict(data.get("library") or {}),
            list(data.get("sources") or []))


def _machine(name: str, arch: str, dims: tuple[int, int], wraps: tuple[bool, bool],
             links: int, reserved: bool, source: str, note: str,
             cables: dict[tuple[str, str], int] | None = None):
    """The machine as a topology file's content (read by :func:`netsim.topology.io.
    topology_from_dict`): a generated grid, or explicit ``cables`` where they are not one."""
    rate, latency, preset = ARCHS[arch]
    calibration, library, sources = _preset_blocks(arch)
    if library:
        options = {k: v for k, v in dict(library.get("options") or {}).items()
                   if k != "num_links"}
        fewest = min(cables.values()) if cables else links
        if reserved and fewest > 1:
            options["num_links"] = fewest - 1
        library["options"] = options
        if not options:
            library.pop("options")
    data: dict[str, Any] = {
        "name": name,
        "description": f"tt-metal descriptor {Path(source).name}: {note}",
        "sources": [f"tt-metal descriptor {source}",
                    f"link rate, latency, calibration and library: preset {preset}", *sources],
        "calibration": calibration,
    }
    if library:
        data["library"] = library
    if cables is None:
        family = "torus" if all(w or d < 3 for w, d in zip(wraps, dims)) and any(wraps) \
            else "mesh"
        data["generator"] = f"{family}:{dims[0]}x{dims[1]},bw={rate},lat={latency},links={links}"
    else:
        # numbers in names compare as numbers: chip2 before chip10, 1_2 before 1_10
        nodes = sorted({n for pair in cables for n in pair},
                       key=lambda n: tuple((0, int(p), "") if p.isdigit() else (1, 0, p)
                                           for p in re.findall(r"\d+|\D+", n)))
        data["nodes"] = [{"name": n} for n in nodes]
        data["defaults"] = {"bandwidth": rate, "latency": latency}
        data["links"] = [{"src": a, "dst": b, "count": c} for (a, b), c in sorted(cables.items())]
    return data


def _grid_cables(dims: tuple[int, int], wraps: tuple[bool, bool], links: int
                 ) -> dict[tuple[str, str], int]:
    rows, cols = dims
    out: dict[tuple[str, str], int] = {}
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols or (wraps[1] and cols > 2):
                out[_pair(f"{r}_{c}", f"{r}_{(c + 1) % cols}")] = links
            if r + 1 < rows or (wraps[0] and rows > 2):
                out[_pair(f"{r}_{c}", f"{(r + 1) % rows}_{c}")] = links
    return out


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


def _mesh_or_cables(name, arch, dims, wraps, links, reserved, source, note):
    """A grid of uniform links; one wrapped dimension only goes as explicit cables."""
    mixed = any(wraps) and not all(w or d < 3 for w, d in zip(wraps, dims))
    cables = _grid_cables(dims, wraps, links) if mixed else None
    return _machine(name, arch, dims, wraps, links, reserved, source, note, cables)


def _cluster(data: dict, source: str):
    """A cluster descriptor (chips, ethernet_connections, chips_with_mmio)."""
    chips = data.get("chips") or {}
    arch_of = data.get("arch") or {}
    if not isinstance(chips, dict) or not isinstance(arch_of, dict):
        raise TopologyError(f"{source}: chips, arch: expected mappings of chip id -> "
                            f"[x, y, rack, shelf] and chip id -> arch, got {chips!r}, {arch_of!r}")
    ids = sorted({int(c) for c in chips} | {int(c) for c in arch_of})
    if not ids:
        raise TopologyError(f"{source}: arch: no chips")
    archs = {_arch(v, f"{source}: arch.{k}") for k, v in arch_of.items()}
    if len(archs) != 1:
        raise TopologyError(f"{source}: arch: expected one chip generation for every chip, "
                            f"got {sorted(archs) or 'none'}")
    arch = archs.pop()
    # Ethernet coordinates: Wormhole descriptors give them; Blackhole ones leave chips empty
    coords: dict[int, tuple[int, ...]] = {}
    for chip, coord in chips.items():
        if not (isinstance(coord, list) and len(coord) >= 2
                and all(isinstance(v, int) for v in coord)):
            raise TopologyError(f"{source}: chips.{chip}: expected [x, y, rack, shelf], "
                                f"got {coord!r}")
        coords[int(chip)] = tuple(coord)
    racks = {c[2:] for c in coords.values()}
    by_xy = {(c[0], c[1]) for c in coords.values()}
    gridded = len(coords) == len(ids) and len(racks) == 1 and len(by_xy) == len(coords)
    if gridded:
        xs, ys = sorted({x for x, _ in by_xy}), sorted({y for _, y in by_xy})
        node = {chip: f"{ys.index(c[1])}_{xs.index(c[0])}" for chip, c in coords.items()}
    else:
        node = {chip: f"chip{chip}" for chip in ids}
    cables: dict[tuple[str, str], int] = {}
    for i, conn in enumerate(data.get("ethernet_connections") or []):
        ends = [e for e in conn if isinstance(e, dict) and "chip" in e] \
            if isinstance(conn, list) else []
        if len(ends) != 2 or any(int(e["chip"]) not in node for e in ends):
            raise TopologyError(f"{source}: ethernet_connections[{i}]: expected two "
                                f"{{chip, chan}} ends on chips of 'chips', got {conn!r}")
        a, b = (node[int(e["chip"])] for e in ends)
        if a != b:
            key = _pair(a, b)
            cables[key] = cables.get(key, 0) + 1
    mmio = set()
    for entry in data.get("chips_with_mmio") or []:
        mmio |= {int(k) for k in (entry if isinstance(entry, dict) else {entry: 0})}
    reserved = bool(mmio) and any(chip not in mmio for chip in ids)
    note = ", ".join(f"chip {chip} = {node[chip]}" for chip in ids) if gridded else \
        "chips named chip<id>"
    name = Path(source).stem
    if gridded:
        dims = (len(ys), len(xs))
        counts = set(cables.values())
        if len(counts) == 1 and len(coords) == dims[0] * dims[1]:
            links = counts.pop()
            for wraps in ((False, False), (True, True)):
                if cables == _grid_cables(dims, wraps, links):
                    return _machine(name, arch, dims, wraps, links, reserved, source,
                                    f"{dims[0]}x{dims[1]} chips; {note}")
    if not cables and len(ids) == 1:
        return _machine(name, arch, (1, 1), (False, False), 1, False, source, note)
    linked = {n for pair in cables for n in pair}
    if len(linked) < len(ids):
        alone = [chip for chip in ids if node[chip] not in linked]
        raise TopologyError(f"{source}: ethernet_connections: chip {alone[0]} has no "
                            f"Ethernet link to another chip ({len(alone)} such chips)")
    return _machine(name, arch, (0, 0), (False, False), 0, reserved, source,
                    f"{len(ids)} chips; {note}", cables)


def _tunnelled(arch: str, dims) -> bool:
    """Whether a mesh graph descriptor's machine reaches some chips over Ethernet tunnels:
    Wormhole machines of n300 cards (2 to 8 chips)."""
    return arch == "wormhole" and 1 < dims[0] * dims[1] <= 8


def _mesh_graph_yaml(data: dict, source: str):
    """A mesh graph descriptor in YAML (ChipSpec, Board, Mesh, Graph)."""
    spec = data.get("ChipSpec") or {}
    arch = _arch(spec.get("arch"), f"{source}: ChipSpec.arch")
    ports = spec.get("ethernet_ports") or {}
    counts = [int(v) for v in ports.values() if isinstance(v, int) and v > 0] \
        if isinstance(ports, dict) else []
    if not counts:
        raise TopologyError(f"{source}: ChipSpec.ethernet_ports: expected counts per side "
                            f"(N, E, S, W), got {ports!r}")
    meshes = data.get("Mesh") or []
    if len(meshes) != 1 or data.get("Graph"):
        raise TopologyError(f"{source}: Mesh/Graph: netsim reads one mesh (got "
                            f"{len(meshes)} meshes and {len(data.get('Graph') or [])} "
                            f"inter-mesh connections)")
    mesh = meshes[0]
    boards = {b.get("name"): b for b in data.get("Board") or [] if isinstance(b, dict)}
    board = boards.get(mesh.get("board"), {})
    dims = mesh.get("device_topology") or board.get("topology")
    if not (isinstance(dims, list) and len(dims) == 2 and all(isinstance(d, int) and d > 0
                                                             for d in dims)):
        raise TopologyError(f"{source}: Mesh[0].device_topology: expected [rows, columns], "
                            f"got {dims!r}")
    torus = str(board.get("type", "Mesh")).upper() in ("TORUS", "TORUS_2D")
    return _mesh_or_cables(Path(source).stem, arch, tuple(dims), (torus, torus), min(counts),
                           _tunnelled(arch, dims), source,
                           f"{dims[0]}x{dims[1]} {'torus' if torus else 'mesh'}")


def document_from_tt_metal_text(text: str, source: str = "tt-metal descriptor") -> dict:
    """A mesh graph descriptor in textproto form as a netsim topology file's content."""
    msg = parse_textproto(text, source)
    meshes = msg.get("mesh_descriptors") or []
    top = (msg.get("top_level_instance") or [{}])[0]
    if len(meshes) != 1 or msg.get("graph_descriptors") or "mesh" not in top:
        raise TopologyError(f"{source}: top_level_instance: netsim reads one mesh (got "
                            f"{len(meshes)} mesh_descriptors, "
                            f"{len(msg.get('graph_descriptors') or [])} graph_descriptors)")
    mesh = meshes[0]
    name = (mesh.get("name") or ["mesh"])[0]
    arch = _arch((mesh.get("arch") or [None])[0], f"{source}: mesh_descriptors {name}: arch")
    topo = (mesh.get("device_topology") or [{}])[0]
    dims = topo.get("dims") or []
    if not (len(dims) == 2 and all(isinstance(d, int) and d > 0 for d in dims)):
        raise TopologyError(f"{source}: mesh_descriptors {name}: device_topology.dims: "
                            f"expected [rows, columns], got {dims!r}")
    types = [str(t).upper() for t in (topo.get("dim_types") or ["LINE", "LINE"])]
    wraps = tuple(t == "RING" for t in types) + (False,) * (2 - len(types))
    channels = (mesh.get("channels") or [{}])[0]
    links = (channels.get("count") or [1])[0]
    if not isinstance(links, int) or links < 1:
        raise TopologyError(f"{source}: mesh_descriptors {name}: channels.count: expected an "
                            f"integer >= 1, got {links!r}")
    kinds = "x".join("ring" if w else "line" for w in wraps[:2])
    return _mesh_or_cables(Path(source).stem, arch, (dims[0], dims[1]), wraps[:2], links,
                           _tunnelled(arch, dims), source,
                           f"{dims[0]}x{dims[1]} ({kinds}), {links} channels")


def document_from_tt_metal(data: dict, source: str = "tt-metal descriptor") -> dict:
    """A cluster descriptor or a YAML mesh graph descriptor (parsed) as a netsim topology
    file's content."""
    if "ChipSpec" in data:
        return _mesh_graph_yaml(data, source)
    return _cluster(data, source)
