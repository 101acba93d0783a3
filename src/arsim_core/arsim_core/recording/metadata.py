"""A bag's ``metadata.yaml``, read as input from outside: bounded in size, every field used
checked for its type, and every storage file it names checked to be a regular file inside the
bag, so that a tampered bag cannot make a tool read, replace or remove anything elsewhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path, PurePosixPath
from typing import Any, Final

from arsim_core.recording.bag import METADATA, RecordingError
from arsim_core.yaml_fields import parse_yaml

MAX_METADATA_BYTES: Final = 16 * 2**20
MAX_FILES: Final = 100_000
MAX_TOPICS: Final = 10_000
MAX_STAGED_ENTRIES: Final = 64  # the recorder leaves one file (and SQLite's journal) there
SUFFIXES: Final = {'mcap': '.mcap', 'sqlite3': '.db3'}
_INFO: Final = 'rosbag2_bagfile_information'


@dataclass
class BagMetadata:
    """What ``metadata.yaml`` says, with the paths it names made safe to open."""

    root: Path  # the bag's folder, symlinks resolved
    document: dict[str, Any]  # the whole file, to be written back
    info: dict[str, Any]
    storage: str
    suffix: str
    files: list[dict[str, Any]]
    paths: list[Path] = field(default_factory=list)  # of files[i], inside root
    topics: list[dict[str, Any]] = field(default_factory=list)
    staging: Path | None = None  # the folder the unfinished last file is in, if it is


class _Checker:
    """Errors that name ``metadata.yaml``, the key and what was expected."""

    def __init__(self, bag: Path) -> None:
        self.where = bag / METADATA

    def fail(self, key: str, problem: str) -> RecordingError:
        return RecordingError(f'{self.where}: {key}: {problem}')

    def mapping(self, value: Any, key: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(key, f'expected a mapping, got {type(value).__name__}')
        return value

    def items(self, value: Any, key: str, limit: int, *, empty: bool = True) -> list[Any]:
        if not isinstance(value, list) or not (value or empty):
            raise self.fail(key, 'expected a list' if empty else 'expected a non-empty list')
        if len(value) > limit:
            raise self.fail(key, f'expected at most {limit} entries, got {len(value)}')
        return value

    def integer(self, value: Any, key: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63:
            raise self.fail(key, f'expected a whole number from 0 to 2^63-1, got {value!r:.80}')
        return value

    def text(self, value: Any, key: str) -> str:
        if not isinstance(value, str) or not value or '\0' in value or len(value) > 4096:
            raise self.fail(key, f'expected a name, got {value!r:.80}')
        return value


def load_metadata(bag: Path) -> BagMetadata:
    """``bag``'s metadata, checked; a RecordingError naming the key of the first problem."""
    bag = Path(bag)
    check = _Checker(bag)
    try:
        with (bag / METADATA).open('rb') as stream:
            raw = stream.read(MAX_METADATA_BYTES + 1)
    except OSError as exc:
        msg = f'{bag}: not a bag ({METADATA}: {exc.strerror or exc})'
        raise RecordingError(msg) from exc
    if len(raw) > MAX_METADATA_BYTES:
        msg = f'{check.where}: larger than {MAX_METADATA_BYTES // 2**20} MiB'
        raise RecordingError(msg)
    try:
        text = raw.decode('utf-8')
    except UnicodeDecodeError as exc:
        msg = f'{check.where}: not YAML (not UTF-8: {exc.reason} at byte {exc.start})'
        raise RecordingError(msg) from exc
    document, _ = parse_yaml(text, str(check.where), RecordingError)
    document = check.mapping(document, 'top level')
    info = check.mapping(document.get(_INFO), _INFO)
    storage = info.get('storage_identifier')
    if not isinstance(storage, str) or storage not in SUFFIXES:  # a list cannot be looked up
        raise check.fail(f'{_INFO}.storage_identifier',
                         f'expected one of {sorted(SUFFIXES)}, got {storage!r:.80}')
    files = check.items(info.get('files'), f'{_INFO}.files', MAX_FILES, empty=False)
    meta = BagMetadata(bag.resolve(), document, info, storage, SUFFIXES[storage], files)
    for index, entry in enumerate(files):
        key = f'{_INFO}.files[{index}]'
        entry = check.mapping(entry, key)
        check.integer(entry.get('message_count'), f'{key}.message_count')
        check.integer(check.mapping(entry.get('starting_time'), f'{key}.starting_time')
                      .get('nanoseconds_since_epoch'),
                      f'{key}.starting_time.nanoseconds_since_epoch')
        check.integer(check.mapping(entry.get('duration'), f'{key}.duration')
                      .get('nanoseconds'), f'{key}.duration.nanoseconds')
        path = _storage_file(check, meta, entry.get('path'), f'{key}.path',
                             last=index == len(files) - 1)
        if path in meta.paths:
            raise check.fail(f'{key}.path', f'{entry["path"]!r} is listed twice')
        meta.paths.append(path)
    listed = info.get('relative_file_paths')
    if listed != [entry['path'] for entry in files]:
        raise check.fail(f'{_INFO}.relative_file_paths', 'expected the paths of files[], in '
                                                         'their order')
    topics = check.items(info.get('topics_with_message_count'),
                         f'{_INFO}.topics_with_message_count', MAX_TOPICS)
    for index, topic in enumerate(topics):
        key = f'{_INFO}.topics_with_message_count[{index}]'
        check.text(check.mapping(check.mapping(topic, key).get('topic_metadata'),
                                 f'{key}.topic_metadata').get('name'),
                   f'{key}.topic_metadata.name')
    meta.topics = topics
    return meta


def _storage_file(check: _Checker, meta: BagMetadata, value: Any, key: str, *,
                  last: bool) -> Path:
    """The file ``value`` names: ``<name><suffix>`` in the bag's folder or, for the last file
    only, ``.<stem>/.<stem><suffix>`` (the staging folder it is written in), with no link on
    the way and nothing outside the bag."""
    name = check.text(value, key)
    expected = (f'expected <name>{meta.suffix} in the bag' + (
        f' or .<stem>/.<stem>{meta.suffix} (a file being written)' if last else ''))
    path = PurePosixPath(name)
    parts = path.parts
    staged = len(parts) == 2 and parts[0].startswith('.') \
        and parts[1] == f'{parts[0]}{meta.suffix}'
    if path.is_absolute() or '..' in parts or '\\' in name or len(parts) > 2 \
            or path.suffix != meta.suffix or len(parts) == 2 and not (staged and last):
        raise check.fail(key, f'{name!r:.200} is not a storage file of this bag; {expected}')
    inside = meta.root.joinpath(*parts)
    try:
        real = inside.resolve()
        regular = inside.is_file()
    except (OSError, RuntimeError) as exc:
        raise check.fail(key, f'{name!r:.200} cannot be opened ({exc})') from exc
    if real != inside:
        raise check.fail(key, f'{name!r:.200} is a link or leads out of the bag; {expected}')
    if not regular:
        raise check.fail(key, f'{name!r:.200} is not a file in the bag; {expected}')
    if staged:
        meta.staging = inside.parent
        entries = list(islice(meta.staging.iterdir(), MAX_STAGED_ENTRIES + 1))
        if len(entries) > MAX_STAGED_ENTRIES or any(
                entry.is_symlink() or not entry.is_file() for entry in entries):
            raise check.fail(key, f'{parts[0]!r} holds more than the file being written '
                                  f'(links, folders); expected the folder the recorder left')
    return inside

