"""What a recording may be asked for: its storage, its bag version and which topics it keeps
(named ones, ones matching a pattern, or all). Light, so the settings loader can check them
without loading the bag library."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final

STORAGE_NAMES: Final = ('mcap', 'sqlite3')  # rosbag2's storage plugins
BAG_VERSIONS: Final = (8, 9)  # 8: read by Humble, Jazzy and Kilted alike


def new_directory_problem(directory: Path) -> str | None:
    """Why a bag cannot be created at ``directory``, or None."""
    if directory.exists():
        return f'{directory} exists already; a recording needs a new directory'
    parent = directory.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        return f'cannot create {directory}: {parent} is not a writable folder'
    return None


@dataclass(frozen=True)
class TopicSelection:
    """``topics`` by exact name and ``pattern`` matched against the whole name; neither
    given: every topic."""

    topics: frozenset[str] = frozenset()
    pattern: re.Pattern[str] | None = None

    def wants(self, topic: str) -> bool:
        if not self.topics and self.pattern is None:
            return True
        return topic in self.topics or (self.pattern is not None
                                        and self.pattern.fullmatch(topic) is not None)
