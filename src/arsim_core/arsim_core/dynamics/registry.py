"""Model registry: profile ``model:`` value -> model class.

Built-ins are looked up in :data:`MODELS`; anything of the form ``path/to/file.py:ClassName``
is imported from that file (path relative to the car profile), so adding a model never means
editing this package.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

from ..errors import ConfigError
from .base import VehicleModel
from .ks import KinematicSingleTrack
from .st import SingleTrack
from .std import SingleTrackDrift

#: Built-in models by profile name.
MODELS: Final[Mapping[str, type[VehicleModel]]] = MappingProxyType({
    'ks': KinematicSingleTrack,
    'st': SingleTrack,
    'std': SingleTrackDrift,
})

_FILE_HINT = 'path/to/model.py:ClassName'


def valid_model_names() -> str:
    """Human-readable list of accepted ``model:`` values, for error messages."""
    return ', '.join(sorted(MODELS)) + f' or {_FILE_HINT}'


def resolve_model(spec: str, source: str, key: str = 'model') -> type[VehicleModel]:
    """The model class named by ``spec``; ``source`` is the profile path (messages, base dir).

    Raises ConfigError naming ``source``, ``key`` and the valid choices.
    """
    found = MODELS.get(spec)
    if found is not None:
        return found
    path_part, sep, class_name = spec.rpartition(':')
    if not sep or not path_part.endswith('.py') or not class_name.isidentifier():
        raise ConfigError(f'{source}: {key}: unknown model {spec!r}, expected one of: '
                          f'{valid_model_names()}')
    base = Path(source).resolve().parent if source else Path.cwd()
    path = (base / path_part).resolve()
    if not path.is_file():
        raise ConfigError(f'{source}: {key}: model file {str(path)!r} does not exist '
                          f'(paths are relative to the car profile)')
    module = _import_file(path, source, key)
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ConfigError(f'{source}: {key}: {path.name} defines no {class_name!r}')
    if not (isinstance(cls, type) and issubclass(cls, VehicleModel)):
        raise ConfigError(f'{source}: {key}: {class_name} in {path.name} must subclass '
                          f'arsim_core.dynamics.VehicleModel')
    if getattr(cls, '__abstractmethods__', None):
        missing = ', '.join(sorted(cls.__abstractmethods__))
        raise ConfigError(f'{source}: {key}: {class_name} does not implement {missing}')
    if not cls.state_names:
        raise ConfigError(f'{source}: {key}: {class_name}.state_names is empty')
    return cls


def _import_file(path: Path, source: str, key: str) -> object:
    """Import a model file once per path and version under a private module name."""
    stamp = f'{path}:{path.stat().st_mtime_ns}'  # an edited file is imported afresh
    digest = hashlib.sha1(stamp.encode(), usedforsecurity=False).hexdigest()[:12]
    name = f'arsim_user_model_{path.stem}_{digest}'
    cached = sys.modules.get(name)
    if cached is not None:
        return cached
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f'{source}: {key}: cannot import {str(path)!r}')
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f'{source}: {key}: importing {path.name} failed: '
                          f'{type(exc).__name__}: {exc}') from exc
    return module
