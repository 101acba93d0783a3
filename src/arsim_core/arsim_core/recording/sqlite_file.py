"""SQLite storage files of a bag, through Python's ``sqlite3``: kept committed while they are
written, and read back (or made whole) after their recorder was killed.

rosbags' writer holds every message of a file in one transaction until it closes. While a
file is written it is switched to write-ahead logging and committed at each checkpoint, its
log then copied into the database file, so that the database file alone (which rosbags' reader
opens read-only, ignoring any log) holds everything up to the last checkpoint and a kill
loses only what came after it. Closing switches it back to a plain rollback journal, so a
complete bag is one self-contained file.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from urllib.request import pathname2url


def start_logging(db: sqlite3.Connection) -> None:
    """Let ``db``'s commits reach its file without rewriting it in place."""
    db.commit()
    db.execute('PRAGMA journal_mode=WAL')


def commit(db: sqlite3.Connection) -> None:
    """Everything written so far, committed and copied into the database file."""
    db.commit()
    db.execute('PRAGMA wal_checkpoint(TRUNCATE)')


def stop_logging(db: sqlite3.Connection) -> None:
    """Back to a self-contained database file (before the writer's own close)."""
    db.commit()
    db.execute('PRAGMA journal_mode=DELETE')


#: What reading a damaged SQLite file raises: a sqlite3.Error, or a UnicodeDecodeError where
#: the damage put bytes that are not UTF-8 into the names SQLite's error message quotes
#: (Python's sqlite3 decodes every message as UTF-8).
SQLITE_ERRORS = (sqlite3.Error, UnicodeDecodeError)


@contextlib.contextmanager
def _opened(path: Path, *, read_only: bool) -> Iterator[sqlite3.Connection]:
    """``path`` opened by SQLite (never created), its schema not trusted to run code; a
    problem is one of SQLITE_ERRORS."""
    mode = 'ro' if read_only else 'rw'
    db = sqlite3.connect(f'file:{pathname2url(str(path))}?mode={mode}', uri=True)
    try:
        db.execute('PRAGMA trusted_schema=OFF')
        yield db
    finally:
        db.close()


def settle(path: Path) -> tuple[int, int, int]:
    """Make the file a killed recorder left whole: SQLite rolls back the transaction the kill
    cut short and folds its log into the file; (messages, first and last time)."""
    with _opened(path, read_only=False) as db:
        commit(db)
        stop_logging(db)
        count, first, end = db.execute(
            'SELECT COUNT(*), MIN(timestamp), MAX(timestamp) FROM messages').fetchone()
    return int(count), int(first or 0), int(end or 0)


def topic_counts(path: Path) -> Counter[str]:
    """Messages per topic of a complete SQLite file."""
    with _opened(path, read_only=True) as db:
        rows = db.execute('SELECT topics.name, COUNT(*) FROM messages JOIN topics ON '
                          'messages.topic_id = topics.id GROUP BY topics.name').fetchall()
    return Counter({str(name): int(count) for name, count in rows})
