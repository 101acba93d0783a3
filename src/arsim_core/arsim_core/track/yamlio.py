"""Small yaml helpers that report the file, line and key of every problem."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml

from arsim_core.errors import TrackError

T = TypeVar('T')
_MISSING: Any = object()


class YamlDoc(dict[str, Any]):
    """A parsed yaml mapping that remembers the line of each (dotted) key."""

    def __init__(self, data: Mapping[str, Any], lines: Mapping[str, int]) -> None:
        """Keep ``lines`` next to the data so errors can point at the offending line."""
        super().__init__(data)
        self.lines = dict(lines)

    def where(self, path: Path, key: str) -> str:
        """``file:line`` of a key, or just the file when the key is absent."""
        line = self.lines.get(key)
        return f'{path}:{line}' if line else f'{path}'


def _key_lines(node: yaml.Node, prefix: str, out: dict[str, int]) -> None:
    """Record the 1-based line of every mapping key under ``node``."""
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = f'{prefix}{key_node.value}'
            out[key] = key_node.start_mark.line + 1
            _key_lines(value_node, f'{key}.', out)


def read_yaml(path: Path) -> YamlDoc:
    """Parse a yaml file that must hold a mapping; errors name the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding='utf-8')
    except (OSError, UnicodeDecodeError) as exc:
        msg = f'{path}: cannot read yaml: {exc}'
        raise TrackError(msg) from exc
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f'{path}:{mark.line + 1}' if mark is not None else f'{path}'
        problem = getattr(exc, 'problem', None) or str(exc)
        msg = f'{where}: invalid yaml: {problem}'
        raise TrackError(msg) from exc
    if not isinstance(data, dict):
        msg = f'{path}: yaml must contain a mapping of keys, got {type(data).__name__}'
        raise TrackError(msg)
    lines: dict[str, int] = {}
    if node is not None:
        _key_lines(node, '', lines)
    return YamlDoc(data, lines)


def get_key(
    doc: Mapping[str, Any], key: str, kind: type[T], path: Path, default: Any = _MISSING
) -> T:
    """Fetch a dotted ``key`` and check its type; a missing or wrong key names file and line."""
    value: Any = doc
    for part in key.split('.'):
        if not isinstance(value, Mapping) or part not in value:
            if default is not _MISSING:
                return default
            msg = f"{path}: missing key '{key}'"
            raise TrackError(msg)
        value = value[part]
    where = doc.where(path, key) if isinstance(doc, YamlDoc) else f'{path}'
    if kind is float and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)  # type: ignore[return-value]
    if kind is int and isinstance(value, bool):
        return int(value)  # type: ignore[return-value]
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        msg = f"{where}: key '{key}' must be {kind.__name__}, got {value!r}"
        raise TrackError(msg)
    return value
