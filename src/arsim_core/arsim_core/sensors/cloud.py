"""The organised point-cloud layout of ouster-ros (its default ``original`` point type), so
consumers written for a real Ouster (LIO-SAM, FAST-LIO, KISS-ICP, ...) read arsim's clouds
unchanged: 48-byte points, height = channels, width = columns, row-major.

| field | offset | type | meaning |
| --- | --- | --- | --- |
| x, y, z | 0, 4, 8 | float32 | point in the sensor frame at its column's time [m] |
| intensity | 16 | float32 | return strength (signal) |
| t | 20 | uint32 | time since the start of the scan [ns] |
| reflectivity | 24 | uint16 | calibrated reflectivity (0..100 diffuse, > 100 retro-reflector) |
| ring | 26 | uint16 | channel, 0 = top |
| ambient | 28 | uint16 | ambient light (0: not simulated) |
| range | 32 | uint32 | range [mm], 0 = no return |

A LiDAR asked for ``labels`` adds ``label`` (offset 36, uint8): the semantic label of what
each point hit (``arsim_core.labels``; 255 where there is no return), in the padding
the layout leaves free, so consumers that read by field name see nothing else change.
"""

from __future__ import annotations

import numpy as np

# sensor_msgs/PointField datatype codes.
INT8, UINT8, INT16, UINT16, INT32, UINT32, FLOAT32, FLOAT64 = range(1, 9)

FIELDS: tuple[tuple[str, int, int], ...] = (
    ('x', 0, FLOAT32), ('y', 4, FLOAT32), ('z', 8, FLOAT32), ('intensity', 16, FLOAT32),
    ('t', 20, UINT32), ('reflectivity', 24, UINT16), ('ring', 26, UINT16),
    ('ambient', 28, UINT16), ('range', 32, UINT32))
LABEL_FIELD: tuple[str, int, int] = ('label', 36, UINT8)
POINT_STEP = 48

_NUMPY = {FLOAT32: '<f4', UINT32: '<u4', UINT16: '<u2', UINT8: 'u1'}
_ALL = (*FIELDS, LABEL_FIELD)
POINT_DTYPE = np.dtype({'names': [f[0] for f in _ALL], 'formats': [_NUMPY[f[2]] for f in _ALL],
                        'offsets': [f[1] for f in _ALL], 'itemsize': POINT_STEP})
