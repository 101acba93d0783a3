"""Pure-Python fallback: without numba the kernels run as plain Python, with equal results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import F1TENTH_YAML

SCRIPT = '''
import json, sys
from arsim_core.dynamics import NUMBA_ENABLED, Vehicle, load_vehicle_config
import yaml
out = {'numba': NUMBA_ENABLED}
for model in ('ks', 'st', 'std'):
    profile = yaml.safe_load(open(sys.argv[1]))
    profile['model'] = model
    car = Vehicle(load_vehicle_config(profile, sys.argv[1]))
    car.reset(0.0, 0.0, 0.1, speed=1.0)
    car.set_ackermann(4.0, 0.3)
    for _ in range(40):
        car.advance(0.025)
    car.set_normalised(0.2, 0.0, -0.5)
    for _ in range(40):
        car.advance(0.025)
    out[model] = car.state.tolist() + list(car.body_acceleration)
print(json.dumps(out))
'''


def run(numba: str) -> dict[str, object]:
    env = dict(os.environ, ARSIM_NUMBA=numba,
               PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[3] / 'src'
                                                / 'arsim_core'), os.environ.get('PYTHONPATH', '')]))
    done = subprocess.run([sys.executable, '-c', SCRIPT, str(F1TENTH_YAML)], env=env,
                          capture_output=True, text=True, check=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_fallback_matches_compiled() -> None:
    pytest.importorskip('numba')
    fallback = run('0')
    compiled = run('1')
    assert fallback['numba'] is False
    assert compiled['numba'] is True
    for model in ('ks', 'st', 'std'):
        assert fallback[model] == pytest.approx(compiled[model], rel=1e-9, abs=1e-12), model
