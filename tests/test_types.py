"""The type check of ``mypy.ini`` passes: ``make lint`` runs it, and this test runs it in the
test suite (CI runs only that). About 10 s here with an empty cache, 1 s with a warm one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def test_the_packages_type_check_clean(repo_root: Path) -> None:
    result = subprocess.run(
        [sys.executable, '-m', 'mypy', '--config-file', str(repo_root / 'mypy.ini'),
         '--cache-dir', str(repo_root / 'build' / 'mypy')],
        cwd=repo_root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'Success: no issues found' in result.stdout
