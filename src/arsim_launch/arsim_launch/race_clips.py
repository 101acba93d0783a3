"""Incident clips of races run in process (``arsim-race run``, each event of a league): the
race hands every frame over as the dataset runner hands its frames (each car's fan-out frame,
``dataset_run.fanout_frames``), the clip recorder decides what goes into a clip
(``arsim_core.race_control.clips``) and the ROS nodes' publishing code packs it
(``arsim_bridge.clip_packer``). The race's own rules stay in the engine; this only records.
"""

from __future__ import annotations

import sys
from pathlib import Path

from arsim_bridge.clip_packer import clip_recorder
from arsim_core.config.scenario import Scenario
from arsim_core.engine import Engine, Frame
from arsim_core.race_control.clips import ClipRecorder
from arsim_launch.dataset_run import KeptReplyRenderer, fanout_frames


class RaceClips:
    """The clips of one race of ``scenario`` (``race.clips``, which must name a
    directory); the engine renders through ``renderer``, which keeps the sensors'
    descriptions the packing needs."""

    def __init__(self, scenario: Scenario, recorder: ClipRecorder) -> None:
        self.scenario = scenario
        self.recorder = recorder
        self.renderer = KeptReplyRenderer()
        self.engine: Engine | None = None

    def start(self, engine: Engine) -> None:
        self.engine = engine

    def write(self, frame: Frame) -> None:
        assert self.engine is not None, 'start the clips with the engine first'
        self.recorder.observe(frame.step, frame.time_ns,
                              fanout_frames(frame, self.engine, self.renderer.meta))
        self.recorder.events(frame.time_ns, frame.judgement.events)

    def close(self) -> list[Path]:
        """Write the clips still open (marked incomplete); every clip's path."""
        self.recorder.close()
        return [summary.path for summary in self.recorder.written]


def race_clips(scenario: Scenario) -> RaceClips | None:
    """The clip sink of ``scenario``'s race (None where it asks for no clips): a
    ``ClipsFactory`` for ``arsim_core.league.race.run_race``."""
    recorder = clip_recorder(scenario, log=lambda line: print(line, file=sys.stderr,
                                                              flush=True))
    return None if recorder is None else RaceClips(scenario, recorder)
