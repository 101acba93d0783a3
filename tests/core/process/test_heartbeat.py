"""Heartbeats: a process beats the file its launcher names, a thread beats one beside it, and
the launcher reads the stalest of them."""

from __future__ import annotations

import os
import time
from pathlib import Path

from arsim_core.process import heartbeat
from arsim_core.process.heartbeat import Heartbeat


def test_without_a_launcher_nothing_is_written(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv(heartbeat.ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    Heartbeat.from_environment().beat()
    Heartbeat.from_environment('receive').beat()
    assert list(tmp_path.iterdir()) == []


def test_the_stalest_beat_of_a_process_and_its_threads_counts(tmp_path: Path,
                                                              monkeypatch) -> None:
    path = tmp_path / 'ego_sensors'
    monkeypatch.setenv(heartbeat.ENV, str(path))
    assert heartbeat.silence(path) is None  # not started yet: nothing to judge
    main, thread = Heartbeat.from_environment(), Heartbeat.from_environment('scan-receive')
    main.beat()
    thread.beat()
    assert thread.path == tmp_path / 'ego_sensors.scan-receive'
    assert heartbeat.silence(path) < 1.0

    old = time.time() - 10.0
    os.utime(thread.path, (old, old))  # the thread is stuck while the main loop runs
    main.beat()
    assert 9.0 < heartbeat.silence(path) < 11.0
    thread.beat()  # within PERIOD_S of its last beat: not written again
    assert 9.0 < heartbeat.silence(path) < 11.0


def test_a_beat_after_the_launchers_folder_is_gone_is_harmless(tmp_path: Path) -> None:
    beating = Heartbeat(tmp_path / 'gone' / 'bridge')
    beating.beat()
    assert beating.path is None


def test_the_first_process_silent_past_the_timeout_is_named(tmp_path: Path) -> None:
    fresh, stale, unborn = tmp_path / 'bridge', tmp_path / 'ego_sensors', tmp_path / 'backend'
    fresh.touch()
    stale.touch()
    old = time.time() - 30.0
    os.utime(stale, (old, old))
    files = [('backend', unborn), ('bridge', fresh), ('ego_sensors', stale)]
    key, seconds = heartbeat.first_silent(files, 20.0)
    assert key == 'ego_sensors' and 29.0 < seconds < 31.0
    assert heartbeat.first_silent(files, 40.0) is None  # a file never beaten is not judged


def test_long_work_in_the_main_loop_beats_from_a_thread_and_only_while_it_lasts(
        tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / 'backend'
    monkeypatch.setenv(heartbeat.ENV, str(path))
    heartbeat.start()
    heartbeat.beat()
    with heartbeat.beating():
        time.sleep(4 * heartbeat.PERIOD_S)  # the loop held up, as by a compiling kernel
        silence = heartbeat.silence(path)
        assert silence is not None and silence < 2 * heartbeat.PERIOD_S
    time.sleep(4 * heartbeat.PERIOD_S)  # the work is done and the loop does not beat
    silence = heartbeat.silence(path)
    assert silence is not None and silence > 3 * heartbeat.PERIOD_S
