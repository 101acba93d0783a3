"""Typed access to YAML mappings with errors that name the file and the key path.

Every loader in arsim (scenario, car profile and its dynamics, sensors, topic map, track.yaml,
map yaml, randomisation) reads its YAML through a ``Section``, so that a wrong or missing value
is reported as ``<file>:<line>: <key.path>: expected <what>, got <value>`` and unknown keys are
refused instead of silently ignored.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, NoReturn

import yaml

from arsim_core.errors import ArsimError, ConfigError
from arsim_core.log_limit import clip

_MISSING = object()
# Nodes a YAML document may hold with every alias expanded: aliases make a tiny file stand for
# an enormous one ("billion laughs"), which later code (checks, copies, JSON for a backend)
# would walk in full. Real config files hold a few thousand.
MAX_YAML_NODES = 100_000
# Levels of [ ] and { } a YAML document may nest. PyYAML's scanner does work per open level for
# every token, so a few thousand brackets cost it seconds; real files nest a handful.
MAX_FLOW_DEPTH = 64


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing flow collections nested past MAX_FLOW_DEPTH as it
    scans them, before their cost grows."""

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 (PyYAML's)
        if self.flow_level >= MAX_FLOW_DEPTH:
            raise yaml.scanner.ScannerError(
                None, None, f'lists and mappings nest deeper than {MAX_FLOW_DEPTH} levels',
                self.get_mark())
        super().fetch_flow_collection_start(TokenClass)


def load_yaml(path: str | Path, error: type[ArsimError] = ConfigError) -> Any:
    """Read a YAML file; a missing file or a syntax error names the file (and line)."""
    return _load(Path(path), error)[0]


def load_section(path: str | Path, error: type[ArsimError] = ConfigError) -> Section:
    """Read a YAML file that holds a mapping (or nothing) as a Section whose errors also give
    the line of the key at fault."""
    data, lines = _load(Path(path), error)
    return Section(data, path, lines=lines, error=error)


def _load(path: Path, error: type[ArsimError]) -> tuple[Any, dict[str, int]]:
    """The file's data and the 1-based line of every key path in it, from one parse."""
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError as exc:
        msg = f'{path}: file not found'
        raise error(msg) from exc
    except (OSError, UnicodeDecodeError) as exc:
        msg = f'{path}: cannot read ({getattr(exc, "strerror", None) or exc})'
        raise error(msg) from exc
    return _parsed(text, str(path), error)


_PARSED: dict[tuple[str, str], tuple[Any, dict[str, int]]] = {}
_PARSED_KEPT = 64  # files whose parse is kept
_PARSED_TEXT_MAX = 1 << 20  # [characters] of a file whose parse is kept


def _parsed(text: str, source: str, error: type[ArsimError]) -> tuple[Any, dict[str, int]]:
    """``parse_yaml``, each text parsed once per process and copied after: a vector of 256
    environments reads the same scenario and profiles 256 times, and PyYAML's parse took
    two thirds of making them. Only what parsed is kept, so errors are raised every time."""
    key = (source, text)
    found = _PARSED.get(key)
    if found is None:
        found = parse_yaml(text, source, error)
        if len(text) <= _PARSED_TEXT_MAX:
            if len(_PARSED) >= _PARSED_KEPT:
                _PARSED.clear()
            _PARSED[key] = found
    return copy.deepcopy(found[0]), dict(found[1])


def parse_yaml(text: str, source: str, error: type[ArsimError] = ConfigError
               ) -> tuple[Any, dict[str, int]]:
    """``text``'s data and the 1-based line of every key path in it, from one parse; errors
    name ``source``. Aliases that refer to themselves or expand past MAX_YAML_NODES nodes
    are refused before anything is built from them."""
    try:
        loader = _BoundedLoader(text)  # refuses control characters at once
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_aliases(node, source, error)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f'{source}:{mark.line + 1}:{mark.column + 1}' if mark else source
        problem = getattr(exc, 'problem', None) or str(exc)
        msg = f'{where}: invalid YAML: {problem}'
        raise error(msg) from exc
    except RecursionError as exc:  # PyYAML parses and composes by recursion
        msg = f'{source}: invalid YAML: lists and mappings nest too deep'
        raise error(msg) from exc
    except ValueError as exc:  # a value PyYAML cannot build, e.g. an integer of 5,000 digits
        msg = f'{source}: invalid YAML: {clip(str(exc), 200)}'
        raise error(msg) from exc
    lines: dict[str, int] = {}
    if node is not None:
        _key_lines(node, lines)
    return data, lines


def _finite(value: float) -> bool:
    """Whether ``value`` is a finite float; an integer too large for one is not (math.isfinite
    raises OverflowError on it)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _check_aliases(root: yaml.Node, source: str, error: type[ArsimError]) -> None:
    """Refuse a node graph with a cycle (``a: &a [*a]``) or more than MAX_YAML_NODES nodes
    once aliases are expanded. Each node is visited once, without recursion: its expanded
    size is counted from its children's, already counted."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # on the path from the root to the node being visited
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, closing = stack.pop()
        key = id(node)
        if closing:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_YAML_NODES:
                msg = (f'{source}:{node.start_mark.line + 1}: too many aliased nodes: '
                       f'with its aliases expanded the document holds more than '
                       f'{MAX_YAML_NODES} values')
                raise error(msg)
            continue
        if key in sizes:
            continue
        open_nodes.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                msg = (f'{source}:{child.start_mark.line + 1}: recursive YAML alias: the value '
                       f'anchored here contains an alias of itself')
                raise error(msg)
            if id(child) not in sizes:
                stack.append((child, False))


def _key_lines(root: yaml.Node, lines: dict[str, int]) -> None:
    """Record the line of every mapping key and list item under ``root``, by the key paths
    ``Section`` uses (``cars[0].name``); a node an alias repeats is walked at its first
    place only."""
    seen: set[int] = set()
    stack: list[tuple[yaml.Node, str]] = [(root, '')]
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        children: list[tuple[yaml.Node, str]] = []
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = _child_path(path, str(key_node.value))
                lines.setdefault(key, key_node.start_mark.line + 1)
                children.append((value_node, key))
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                key = f'{path}[{index}]'
                lines.setdefault(key, item.start_mark.line + 1)
                children.append((item, key))
        stack.extend(reversed(children))


def _child_path(path: str, key: str) -> str:
    return f'{path}.{key}' if path else key


def _number(value: float) -> str:
    """6 significant digits, exponents as written in YAML (1e6, not 1e+06)."""
    mantissa, _, exponent = f'{value:g}'.partition('e')
    return f'{mantissa}e{int(exponent)}' if exponent else mantissa


def describe_number(minimum: float | None = None, maximum: float | None = None, *,
                    exclusive_minimum: bool = False, exclusive_maximum: bool = False,
                    nonzero: bool = False, maximum_name: str | None = None) -> str:
    """What a number check expects, in words: 'a number > 0', 'a number in [0, 1]'."""
    high = None if maximum is None else (
        f'{maximum_name} = {_number(maximum)}' if maximum_name else _number(maximum))
    if minimum is not None and maximum is not None:
        return (f'a number in {"(" if exclusive_minimum else "["}{_number(minimum)}, '
                f'{high}{")" if exclusive_maximum else "]"}')
    if minimum is not None:
        return f'a number {">" if exclusive_minimum else ">="} {_number(minimum)}'
    if maximum is not None:
        return f'a number {"<" if exclusive_maximum else "<="} {high}'
    return 'a finite number != 0' if nonzero else 'a finite number'


class Section:
    """A mapping read from ``source`` at ``path`` (a dotted key path, '' for the root).

    Every problem is one ``error`` (ConfigError unless the file's owner raises another kind)
    of the form ``<file>[:<line>]: <key.path>: <what was expected>, got <value>``; the line is
    known for sections read with ``load_section``."""

    def __init__(self, data: Any, source: str | Path, path: str = '', *,
                 lines: Mapping[str, int] | None = None,
                 error: type[ArsimError] = ConfigError) -> None:
        self.source = str(source)
        self.path = path
        self.lines: Mapping[str, int] = lines if lines is not None else {}
        self.error = error
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            self.fail(f'expected a mapping, got {data!r}')
        self.data: Mapping[str, Any] = data

    def key_path(self, key: str) -> str:
        return _child_path(self.path, key)

    def where(self, key: str | None = None) -> str:
        """``file:line`` of ``key`` (or of this section, if the key is absent), else ``file``."""
        line = self.lines.get(self.key_path(key)) if key is not None else None
        line = line or self.lines.get(self.path)
        return f'{self.source}:{line}' if line else self.source

    def fail(self, what: str, key: str | None = None) -> NoReturn:
        name = self.key_path(key) if key is not None else self.path
        msg = f'{self.where(key)}: {name}: {what}' if name else f'{self.where()}: {what}'
        raise self.error(msg)

    def reject_unknown(self, allowed: Collection[str]) -> None:
        """Refuse the first key not in ``allowed``, at its line, listing the valid ones."""
        expected = f'one of: {", ".join(sorted(allowed))}' if allowed else 'no keys here'
        for key in self.data:
            if key not in allowed:
                self.fail(f'unknown key, expected {expected}', str(key))

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING, *, what: str = 'a value') -> Any:
        if key not in self.data:
            if default is _MISSING:
                self.fail(f'missing, expected {what}', key)
            return default
        return self.data[key]

    def section(self, key: str, default: Any = _MISSING) -> Section:
        return self.child(self.raw(key, default, what='a mapping'), self.key_path(key))

    def child(self, data: Any, path: str) -> Section:
        """A section of the same file at ``path`` (a list item's mapping, a merged one)."""
        return Section(data, self.source, path, lines=self.lines, error=self.error)

    def number(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
               maximum: float | None = None, exclusive_minimum: bool = False,
               exclusive_maximum: bool = False, nonzero: bool = False,
               maximum_name: str | None = None) -> float:
        """A finite number within the bounds; ``maximum_name`` names a bound that comes from
        another key (``physics_rate_hz``)."""
        what = describe_number(minimum, maximum, exclusive_minimum=exclusive_minimum,
                               exclusive_maximum=exclusive_maximum, nonzero=nonzero,
                               maximum_name=maximum_name)
        value = self.raw(key, default, what=what)
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) \
            and _finite(value) \
            and (minimum is None or (value > minimum if exclusive_minimum else value >= minimum)) \
            and (maximum is None or (value < maximum if exclusive_maximum else value <= maximum)) \
            and not (nonzero and value == 0)
        if not ok:
            self.fail(f'expected {what}, got {clip(repr(value), 80)}', key)
        return float(value)

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> int:
        what = 'an integer' if minimum is None else f'an integer >= {minimum}'
        value = self.raw(key, default, what=what)
        if isinstance(value, bool) or not isinstance(value, int) \
                or (minimum is not None and value < minimum):
            self.fail(f'expected {what}, got {value!r}', key)
        return int(value)

    def string(self, key: str, default: Any = _MISSING, *,
               choices: Collection[str] | None = None) -> str:
        what = 'a string' if choices is None else f'one of {sorted(choices)}'
        value = self.raw(key, default, what=what)
        if not isinstance(value, str) or (choices is not None and value not in choices):
            self.fail(f'expected {what}, got {value!r}', key)
        return value

    def file_inside(self, key: str) -> Path:
        """A file that ``key`` names relative to this file's folder, which it may not leave:
        an absolute path, ``..`` above the folder or a link out of it is refused, so a file
        downloaded with its folder reads nothing else of the machine."""
        name = self.string(key)
        folder = Path(self.source).parent
        path = folder / name
        if Path(name).is_absolute() or not path.resolve().is_relative_to(folder.resolve()):
            self.fail(f'expected a file inside {folder}, got {name!r}', key)
        if not path.is_file():
            self.fail(f'names {path}, which does not exist', key)
        return path

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self.raw(key, default, what='true or false')
        if not isinstance(value, bool):
            self.fail(f'expected true or false, got {value!r}', key)
        return value

    def vector(self, key: str, length: int, default: Any = _MISSING) -> tuple[float, ...]:
        what = f'a list of {length} finite numbers'
        value = self.raw(key, default, what=what)
        ok = isinstance(value, (list, tuple)) and len(value) == length and all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            for v in value)
        if not ok:
            self.fail(f'expected {what}, got {value!r}', key)
        return tuple(float(v) for v in value)

    def items(self) -> list[tuple[str, Section]]:
        """The entries of a mapping of mappings, each as a Section."""
        return [(str(k), self.section(str(k))) for k in self.data]


def merge(base: Any, overrides: Mapping[str, Any]) -> Any:
    """``base`` with ``overrides`` applied recursively (mappings merge, other values replace)."""
    if not isinstance(base, Mapping):
        return base
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = value
    return merged
