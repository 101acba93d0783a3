"""ROS 2 message definitions as Foxglove and rosbag2's MCAP storage expect them (``ros2msg``):
the type's ``.msg`` text, then each type it uses, once, after a line of 80 ``=`` and a
``MSG: <package>/<Type>`` line. Read from the interface packages' installed ``.msg`` files, so
any message type on the ROS graph can be described, arsim's own included."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ament_index_python.packages import get_package_share_directory

SEPARATOR = '=' * 80
PRIMITIVES = frozenset({'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16',
                        'uint16', 'int32', 'uint32', 'int64', 'uint64', 'string', 'wstring'})
_FIELD = re.compile(r'^\s*([A-Za-z][\w/]*)(?:<=\d+)?(?:\[[^\]]*\])?\s+\w')


def definition(type_name: str,
               read: Callable[[str, str], str] | None = None) -> str:
    """The ``ros2msg`` text of ``type_name`` (``pkg/msg/Type`` or ``pkg/Type``)."""
    read = read or read_installed
    package, name = _split(type_name)
    text = read(package, name)
    parts = [text.rstrip('\n')]
    seen = {(package, name)}
    pending = _used_types(text, package)
    while pending:
        used = pending.pop(0)
        if used in seen:
            continue
        seen.add(used)
        used_text = read(*used)
        parts.append(f'{SEPARATOR}\nMSG: {used[0]}/{used[1]}\n{used_text.rstrip(chr(10))}')
        pending.extend(_used_types(used_text, used[0]))
    return '\n'.join(parts) + '\n'


def message_text(type_name: str) -> str:
    """The installed ``.msg`` text of ``type_name`` alone, without the types it uses."""
    return read_installed(*_split(type_name))


def message_class(type_name: str) -> Any:
    """``pkg/msg/Type`` as its Python class."""
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


def read_installed(package: str, name: str) -> str:
    """``share/<package>/msg/<name>.msg`` of the installed interface package."""
    return (Path(get_package_share_directory(package)) / 'msg' / f'{name}.msg').read_text()


def _split(type_name: str) -> tuple[str, str]:
    parts = type_name.split('/')
    if len(parts) == 3 and parts[1] == 'msg':
        return parts[0], parts[2]
    if len(parts) == 2:
        return parts[0], parts[1]
    msg = f'expected a message type as pkg/msg/Type or pkg/Type, got {type_name!r}'
    raise ValueError(msg)


def _used_types(text: str, package: str) -> list[tuple[str, str]]:
    """The (package, Type) of every non-primitive field, in order; a bare name is a type of
    ``package`` itself."""
    used = []
    for line in text.splitlines():
        line = line.split('#', 1)[0]
        match = _FIELD.match(line)
        if match is None:
            continue
        field_type = match.group(1)
        if field_type in PRIMITIVES:
            continue
        used.append(_split(field_type) if '/' in field_type else (package, field_type))
    return used
