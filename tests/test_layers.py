"""The folders are the layers: no module imports a layer above its own.

The order is the one ``docs/architecture.md`` states. Every import is read from the source
(ast), including imports inside functions, so a lazy import cannot hide an upward edge.
"""

from __future__ import annotations

import ast
from pathlib import Path

import netsim

PACKAGE = Path(netsim.__file__).parent

#: Layer of each top-level module or package of netsim, bottom (0) to top.
LAYERS = {
    "errors": 0, "units": 0, "outputs": 0, "budget": 0, "_inputs": 0,
    "interrupts": 0, "kept": 0,
    "topology": 1,
    "routing": 2, "schedule": 2,
    "engine": 3, "packet": 3,
    "algorithms": 4, "placement": 4, "report": 4, "interop": 4,
    "run": 5, "planning": 5,
    "_precompile": 5,      # the install's compile step runs small jobs, as run does
    "cli": 6,
    "__main__": 7, "__init__": 7,
}
#: Imports between two rooms on one floor that are allowed, and why.
SIDEWAYS = {
    ("placement", "algorithms"),   # a step's phases are collectives built by the algorithms
    ("interop", "algorithms"),     # an MSCCL file runs as an algorithm; exports build them
    ("_inputs", "units"), ("_inputs", "errors"), ("units", "errors"), ("outputs", "errors"),
    ("_inputs", "budget"), ("budget", "errors"), ("budget", "units"),
    ("kept", "budget"),            # kept answers stay within a share of the memory room
    ("schedule", "routing"),       # none today; harmless, both sit on the topology
    ("packet", "engine"),          # the packet model returns the engine's Result, same routes
    ("planning", "run"),           # the planner scores placements with the placement search
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "netsim":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(path: Path):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    package = list(rel.parts if rel.name == "__init__" else rel.parts[:-1])
    if rel.name == "__init__":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module != "netsim":         # `from netsim import x`: only x counts
                yield node.lineno, module
            for alias in node.names:       # `from netsim import catalogue` names a module
                yield node.lineno, f"{module}.{alias.name}"


def _edges():
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        source = rel.parts[0].removesuffix(".py")
        for line, module in _imports(path):
            target = _room(module)
            if target is None or target == source or target not in LAYERS:
                continue
            yield f"netsim/{rel.as_posix()}:{line}", source, target


def test_every_room_has_a_layer():
    rooms = {p.name.removesuffix(".py") for p in PACKAGE.iterdir()
             if (p.suffix == ".py" or (p / "__init__.py").exists())}
    assert rooms <= set(LAYERS), f"rooms without a layer: {sorted(rooms - set(LAYERS))}"


def test_no_import_runs_against_the_layer_order():
    bad = [f"{where}: {source} (layer {LAYERS[source]}) imports {target} "
           f"(layer {LAYERS[target]})"
           for where, source, target in _edges()
           if LAYERS[target] > LAYERS[source]
           or (LAYERS[target] == LAYERS[source] and (source, target) not in SIDEWAYS)]
    assert not bad, "\n".join(bad)


def test_the_engine_never_imports_report_run_or_cli():
    engine = {target for _, source, target in _edges() if source == "engine"}
    assert not engine & {"report", "run", "cli", "algorithms", "placement"}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph():
    """Module -> the netsim modules it imports, at the top or inside a function. ``from
    pkg import name`` counts as an import of ``pkg.name`` where that is a module, else of
    ``pkg`` (whose ``__init__`` runs)."""
    import networkx as nx

    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    for name, path in paths.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (".".join(package[:len(package) - node.level + 1]
                                 + ([node.module] if node.module else []))
                        if node.level else node.module or "")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base
                           for a in node.names]
            graph.add_edges_from((name, t) for t in targets if t in paths and t != name)
    return graph


def test_no_module_imports_itself_through_others():
    """No circle of imports between modules, counting the imports made inside functions:
    a lazy import hides a circle from Python, not from a reader."""
    import networkx as nx

    circles = [sorted(c) for c in nx.strongly_connected_components(_module_graph())
               if len(c) > 1]
    assert not circles, "\n".join(" <-> ".join(c) for c in circles)


def test_an_option_of_several_commands_is_declared_once():
    """A long option that two subcommands share is declared in cli/options.py, not in each
    (names, types and help stay the same everywhere). Options that mean different things
    under one name are listed here, with why."""
    different = {"--list": "coll lists algorithms, topo lists presets",
                 "--budget": "place counts simulations, synth bounds a time",
                 "--schedule": "coll runs a schedule file, synth writes the synthesised one",
                 "--format": "each command's choice of formats"}
    seen: dict[str, set[str]] = {}
    for path in sorted((PACKAGE / "cli").glob("*.py")):
        if path.name == "options.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("option",
                                                                                   "Option"):
                for arg in node.args:
                    names = arg.elts if isinstance(arg, ast.List) else [arg]
                    for name in names:
                        if isinstance(name, ast.Constant) and str(name.value).startswith("--"):
                            seen.setdefault(name.value, set()).add(path.name)
    twice = {name: sorted(files) for name, files in seen.items()
             if len(files) > 1 and name not in different}
    assert not twice, twice
