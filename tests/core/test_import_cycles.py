"""The import graph of the workspace's Python packages: no cycles, and every import of
``arsim_core`` points down its layers.

A cycle makes import order matter and hides which module owns what; an import that points up
(the protocol reaching into the backend, the settings into the recorder) ties a small module to
everything above it. Every import counts: lazy ones inside functions and those under
``if TYPE_CHECKING:`` too, as each says the importer depends on the imported. ``from pkg import
name`` counts as importing ``pkg.name`` when that is a module, else ``pkg``.

``arsim_core`` is the ROS-free library: it never imports the ROS packages of the workspace, and
neither it nor the Gymnasium package needs ROS (``rclpy``, ``ament_index_python``) to be
imported; a function that wants ROS imports it when it runs."""

from __future__ import annotations

import ast
import graphlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGES = ('arsim_core', 'arsim_bridge', 'arsim_launch', 'arsim_gym')

# arsim_core's layers, bottom first: a module imports modules of its own layer (without a
# cycle) or of lower ones. A module belongs to the layer of its longest listed prefix.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ('base', ('arsim_core', 'arsim_core.errors', 'arsim_core.log_limit', 'arsim_core.geometry',
              'arsim_core.yaml_fields', 'arsim_core.labels', 'arsim_core.pinhole',
              'arsim_core.lens', 'arsim_core.beams', 'arsim_core.rows', 'arsim_core.endpoints')),
    ('process', ('arsim_core.process', 'arsim_core._jit')),
    ('protocol', ('arsim_core.protocol',)),
    ('models', ('arsim_core.config', 'arsim_core.dynamics', 'arsim_core.track')),
    ('parts', ('arsim_core.backend', 'arsim_core.sensors', 'arsim_core.recording',
               'arsim_core.description')),
    ('engine', ('arsim_core.engine',)),
    ('applications', ('arsim_core.policies', 'arsim_core.view', 'arsim_core.dataset',
                      'arsim_core.fit', 'arsim_core.race_control', 'arsim_core.drivers',
                      'arsim_core.league')),
)
# Packages arsim_core never imports, and what neither it nor arsim_gym imports at module level.
ABOVE_CORE = ('arsim_bridge', 'arsim_launch', 'arsim_gym')
ROS = ('rclpy', 'ament_index_python')


@dataclass(frozen=True)
class Import:
    module: str  # as written, resolved to an absolute name
    line: int
    at_import_time: bool  # runs when the importing module is imported


def modules(src: Path) -> dict[str, Path]:
    """Every module of ``PACKAGES`` by dotted name."""
    found = {}
    for package in PACKAGES:
        root = src / package / package
        for path in root.rglob('*.py'):
            parts = path.relative_to(root.parent).with_suffix('').parts
            found['.'.join(parts[:-1] if parts[-1] == '__init__' else parts)] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> Iterator[Import]:
    """Every import statement of module ``name``, type-checking and lazy ones included."""
    tree = ast.parse(path.read_text(), str(path))
    later = {id(node) for outer in ast.walk(tree)
             if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
             or (isinstance(outer, ast.If) and 'TYPE_CHECKING' in ast.unparse(outer.test))
             for node in ast.walk(outer)}
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    for node in ast.walk(tree):
        now = id(node) not in later
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(alias.name, node.lineno, now)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parent = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join([*parent, base] if base else parent)
            for alias in node.names:
                full = f'{base}.{alias.name}'
                yield Import(full if full in known else base, node.lineno, now)


def layer_of(module: str) -> int | None:
    """Index in ``LAYERS`` of the layer ``module`` belongs to; None if it is in none.
    ``arsim_core`` itself stands for the package's ``__init__`` only."""
    best, best_length = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module.startswith(prefix + '.') and prefix != 'arsim_core'
            if (module == prefix or inside) and len(prefix) > best_length:
                best, best_length = index, len(prefix)
    return best


@pytest.fixture(scope='module')
def known(repo_root: Path) -> dict[str, Path]:
    found = modules(repo_root / 'src')
    assert 'arsim_core.backend.embree' in found and len(found) > 50
    return found


def test_no_module_imports_itself_back(known: dict[str, Path]) -> None:
    graph = {name: {i.module for i in imports(name, path, known)
                    if i.module in known and i.module != name}
             for name, path in known.items()}
    assert 'arsim_core.backend.raycast' in graph['arsim_core.backend.embree']
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f'import cycle: {" -> ".join(exc.args[1])}')


def test_no_package_of_the_core_imports_itself_back(known: dict[str, Path]) -> None:
    """Nor do arsim_core's packages (``arsim_core.track`` and what lies below it) form a
    cycle between them, which a cycle-free module graph still allows."""
    def top(module: str) -> str:
        return '.'.join(module.split('.')[:2])
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        if name.startswith('arsim_core.'):
            graph.setdefault(top(name), set()).update(
                top(i.module) for i in imports(name, path, known)
                if i.module.startswith('arsim_core.') and top(i.module) != top(name))
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f'import cycle between packages: {" -> ".join(exc.args[1])}')


def test_every_import_of_the_core_points_down(known: dict[str, Path]) -> None:
    problems = []
    for name, path in sorted(known.items()):
        if not name.startswith('arsim_core'):
            continue
        own = layer_of(name)
        if own is None:
            problems.append(f'{path}: module {name} is in no layer of LAYERS')
            continue
        for found in imports(name, path, known):
            if found.module.split('.')[0] in ABOVE_CORE:
                problems.append(f'{path}:{found.line}: {name} imports {found.module}, a package '
                                f'above arsim_core')
            if not found.module.startswith('arsim_core') or found.module not in known:
                continue
            other = layer_of(found.module)
            if other is not None and other > own:
                problems.append(f'{path}:{found.line}: {name} (layer {LAYERS[own][0]}) imports '
                                f'{found.module} (layer {LAYERS[other][0]}, higher)')
    assert not problems, '\n'.join(dict.fromkeys(problems))


def test_the_core_and_the_gym_import_without_ros(known: dict[str, Path]) -> None:
    problems = [f'{path}:{found.line}: {name} imports {found.module} at import time'
                for name, path in sorted(known.items())
                if name.split('.')[0] in ('arsim_core', 'arsim_gym')
                for found in imports(name, path, known)
                if found.at_import_time and found.module.split('.')[0] in ROS]
    assert not problems, '\n'.join(problems)


def test_the_layers_see_what_they_check(known: dict[str, Path]) -> None:
    """The checks above find imports the way the interpreter does."""
    found = {i.module: i for i in imports('arsim_core.description',
                                          known['arsim_core.description'], known)}
    assert not found['ament_index_python.packages'].at_import_time
    assert layer_of('arsim_core.protocol.messages') == 2 and layer_of('arsim_core.x') is None
    assert layer_of('arsim_core.engine.collisions') == 5
    assert layer_of('arsim_core.track.scene.build') == 3
