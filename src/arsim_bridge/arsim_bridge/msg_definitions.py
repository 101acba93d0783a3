"""ROS 2 message definitions as Foxglove and rosbag2's MCAP storage expect them (``ros2msg``):
the type's ``.msg`` text, then each type it uses, once, after a line of 80 ``=`` and a
``MSG: <package>/<Type>`` line. Read from the interface packages' installed ``.msg`` files, so
any message type on the ROS graph can be described, arsim's own included.

Type names come from the ROS graph, so from any peer on the domain: a name is looked up only
once it is ``pkg/msg/Type`` (or ``pkg/Type`` where a ``.msg`` field names it) with each part a
valid ROS name, and the ament index lists ``pkg`` as an interface package that has ``Type``.
Anything else is a :class:`MessageTypeError` before a module is imported or a file is read.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ament_index_python.packages import get_package_share_directory
from ament_index_python.resources import get_resource, has_resource

SEPARATOR = '=' * 80
PRIMITIVES = frozenset({'bool', 'byte', 'char', 'float32', 'float64', 'int8', 'uint8', 'int16',
                        'uint16', 'int32', 'uint32', 'int64', 'uint64', 'string', 'wstring'})
_FIELD = re.compile(r'^\s*([A-Za-z][\w/]*)(?:<=\d+)?(?:\[[^\]]*\])?\s+\w')
_PACKAGE = re.compile(r'[a-z][a-z0-9_]*')
_TYPE = re.compile(r'[A-Z][A-Za-z0-9]*')
MAX_NAME_CHARS = 255  # of a package or a type name


class MessageTypeError(ValueError, LookupError):
    """A message type name that is malformed or names no installed message type; a
    LookupError too, as rosbag writing reports a type it cannot find."""


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
    parts = type_name.split('/')
    if len(parts) != 3 or parts[1] != 'msg':
        msg = f'expected a message type as pkg/msg/Type, got {type_name[:MAX_NAME_CHARS]!r}'
        raise MessageTypeError(msg)
    package, name = _split(type_name)
    return getattr(importlib.import_module(f'{package}.msg'), name)


def read_installed(package: str, name: str) -> str:
    """``share/<package>/msg/<name>.msg`` of the installed interface package."""
    package, name = _checked(package, name)
    return (Path(get_package_share_directory(package)) / 'msg' / f'{name}.msg').read_text()


def _split(type_name: str) -> tuple[str, str]:
    """(package, Type) of ``pkg/msg/Type`` or ``pkg/Type``, once :func:`_checked`."""
    parts = type_name.split('/')
    if len(parts) == 3 and parts[1] == 'msg':
        return _checked(parts[0], parts[2])
    if len(parts) == 2:
        return _checked(parts[0], parts[1])
    msg = (f'expected a message type as pkg/msg/Type or pkg/Type, got '
           f'{type_name[:MAX_NAME_CHARS]!r}')
    raise MessageTypeError(msg)


def _checked(package: str, name: str) -> tuple[str, str]:
    """``(package, name)`` if both are valid ROS names and the ament index lists ``package``
    as an interface package with the message ``name``: nothing else reaches an import or a
    path."""
    shown = repr(f'{package[:MAX_NAME_CHARS]}/{name[:MAX_NAME_CHARS]}')
    if len(package) > MAX_NAME_CHARS or not _PACKAGE.fullmatch(package):
        msg = f'message type {shown}: expected a package name like [a-z][a-z0-9_]*'
        raise MessageTypeError(msg)
    if len(name) > MAX_NAME_CHARS or not _TYPE.fullmatch(name):
        msg = f'message type {shown}: expected a type name like [A-Z][A-Za-z0-9]*'
        raise MessageTypeError(msg)
    if not has_resource('packages', package) \
            or not has_resource('rosidl_interfaces', package):
        msg = f'message type {shown}: the ament index lists no interface package {package!r}'
        raise MessageTypeError(msg)
    interfaces = get_resource('rosidl_interfaces', package)[0].split()
    if f'msg/{name}.msg' not in interfaces and f'msg/{name}.idl' not in interfaces:
        msg = f'message type {shown}: {package} has no message {name}'
        raise MessageTypeError(msg)
    return package, name


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
        used.append(_split(field_type) if '/' in field_type else _checked(package, field_type))
    return used
