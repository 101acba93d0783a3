"""Typed access to YAML mappings with errors that name the file and the key path.

Every loader in arsim reads its YAML through a ``Section`` so that a wrong or missing value is
reported as ``<file>: <key.path>: expected <what>, got <value>`` and unknown keys are rejected
instead of silently ignored.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import yaml

from arsim_core.errors import ConfigError

_MISSING = object()


def load_yaml(path: str | Path) -> Any:
    """Read a YAML file; a missing file or a syntax error names the file (and line)."""
    path = Path(path)
    try:
        text = path.read_text(encoding='utf-8')
    except FileNotFoundError as exc:
        msg = f'{path}: file not found'
        raise ConfigError(msg) from exc
    except OSError as exc:
        msg = f'{path}: cannot read ({exc.strerror})'
        raise ConfigError(msg) from exc
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, 'problem_mark', None)
        where = f' line {mark.line + 1}, column {mark.column + 1}' if mark else ''
        problem = getattr(exc, 'problem', None) or str(exc)
        msg = f'{path}:{where}: invalid YAML: {problem}'
        raise ConfigError(msg) from exc


class Section:
    """A mapping read from ``source`` at ``path`` (a dotted key path, '' for the root)."""

    def __init__(self, data: Any, source: str | Path, path: str = '') -> None:
        self.source = str(source)
        self.path = path
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            self.fail(f'expected a mapping, got {type(data).__name__}')
        self.data: Mapping[str, Any] = data

    def key_path(self, key: str) -> str:
        return f'{self.path}.{key}' if self.path else key

    def fail(self, what: str, key: str | None = None) -> None:
        where = self.key_path(key) if key is not None else (self.path or '<root>')
        msg = f'{self.source}: {where}: {what}'
        raise ConfigError(msg)

    def reject_unknown(self, allowed: Collection[str]) -> None:
        unknown = sorted(str(k) for k in self.data if k not in allowed)
        if unknown:
            self.fail(f'unknown key(s) {unknown}; valid keys are {sorted(allowed)}')

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        if key not in self.data:
            if default is _MISSING:
                self.fail('missing required key', key)
            return default
        return self.data[key]

    def section(self, key: str, default: Any = _MISSING) -> Section:
        return Section(self.raw(key, default), self.source, self.key_path(key))

    def number(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
               maximum: float | None = None, exclusive_minimum: bool = False) -> float:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not math.isfinite(value):
            self.fail(f'expected a finite number, got {value!r}', key)
        bound_ok = minimum is None or (value > minimum if exclusive_minimum else value >= minimum)
        if not bound_ok or (maximum is not None and value > maximum):
            low = '' if minimum is None else f'{"> " if exclusive_minimum else ">= "}{minimum}'
            high = '' if maximum is None else f'<= {maximum}'
            self.fail(f'expected a number {" and ".join(p for p in (low, high) if p)}, '
                      f'got {value!r}', key)
        return float(value)

    def integer(self, key: str, default: Any = _MISSING, *, minimum: int | None = None) -> int:
        value = self.raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f'expected an integer, got {value!r}', key)
        if minimum is not None and value < minimum:
            self.fail(f'expected an integer >= {minimum}, got {value!r}', key)
        return int(value)

    def string(self, key: str, default: Any = _MISSING, *,
               choices: Collection[str] | None = None) -> str:
        value = self.raw(key, default)
        if not isinstance(value, str):
            self.fail(f'expected a string, got {value!r}', key)
        if choices is not None and value not in choices:
            self.fail(f'expected one of {sorted(choices)}, got {value!r}', key)
        return value

    def boolean(self, key: str, default: Any = _MISSING) -> bool:
        value = self.raw(key, default)
        if not isinstance(value, bool):
            self.fail(f'expected true or false, got {value!r}', key)
        return value

    def vector(self, key: str, length: int, default: Any = _MISSING) -> tuple[float, ...]:
        value = self.raw(key, default)
        ok = isinstance(value, (list, tuple)) and len(value) == length and all(
            not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v)
            for v in value)
        if not ok:
            self.fail(f'expected a list of {length} finite numbers, got {value!r}', key)
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
