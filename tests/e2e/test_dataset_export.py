"""``arsim-dataset export``: a run recorded on a track with cones becomes a labelled dataset
that the COCO and YOLO readers of other projects load, with labels on the objects' pixels, and
labelled LiDAR clouds in the SemanticKITTI and NumPy layouts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
import yaml
from globox import AnnotationSet
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from pycocotools.coco import COCO
from rclpy.qos import qos_profile_sensor_data
from simharness import Probe, installed_resources
from vision_msgs.msg import Detection2DArray

CAMERA = {'type': 'camera', 'position': [0.2, 0.0, 0.15], 'rate_hz': 10.0, 'width': 320,
          'height': 240, 'fov_rad': 1.6, 'outputs': ['rgb', 'semantic', 'depth']}
LIDAR = {'type': 'lidar3d', 'position': [0.0, 0.0, 0.3], 'rate_hz': 10.0, 'channels': 16,
         'columns': 256, 'vertical_fov_rad': 0.5, 'range_min': 0.3, 'range_max': 30.0,
         'labels': True}


def coned_track(folder: Path) -> Path:
    """arsim_ring with Formula Student cones along its edges, as a mesh track."""
    folder.mkdir()
    resources = installed_resources()
    subprocess.run([sys.executable, '-m', 'arsim_core.track.cli', 'convert',
                    str(resources / 'maps' / 'arsim_ring'), str(folder / 'track.glb'),
                    '--cones'], check=True, capture_output=True)
    (folder / 'centerline.csv').write_bytes(
        (resources / 'maps' / 'arsim_ring' / 'centerline.csv').read_bytes())
    (folder / 'track.yaml').write_text(yaml.safe_dump({
        'name': 'ring_cones', 'format': 'mesh', 'file': 'track.glb',
        'centerline': 'centerline.csv', 'start': {'index': 20}}))
    return folder


def export(bag: Path, out: Path, fmt: str) -> None:
    done = subprocess.run([sys.executable, '-m', 'arsim_launch.dataset_cli', 'export', str(bag),
                           str(out), '--format', fmt], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert f'labelled frames to {out}' in done.stdout


# pycocotools' mask decoding predates NumPy 2's copy keyword.
@pytest.mark.filterwarnings('ignore::DeprecationWarning')
def test_a_recorded_run_exports_coco_and_yolo_labels_on_the_objects_pixels(
        simulation, tmp_path: Path) -> None:
    profile = yaml.safe_load((installed_resources() / 'config' / 'cars' / 'f1tenth.yaml')
                             .read_text())
    profile['Sensors']['camera'] = CAMERA
    profile['Sensors']['lidar'] = LIDAR
    profile['Sensors']['objects'] = {'type': 'objects', 'rate_hz': 10.0, 'range_m': 8.0}
    (tmp_path / 'car.yaml').write_text(yaml.safe_dump(profile, sort_keys=False))
    bag = tmp_path / 'bag'
    sim = simulation(settings={
        'cars': [{'name': 'ego', 'profile': str(tmp_path / 'car.yaml')},
                 {'name': 'opp', 'profile': 'f1tenth'}],
        'track': {'name': str(coned_track(tmp_path / 'track'))},
        'recording': {'directory': str(bag), 'topic_regex': '/camera/.*|/lidar|/objects'}})
    assert sim.wait_for_log('ready; stepping', 90.0), sim.log
    # Frames, not seconds: on a loaded machine three seconds held too few labelled images.
    probe = Probe(sim.domain_id)
    try:
        seen: list[Detection2DArray] = []
        probe.node.create_subscription(Detection2DArray, '/camera/detections', seen.append,
                                       qos_profile_sensor_data)
        assert probe.spin_until(lambda: len(seen) >= 15, 120.0), (len(seen), sim.log)
    finally:
        probe.close()
    os.kill(sim.process.pid, signal.SIGTERM)
    assert sim.process.wait(30) == 0, sim.log

    export(bag, tmp_path / 'coco', 'coco')
    coco = COCO(str(tmp_path / 'coco' / 'annotations.json'))
    names = {c['id']: c['name'] for c in coco.loadCats(coco.getCatIds())}
    assert len(coco.getImgIds()) >= 5
    annotations = coco.loadAnns(coco.getAnnIds())
    assert {names[a['category_id']] for a in annotations} >= {'blue_cone', 'yellow_cone'}
    # Each label lies on its object's pixels: cones blue or yellow in the exported image.
    checked = 0
    for annotation in annotations:
        if annotation['area'] < 30:
            continue
        info = coco.loadImgs(annotation['image_id'])[0]
        rgb = cv2.imread(str(tmp_path / 'coco' / 'images' / info['file_name']))[..., ::-1]
        mask = coco.annToMask(annotation).astype(bool)
        x, y, w, h = annotation['bbox']
        assert mask[:, :x].sum() == mask[:, x + w + 1:].sum() == 0  # the outline in its box
        assert mask[:y, :].sum() == mask[y + h + 1:, :].sum() == 0
        red, green, blue = rgb[mask].astype(float).mean(axis=0)
        if names[annotation['category_id']] == 'blue_cone':
            assert blue > red and blue > green, (red, green, blue)
        elif names[annotation['category_id']] == 'yellow_cone':
            assert red > blue and green > blue, (red, green, blue)
        checked += 1
    assert checked >= 5

    # 3D ground truth around the car: cones of both colours within range, and the other car.
    with next(bag.glob('*.mcap')).open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        objects = [msg for _, _, _, msg in reader.iter_decoded_messages(topics=['/objects'])]
    assert len(objects) >= 5
    for msg in objects:
        assert msg.header.frame_id == 'ego_racecar/base_link'
        found = {(d.results[0].hypothesis.class_id, d.id): d for d in msg.detections}
        assert {name for name, _ in found} == {'blue_cone', 'yellow_cone', 'car'}, found.keys()
        opp = found['car', 'opp'].bbox
        assert (opp.size.x, opp.size.y) == pytest.approx((0.58, 0.31), abs=0.1)
        for detection in msg.detections:
            centre = detection.bbox.center.position
            assert np.hypot(centre.x, centre.y) <= 8.0

    # The live ground truth, recorded from /camera/detections, says what the export says.
    live = {}
    with next(bag.glob('*.mcap')).open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, _, _, msg in reader.iter_decoded_messages(topics=['/camera/detections']):
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            live[stamp] = sorted(
                (d.results[0].hypothesis.class_id, round(d.bbox.center.position.x - d.bbox.size_x
                                                         / 2), round(d.bbox.size_x))
                for d in msg.detections)
    # A run stopped with SIGTERM may end with an image whose detections were still on their
    # way (the bag is complete up to the frame before); every other image has them.
    images = coco.loadImgs(coco.getImgIds())
    assert [i['stamp_ns'] for i in images if i['stamp_ns'] not in live] in \
        ([], [max(i['stamp_ns'] for i in images)])
    for info in images:
        if info['stamp_ns'] not in live:
            continue
        exported = sorted((names[a['category_id']], a['bbox'][0], a['bbox'][2])
                          for a in coco.loadAnns(coco.getAnnIds(imgIds=[info['id']])))
        assert live[info['stamp_ns']] == exported, info['file_name']

    # The live instance mask and flags: each detection's pixels fill exactly its box's extent,
    # as many as its flags say; the exported COCO flags agree.
    checked = 0
    with next(bag.glob('*.mcap')).open('rb') as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        by_stamp: dict[int, dict[str, object]] = {}
        for _, channel, _, msg in reader.iter_decoded_messages(
                topics=['/camera/detections', '/camera/detections/flags',
                        '/camera/instances/image_raw']):
            stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            by_stamp.setdefault(stamp, {})[channel.topic] = msg
    complete = {stamp: got for stamp, got in by_stamp.items() if len(got) == 3}
    assert set(by_stamp) - set(complete) <= {max(by_stamp)}  # at most the last, in flight
    for stamp, got in complete.items():
        boxes = got['/camera/detections'].detections
        flags = got['/camera/detections/flags']
        image = got['/camera/instances/image_raw']
        assert image.encoding == '16UC1' and flags.ids == [d.id for d in boxes]
        mask = np.frombuffer(bytes(image.data), np.uint16).reshape(image.height, image.width)
        for detection, pixels in zip(boxes, flags.pixels, strict=True):
            ys, xs = np.nonzero(mask == int(detection.id))
            assert len(ys) == pixels
            box = detection.bbox
            assert xs.min() == round(box.center.position.x - box.size_x / 2)
            assert xs.max() - xs.min() + 1 == round(box.size_x)
            assert ys.max() - ys.min() + 1 == round(box.size_y)
            checked += 1
        exported = sorted((a['bbox'][0], a['attributes']['truncated'], a['attributes']['occluded'])
                          for a in coco.loadAnns(
            coco.getAnnIds(imgIds=[i['id'] for i in coco.loadImgs(coco.getImgIds())
                                   if i['stamp_ns'] == stamp])))
        if exported:
            assert exported == sorted(
                (round(d.bbox.center.position.x - d.bbox.size_x / 2), t, o)
                for d, t, o in zip(boxes, flags.truncated, flags.occluded, strict=True))
    assert checked > 10

    export(bag, tmp_path / 'yolo', 'yolo')
    data = yaml.safe_load((tmp_path / 'yolo' / 'data.yaml').read_text())
    yolo = AnnotationSet.from_yolo_v5(tmp_path / 'yolo' / 'labels',
                                      image_folder=tmp_path / 'yolo' / 'images',
                                      image_extension='.png')
    assert len(yolo) == len(coco.getImgIds())
    labels = [data['names'][int(box.label)] for image in yolo for box in image.boxes]
    assert sorted(labels) == sorted(names[a['category_id']] for a in annotations)

    # Clouds: every return once, with its label, alike in both layouts.
    export(bag, tmp_path / 'kitti', 'kitti')
    export(bag, tmp_path / 'npy', 'npy')
    names = yaml.safe_load((tmp_path / 'kitti' / 'labels.yaml').read_text())['labels']
    scans = sorted((tmp_path / 'kitti' / 'velodyne').glob('*.bin'))
    assert len(scans) >= 5
    seen = set()
    for scan in scans:
        points = np.fromfile(scan, dtype='<f4').reshape(-1, 4)
        point_labels = np.fromfile(tmp_path / 'kitti' / 'labels' / f'{scan.stem}.label',
                                   dtype='<u4')
        assert len(point_labels) == len(points) > 1000 and np.all(np.isfinite(points))
        array = np.load(tmp_path / 'npy' / 'clouds' / f'{scan.stem}.npy')
        np.testing.assert_array_equal(array['x'], points[:, 0])
        np.testing.assert_array_equal(array['label'], point_labels)
        seen |= {names[int(label)] for label in np.unique(point_labels)}
    assert {'road', 'barrier', 'cone_blue', 'cone_yellow'} <= seen, seen
