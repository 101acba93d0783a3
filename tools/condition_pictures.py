"""The pictures of docs/scenes.md, "Light and weather": one view of the full-scale ring in its
circuit scenery under each condition, rendered by the embedded backend's camera.

    python3 tools/condition_pictures.py [OUT_DIR]     # default docs/images

Each condition is a scenario ``conditions`` block, resolved as a run resolves it
(``config.conditions``); the PNGs are small (320 x 180) to keep the repository light.
"""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import cv2
import numpy as np

from arsim_core.backend.server import EmbeddedBackend
from arsim_core.config.conditions import Conditions
from arsim_core.config.scenario import SceneSettings
from arsim_core.engine.world import TrackWorld
from arsim_core.protocol.appearance import DEFAULT
from arsim_core.protocol.messages import CarSettings, InitialSettings
from arsim_core.track import load_track

ROOT = Path(__file__).resolve().parents[1]
TRACK = 'arsim_ring_full_scale'
PLACE = {'latitude_deg': 47.22, 'longitude_deg': 14.76}  # Spielberg, Austria
SUMMER = timezone(timedelta(hours=2))  # CEST
CONDITIONS = {
    'clear_noon': Conditions(datetime(2026, 6, 21, 13, 30, tzinfo=SUMMER), **PLACE),
    'low_sun': Conditions(datetime(2026, 6, 21, 20, 0, tzinfo=SUMMER), **PLACE),
    'dusk': Conditions(datetime(2026, 6, 21, 21, 10, tzinfo=SUMMER), **PLACE),
    'night': Conditions(datetime(2026, 6, 21, 23, 30, tzinfo=SUMMER), **PLACE),
    'overcast': Conditions(datetime(2026, 6, 21, 13, 30, tzinfo=SUMMER), **PLACE,
                           cloud_cover=1.0),
    'fog': Conditions(datetime(2026, 6, 21, 13, 30, tzinfo=SUMMER), **PLACE, cloud_cover=0.8,
                      fog_visibility_m=60.0),
    'rain': Conditions(datetime(2026, 6, 21, 13, 30, tzinfo=SUMMER), **PLACE, cloud_cover=1.0,
                       rain_rate_mm_h=8.0),
}
CAMERA = {'name': 'cam', 'type': 'camera', 'rate_hz': 10.0, 'mount': [1.0, 0.0, 1.2, 0, 0.05, 0],
          'width': 320, 'height': 180, 'fov': 1.6, 'near': 0.1, 'far': 400.0,
          'outputs': ['rgb']}


def render(name: str, backend: EmbeddedBackend, world: TrackWorld, pose: list[float]
           ) -> np.ndarray:
    appearance, weather = CONDITIONS[name].resolve(DEFAULT)
    backend.set_conditions(appearance, weather)
    rendered = backend.render(1, {'ego': pose}, [('ego', 'cam')])
    return next(o.array for o in rendered[0][1].outputs if o.suffix == '/rgb')


def main(out: Path) -> None:
    track = load_track(TRACK, ROOT / 'maps')
    world = TrackWorld.from_track(track, SceneSettings(kind='circuit'))
    backend = EmbeddedBackend()
    backend.apply(InitialSettings(track=world.track_request(),
                                  cars=(CarSettings('ego', None, (CAMERA,)),)))
    x, y, yaw = world.start_pose
    pose = [x, y, 0.0, 0.0, 0.0, yaw]
    out.mkdir(parents=True, exist_ok=True)
    for name in CONDITIONS:
        started = time.perf_counter()
        image = render(name, backend, world, pose)
        path = out / f'conditions_{name}.png'
        cv2.imwrite(str(path), cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                    [cv2.IMWRITE_PNG_COMPRESSION, 9])
        print(f'{path} ({time.perf_counter() - started:.2f} s)')


if __name__ == '__main__':
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / 'docs' / 'images')
