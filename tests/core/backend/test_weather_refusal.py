"""A backend says in Ready which weather it renders, and the engine refuses a scenario whose
weather needs more instead of running in clear air: the C# console host (which renders none),
the embedded backend's process (all of it), and Ready's capabilities on the wire."""

from __future__ import annotations

from pathlib import Path

import pytest
from csharp_host import running_host
from simharness import backend_process

from arsim_core.config.scenario import load_scenario
from arsim_core.engine import TrackWorld
from arsim_core.engine.render import ProtocolRenderer, initial_settings
from arsim_core.errors import ProtocolError
from arsim_core.protocol import framing
from arsim_core.protocol.messages import InitialSettings, Ready, encode
from arsim_core.protocol.weather import NAMES, Weather
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[3]


def settings(tmp_path: Path) -> InitialSettings:
    path = tmp_path / 'foggy.yaml'
    path.write_text('simulation: {}\ntrack: {name: arsim_ring, scene: none}\n'
                    'cars: [{name: ego, profile: f1tenth}]\n'
                    'conditions: {fog: {visibility_m: 120}, rain: {rate_mm_h: 3}}\n')
    scenario = load_scenario(path, ROOT)
    world = TrackWorld.from_track(load_track(scenario.track.name, ROOT / 'maps'))
    return initial_settings(scenario, world)


def test_ready_carries_the_conditions_a_backend_renders() -> None:
    ready = Ready('b', 't', conditions=('fog',))
    frames = encode(ready, 0, 0)
    again = Ready.from_wire(framing.decode(frames))
    assert again.conditions == ('fog',)
    weather = InitialSettings(track=None, weather=Weather(fog_visibility_m=50.0,  # type: ignore[arg-type]
                                                          rain_rate_mm_h=1.0))
    assert again.unrenderable(weather) == [
        "the scenario's conditions need rain, and backend 'b' renders conditions ['fog']"]
    older = Ready('old', 't')  # a peer without the capability renders no weather
    assert older.unrenderable(weather)[0].startswith("the scenario's conditions need fog, rain")
    assert Ready('all', 't', conditions=NAMES).unrenderable(weather) == []
    assert older.unrenderable(InitialSettings(track=None)) == []  # type: ignore[arg-type]


@pytest.mark.csharp_host
def test_the_csharp_host_renders_no_weather_and_is_refused(tmp_path: Path) -> None:
    with running_host(tmp_path) as (address, _host):
        renderer = ProtocolRenderer(address, 20.0)
        try:
            with pytest.raises(ProtocolError) as caught:
                renderer.start(settings(tmp_path), 20.0)
        finally:
            renderer.close()
    assert "the scenario's conditions need fog, rain, and backend" in str(caught.value)
    assert 'renders conditions []' in str(caught.value)


def test_the_embedded_backend_process_renders_the_weather(tmp_path: Path) -> None:
    with backend_process() as client:
        renderer = ProtocolRenderer(client.address, 20.0)
        try:
            assert renderer.start(settings(tmp_path), 20.0)['backend'] == 'arsim-embedded'
        finally:
            renderer.close()
