"""Incident clips' settings (``race.clips`` in a scenario): where the clips go, how many
seconds around an incident each holds and the bounds on them (docs/race-control.md, "Clips").

No ``directory``: no clips. A run writes files only where it is told to, so a scenario that
does not ask for clips leaves no trace and pays nothing for them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from arsim_core.yaml_fields import Section

MAX_WINDOW_S = 30.0  # before or after an incident: a clip is a look at one moment, not a log


@dataclass(frozen=True)
class ClipSettings:
    """``before_s`` and ``after_s`` of sim time around each incident go into one MCAP file in
    ``directory`` (None: no clips); at most ``max_clips`` a run, each at most ``max_clip_mib``
    of messages. ``contacts``: a contact between cars that no ruling judged (stewards off, a
    track without a centerline) is an incident too. ``buffer_mib`` bounds the sensor data kept
    for the seconds before an incident, all cars together."""

    directory: Path | None = None
    before_s: float = 3.0
    after_s: float = 2.0
    max_clips: int = 50
    max_clip_mib: float = 16.0
    buffer_mib: float = 256.0
    contacts: bool = True

    @property
    def enabled(self) -> bool:
        return self.directory is not None


def load_clips(race: Section) -> ClipSettings:
    """``race.clips`` checked, every key optional; a relative ``directory`` is relative to the
    scenario file, as the recording's is."""
    section = race.section('clips', {})
    section.reject_unknown({'directory', 'before_s', 'after_s', 'max_clips', 'max_clip_mib',
                            'buffer_mib', 'contacts'})
    directory = None
    if section.has('directory'):
        directory = Path(section.string('directory')).expanduser()
        if not directory.is_absolute():
            directory = Path(section.source).parent / directory
    return ClipSettings(
        directory=directory,
        before_s=section.number('before_s', 3.0, minimum=0.0, maximum=MAX_WINDOW_S),
        after_s=section.number('after_s', 2.0, minimum=0.0, maximum=MAX_WINDOW_S),
        max_clips=section.integer('max_clips', 50, minimum=1),
        max_clip_mib=section.number('max_clip_mib', 16.0, minimum=0.0, exclusive_minimum=True,
                                    maximum=1024.0),
        buffer_mib=section.number('buffer_mib', 256.0, minimum=0.0, maximum=16384.0),
        contacts=section.boolean('contacts', True))
