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
    "interrupts": 0,
    "topology": 1,
    "routing": 2, "schedule": 2,
    "engine": 3, "packet": 3,
    "algorithms": 4, "placement": 4, "report": 4, "interop": 4,
    "run": 5, "_precompile": 5,      # the install's compile step runs small jobs, as run does
    "cli": 6,
    "__main__": 7, "__init__": 7,
}
#: Imports between two rooms on one floor that are allowed, and why.
SIDEWAYS = {
    ("placement", "algorithms"),   # a step's phases are collectives built by the algorithms
    ("interop", "algorithms"),     # an MSCCL file runs as an algorithm; exports build them
    ("_inputs", "units"), ("_inputs", "errors"), ("units", "errors"), ("outputs", "errors"),
    ("_inputs", "budget"), ("budget", "errors"), ("budget", "units"),
    ("schedule", "routing"),       # none today; harmless, both sit on the topology
    ("packet", "engine"),          # the packet model returns the engine's Result, same routes
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
