"""First use: the commands the documentation shows work in a fresh shell after
``source tools/env.sh``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


def fresh_shell(repo: Path, command: str) -> subprocess.CompletedProcess:
    """``command`` in a bash with only the system PATH, after ``source tools/env.sh``."""
    env = {'HOME': os.environ.get('HOME', '/tmp'), 'PATH': '/usr/local/bin:/usr/bin:/bin'}
    return subprocess.run(['bash', '-c', f'source tools/env.sh && {command}'], cwd=repo,
                          env=env, capture_output=True, text=True, timeout=60)


def test_arsim_track_is_on_the_path(repo_root: Path) -> None:
    result = fresh_shell(repo_root, 'arsim-track --help')
    assert result.returncode == 0, result.stderr
    assert 'usage: arsim-track' in result.stdout


def test_arsim_track_runs_from_another_directory(repo_root: Path, tmp_path: Path) -> None:
    result = fresh_shell(repo_root, f'cd {tmp_path} && arsim-track info arsim_ring')
    assert result.returncode == 0, result.stderr
    assert 'arsim_ring' in result.stdout
