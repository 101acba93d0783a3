"""No module of the workspace's Python packages imports, directly or through others, a module
that imports it back: a cycle makes import order matter and hides which module owns what.
Imports under ``if TYPE_CHECKING:`` are left out (they never run); ``from pkg import name``
counts as importing ``pkg.name`` when that is a module, else ``pkg``."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

PACKAGES = ('arsim_core', 'arsim_bridge', 'arsim_launch', 'arsim_gym')


def modules(src: Path) -> dict[str, Path]:
    """Every module of ``PACKAGES`` by dotted name."""
    found = {}
    for package in PACKAGES:
        root = src / package / package
        for path in root.rglob('*.py'):
            parts = path.relative_to(root.parent).with_suffix('').parts
            found['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The workspace modules that ``name`` imports when it runs."""
    tree = ast.parse(path.read_text(), str(path))
    type_only = {id(node) for branch in ast.walk(tree) if isinstance(branch, ast.If)
                 and 'TYPE_CHECKING' in ast.unparse(branch.test) for node in ast.walk(branch)}
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parent = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join([*parent, base] if base else parent)
            for alias in node.names:
                found.add(f'{base}.{alias.name}' if f'{base}.{alias.name}' in known else base)
    return {module for module in found if module in known and module != name}


def test_no_module_imports_itself_back(repo_root: Path) -> None:
    known = modules(repo_root / 'src')
    assert 'arsim_core.backend.embree' in known and len(known) > 50
    graph = {name: imported(name, path, known) for name, path in known.items()}
    assert 'arsim_core.backend.raycast' in graph['arsim_core.backend.embree']
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f'import cycle: {" -> ".join(exc.args[1])}')
