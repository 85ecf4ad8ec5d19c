"""The public surface: ``netsim.__all__`` and each package's ``__all__``.

The CLI is the first client of the API and uses nothing else: every name it imports from
netsim comes from a package (or a root module such as ``units``) that lists it in
``__all__``. Generators take their options by keyword only.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

import netsim

CLI = Path(netsim.__file__).parent / "cli"
PACKAGES = ["netsim.budget", "netsim.topology", "netsim.routing", "netsim.schedule", "netsim.engine",
            "netsim.algorithms", "netsim.placement", "netsim.report", "netsim.run",
            "netsim.units", "netsim.errors", "netsim.outputs"]
PACKAGES.append("netsim.interop")
PACKAGES.append("netsim.interrupts")
PACKAGES.append("netsim.planning")


@pytest.mark.parametrize("module", ["netsim", *PACKAGES])
def test_every_public_name_resolves(module):
    mod = importlib.import_module(module)
    missing = [name for name in mod.__all__ if not hasattr(mod, name)]
    assert not missing


def test_top_level_names_are_the_packages_own():
    for name in netsim.__all__:
        if name == "__version__":
            continue
        owner = importlib.import_module(netsim._OWNER[name])
        assert name in owner.__all__, f"netsim.{name} is not in {owner.__name__}.__all__"
        assert getattr(netsim, name) is getattr(owner, name)


def _cli_imports():
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                module = f"netsim.{node.module}" if node.module else "netsim"
                yield path.name, node.lineno, module, [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and \
                    (node.module or "").startswith("netsim"):
                yield path.name, node.lineno, node.module, [a.name for a in node.names]


def test_the_cli_imports_only_public_names():
    bad = []
    for where, line, module, names in _cli_imports():
        if module not in ("netsim", *PACKAGES):
            bad.append(f"{where}:{line}: imports from {module}, not a public package")
            continue
        public = importlib.import_module(module).__all__
        bad += [f"{where}:{line}: {module}.{n} is not in __all__" for n in names
                if n not in public]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("name", ["ring", "mesh", "torus", "fat_tree", "leaf_spine",
                                  "nvswitch", "full_mesh"])
def test_generator_options_are_keyword_only(name):
    shape = {"leaf_spine": 3}.get(name, 1)
    params = list(inspect.signature(getattr(netsim, name)).parameters.values())
    assert all(p.kind == p.POSITIONAL_OR_KEYWORD for p in params[:shape])
    assert all(p.kind == p.KEYWORD_ONLY for p in params[shape:]), params
    with pytest.raises(TypeError):
        getattr(netsim, name)(*([4] * shape), 50e9)


def test_unknown_top_level_name_is_an_attribute_error():
    with pytest.raises(AttributeError):
        netsim.no_such_thing  # noqa: B018
