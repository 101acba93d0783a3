"""A backend that cannot render a camera's lens or the calibration target says so in Ready,
and the engine refuses the scenario instead of running without them: against the C# console
host (which renders neither) and the embedded backend's own process (which renders both)."""

from __future__ import annotations

from pathlib import Path

import pytest
from csharp_host import running_host
from simharness import backend_process

from arsim_core.config.scenario import load_scenario
from arsim_core.engine import TrackWorld
from arsim_core.engine.render import ProtocolRenderer, initial_settings
from arsim_core.errors import ProtocolError
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[3]


def settings(scene: str = 'none'):
    scenario = load_scenario(ROOT / 'config' / 'calibration' / 'checkerboard.yaml', ROOT,
                             {'track': {'scene': scene}})
    world = TrackWorld.from_track(load_track(scenario.track.name, ROOT / 'maps'),
                                  scenario.track.scene)
    return initial_settings(scenario, world)


@pytest.mark.csharp_host
def test_the_csharp_host_says_it_renders_no_lens_and_is_refused(tmp_path: Path) -> None:
    with running_host(tmp_path) as (address, _host):
        renderer = ProtocolRenderer(address, 20.0)
        try:
            with pytest.raises(ProtocolError) as caught:
                renderer.start(settings(), 20.0)
        finally:
            renderer.close()
    message = str(caught.value)
    assert "car 'ego' camera 'calib_cam' has a plumb_bob lens" in message
    assert 'the scenario places a checkerboard calibration target' in message
    assert 'renders lenses [] and calibration targets []' in message


def test_the_embedded_backend_process_renders_both() -> None:
    with backend_process() as client:
        renderer = ProtocolRenderer(client.address, 20.0)
        try:
            assert renderer.start(settings(), 20.0)['backend'] == 'arsim-embedded'
        finally:
            renderer.close()
