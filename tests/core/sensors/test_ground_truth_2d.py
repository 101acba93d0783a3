"""2D ground truth from a semantic image: boxes that match its pixels exactly, one per object,
with truncation and occlusion flags."""

from __future__ import annotations

import numpy as np

from arsim_core import labels
from arsim_core.sensors.ground_truth import boxes

H, W = 60, 80


def image(*regions: tuple[int, int, int, int, int]) -> np.ndarray:
    """A semantic image of road with (label, x, y, width, height) rectangles drawn in order."""
    semantic = np.full((H, W), labels.ROAD, np.uint8)
    for label, x, y, w, h in regions:
        semantic[y:y + h, x:x + w] = label
    return semantic


def test_each_object_is_boxed_exactly_by_its_pixels_with_its_class() -> None:
    semantic = image((labels.CONE_BLUE, 10, 20, 5, 8), (labels.CONE_YELLOW, 40, 30, 3, 4),
                     (labels.CAR, 55, 10, 12, 6), (labels.BARRIER, 0, 0, 80, 3))
    found, instances = boxes(semantic)
    assert [(b.name, b.x, b.y, b.width, b.height, b.pixels) for b in found] == [
        ('blue_cone', 10, 20, 5, 8, 40), ('yellow_cone', 40, 30, 3, 4, 12),
        ('car', 55, 10, 12, 6, 72)]
    for index, box in enumerate(found, start=1):  # the mask is the object's pixels
        ys, xs = np.nonzero(instances == index)
        assert (xs.min(), ys.min(), xs.max() + 1, ys.max() + 1) == \
            (box.x, box.y, box.x + box.width, box.y + box.height)
        assert np.all(semantic[instances == index] == box.label)
    assert not any(b.truncated or b.occluded for b in found)


def test_an_object_at_the_border_is_truncated_and_one_beside_a_barrier_occluded() -> None:
    semantic = image((labels.BARRIER, 20, 10, 4, 20), (labels.CONE_BLUE, 24, 12, 3, 6),
                     (labels.CAR, 70, 50, 10, 10), (labels.CONE_YELLOW, 40, 40, 1, 2))
    found, _ = boxes(semantic)
    by_name = {b.name: b for b in found}
    assert by_name['blue_cone'].occluded and not by_name['blue_cone'].truncated
    assert by_name['car'].truncated and not by_name['car'].occluded
    assert 'yellow_cone' not in by_name  # two pixels: below MIN_PIXELS


def test_depth_splits_touching_objects_and_says_which_one_is_hidden() -> None:
    # A near cone (4 m) in front of a far one (9 m) of the same colour, touching in the image.
    semantic = image((labels.CONE_BLUE, 10, 10, 10, 12), (labels.CONE_BLUE, 20, 14, 8, 8))
    depth = np.full((H, W), 30.0, np.float32)
    depth[10:22, 10:20] = 4.0
    depth[14:22, 20:28] = 9.0
    assert len(boxes(semantic)[0]) == 1  # without depth: one region
    found, instances = boxes(semantic, depth)
    assert sorted((b.x, b.y, b.width, b.height) for b in found) == [(10, 10, 10, 12),
                                                                  (20, 14, 8, 8)]
    near, far = sorted(found, key=lambda b: b.x)
    assert not near.occluded and far.occluded
    assert (instances > 0).sum() == near.pixels + far.pixels == 120 + 64
