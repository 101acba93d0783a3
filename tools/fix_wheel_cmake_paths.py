"""Point the PyPI ROS 2 wheels' exported CMake files at this machine's Python.

The wheels are built in a manylinux container whose interpreter lives in
/opt/python/cpXY-cpXY/. Their exported targets (e.g. std_msgs::std_msgs__rosidl_generator_py)
keep that interpreter's include directory and its NumPy include directory in
INTERFACE_INCLUDE_DIRECTORIES, and CMake's generate step fails on the missing paths as soon
as an interface package links against them. This rewrites those paths, inside the venv only,
to the include directories of the interpreter that runs this script (the venv's python).

A changed file is replaced, never written into: installers such as uv hard-link a wheel's
files from their cache, so writing into one would change the cache and every other venv made
from it, pointing their builds at this venv (and breaking them when it is deleted).

Usage: <venv>/bin/python tools/fix_wheel_cmake_paths.py <venv>
Idempotent: files without such paths are left alone. Exits non-zero if a builder path that
it does not know how to map is left over.
"""

from __future__ import annotations

import os
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

# /opt/python/cp311-cp311/include/python3.11 (also free-threaded "t" variants).
PY_INCLUDE = re.compile(r'/opt/python/[^/;"\s]+/include/python3\.[0-9]+t?')
# .../site-packages/numpy/_core/include (NumPy 2) or .../numpy/core/include (NumPy 1). Any
# prefix, not only /opt/python: a re-run after a NumPy upgrade re-points an earlier fix.
NUMPY_INCLUDE = re.compile(r'/[^;"\s]*/site-packages/numpy/(?:_core|core)/include')
LEFTOVER = re.compile(r'/opt/python/[^;"\s]*')


def cmake_files(venv: Path) -> list[Path]:
    """Return the CMake files that installed packages export."""
    roots = [venv / 'share', venv / 'lib' / 'cmake']
    return sorted(p for root in roots if root.is_dir() for p in root.rglob('*.cmake'))


def replace_file(path: Path, text: str) -> None:
    """Give ``path`` the content ``text`` as a new file (a new inode, its mode kept), so no
    other link to the old file sees the change."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f'.{path.name}.')
    try:
        with os.fdopen(fd, 'w') as out:
            out.write(text)
        os.chmod(temporary, path.stat().st_mode & 0o7777)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def main() -> int:
    """Rewrite the paths; return the process exit code."""
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    venv = Path(sys.argv[1])

    py_include = sysconfig.get_paths()['include']
    if not (Path(py_include) / 'Python.h').is_file():
        print(f'Python headers missing: {py_include}/Python.h', file=sys.stderr)
        return 1
    import numpy  # the venv's NumPy: the one generated message modules are compiled for

    numpy_include = numpy.get_include()

    updated = 0
    leftovers: set[str] = set()
    for path in cmake_files(venv):
        text = path.read_text()
        if '/opt/python/' not in text and '/site-packages/numpy/' not in text:
            continue
        # NumPy first: its builder path also starts with the interpreter prefix.
        new = PY_INCLUDE.sub(py_include, NUMPY_INCLUDE.sub(numpy_include, text))
        leftovers.update(f'{path}: {m}' for m in LEFTOVER.findall(new))
        if new != text:
            replace_file(path, new)
            updated += 1

    print(
        f'updated {updated} CMake file(s): python include {py_include}, '
        f'numpy include {numpy_include}'
    )
    if leftovers:
        print(
            'unmapped wheel-builder paths remain:', *sorted(leftovers), sep='\n  ', file=sys.stderr
        )
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
