"""One fit from start to end: read the bag, replay, optimise, judge, write the profile, the
randomisation file and the report. ``arsim-fit`` is this with a command line around it."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm  # type: ignore[import-untyped]

from arsim_core.config.profile import load_profile
from arsim_core.errors import ArsimError
from arsim_core.fit import FitError, output, report
from arsim_core.fit.figures import ReplayErrors, replay_errors
from arsim_core.fit.identify import Verdict
from arsim_core.fit.parameters import candidates
from arsim_core.fit.recording import read_recording
from arsim_core.fit.replay import Replay, compared_erpm_gain, plan
from arsim_core.fit.solve import fit

#: Replays a fit typically takes, for the progress bar's length.
EXPECTED_REPLAYS = 260


@dataclass(frozen=True)
class Outcome:
    values: dict[str, float]
    verdicts: dict[str, Verdict]
    start_errors: ReplayErrors
    fitted_errors: ReplayErrors
    randomization: dict[str, list[float]]
    seconds: float
    replays: int


def fit_bag(bag: Path, profile: Path, out: Path, report_path: Path, randomization_path: Path,
            progress: bool = True) -> Outcome:
    """Fit ``profile`` to ``bag``; writes ``out``, ``report_path`` and ``randomization_path``."""
    started = time.monotonic()
    try:
        start = load_profile(Path(profile))
    except ArsimError as exc:
        raise FitError(str(exc)) from exc
    vehicle = start.vehicle
    recording = read_recording(Path(bag), vehicle.vesc)
    vesc = recording.commands.vesc is not None
    params = candidates(vehicle, vesc)
    replay = Replay(recording, plan(recording))
    erpm_gain = compared_erpm_gain(recording, vehicle)
    with tqdm(total=EXPECTED_REPLAYS, desc='arsim-fit', unit='replay', disable=not progress,
              leave=False) as bar:
        result = fit(recording, replay, vehicle, params, lambda: bar.update(), erpm_gain)
        replays = int(bar.n)
    start_errors = replay_errors(replay, result.start_sim, erpm_gain)
    fitted_errors = replay_errors(replay, result.fitted_sim, erpm_gain)
    written = output.write_profile(Path(profile), out, params, result.verdicts, str(bag))
    ranges = output.randomization(params, result.values, result.verdicts,
                                  written.vehicle.params.tyre.friction)
    output.write_randomization(randomization_path, ranges, str(bag))
    seconds = time.monotonic() - started
    report.write(report_path, report.ReportData(
        recording, replay, params, result.verdicts, result.start_sim, result.fitted_sim,
        start_errors, fitted_errors, ranges, str(profile), str(out), seconds))
    return Outcome(result.values, result.verdicts, start_errors, fitted_errors, ranges,
                   seconds, replays)
