"""tools/fix_wheel_cmake_paths.py re-points a venv's wheel CMake exports at its own Python and
NumPy without touching any other link to the same file: an installer (uv) hard-links wheel
files from its cache, and a fix written into the shared file once pointed every other venv at
this one, whose deletion then broke their builds."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy

REPO = Path(__file__).resolve().parents[1]
BUILDER = ('INTERFACE_INCLUDE_DIRECTORIES "/opt/python/cp311-cp311/include/python3.11;'
           '/opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include"\n')


def test_a_hard_linked_export_is_fixed_in_the_venv_only(tmp_path: Path) -> None:
    cached = tmp_path / 'cache' / 'std_msgs__rosidl_generator_pyExport.cmake'
    cached.parent.mkdir()
    cached.write_text(BUILDER)
    cached.chmod(0o644)
    linked = tmp_path / 'venv' / 'share' / 'std_msgs' / 'cmake' / cached.name
    linked.parent.mkdir(parents=True)
    os.link(cached, linked)
    done = subprocess.run([sys.executable, str(REPO / 'tools' / 'fix_wheel_cmake_paths.py'),
                           str(tmp_path / 'venv')], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert cached.read_text() == BUILDER  # the cache (and every venv linked to it) untouched
    fixed = linked.read_text()
    assert numpy.get_include() in fixed and sysconfig.get_paths()['include'] in fixed
    assert '/opt/python/' not in fixed
    assert linked.stat().st_ino != cached.stat().st_ino
    assert stat.S_IMODE(linked.stat().st_mode) == 0o644
    again = subprocess.run([sys.executable, str(REPO / 'tools' / 'fix_wheel_cmake_paths.py'),
                            str(tmp_path / 'venv')], capture_output=True, text=True, timeout=60)
    assert again.returncode == 0 and 'updated 0 CMake file(s)' in again.stdout
