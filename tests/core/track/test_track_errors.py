"""Bad track input gives one clear TrackError naming the file, the line and the key."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from arsim_core.errors import ArsimError, TrackError
from arsim_core.track import load_track

HEADER = '# x_m,y_m,w_tr_right_m,w_tr_left_m\n'


def _circle(n=40, radius=10.0):
    a = np.linspace(0, 2 * np.pi, n, endpoint=False)
    return np.stack([radius * np.cos(a), radius * np.sin(a)], axis=1)


def _csv(rows):
    return HEADER + ''.join(f'{x},{y},1.0,1.0\n' for x, y in rows)


def _load_error(spec, maps_dir=None) -> str:
    with pytest.raises(TrackError) as info:
        load_track(spec, maps_dir)
    assert isinstance(info.value, ArsimError)
    return str(info.value)


def test_good_csv_loads(tmp_path):
    path = tmp_path / 'ok.csv'
    path.write_text(_csv(_circle()))
    assert load_track(path).centerline.shape == (40, 2)


def test_repeated_first_point_is_dropped(tmp_path):
    pts = _circle()
    path = tmp_path / 'closed.csv'
    path.write_text(_csv(np.vstack([pts, pts[:1]])))
    assert load_track(path).centerline.shape == (40, 2)


def test_wrong_column_count_names_file_and_line(tmp_path):
    path = tmp_path / 'cols.csv'
    text = _csv(_circle()).splitlines()
    text[5] = '1.0,2.0,3.0'
    path.write_text('\n'.join(text) + '\n')
    msg = _load_error(path)
    assert f'{path}:6:' in msg and 'needs 4 columns, found 3' in msg


def test_nan_names_file_and_line(tmp_path):
    path = tmp_path / 'nan.csv'
    text = _csv(_circle()).splitlines()
    text[10] = 'nan,2.0,1.0,1.0'
    path.write_text('\n'.join(text) + '\n')
    msg = _load_error(path)
    assert f'{path}:11:' in msg and 'NaN' in msg


def test_text_instead_of_number(tmp_path):
    path = tmp_path / 'text.csv'
    path.write_text(HEADER + '1,2,3,4\nx,2,3,4\n5,6,7,8\n')
    assert f'{path}:3:' in _load_error(path)


def test_fewer_than_three_points(tmp_path):
    path = tmp_path / 'short.csv'
    path.write_text(_csv([(0, 0), (1, 0)]))
    msg = _load_error(path)
    assert str(path) in msg and 'at least 3 points' in msg


def test_empty_file(tmp_path):
    path = tmp_path / 'empty.csv'
    path.write_text(HEADER)
    assert 'no data rows' in _load_error(path)


def test_open_centerline(tmp_path):
    path = tmp_path / 'open.csv'
    path.write_text(_csv(_circle(80)[:40]))  # half a circle
    msg = _load_error(path)
    assert f'{path}:41:' in msg and 'not closed' in msg


def test_self_intersecting_centerline(tmp_path):
    t = np.linspace(0, 2 * np.pi, 80, endpoint=False)
    eight = np.stack([10 * np.sin(t), 5 * np.sin(2 * t)], axis=1)
    path = tmp_path / 'eight.csv'
    path.write_text(_csv(eight))
    msg = _load_error(path)
    assert 'intersects itself' in msg and f'{path}:' in msg
    assert 'line' in msg


def test_negative_width(tmp_path):
    path = tmp_path / 'neg.csv'
    text = _csv(_circle()).splitlines()
    text[3] = text[3].rsplit(',', 1)[0] + ',-1.0'
    path.write_text('\n'.join(text) + '\n')
    assert f'{path}:4:' in _load_error(path)


def _map_folder(tmp_path, yaml_text, image=True):
    folder = tmp_path / 'map'
    folder.mkdir()
    if image:
        import cv2

        img = np.full((60, 60), 254, np.uint8)
        img[5:55, 5] = img[5:55, 54] = img[5, 5:55] = img[54, 5:55] = 0
        img[25:35, 25:35] = 0
        cv2.imwrite(str(folder / 'm.png'), img)
    (folder / 'm.yaml').write_text(yaml_text)
    return folder / 'm.yaml'


MAP_YAML = (
    'image: m.png\nresolution: 0.1\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n'
    'occupied_thresh: 0.65\nfree_thresh: 0.196\n'
)


def test_ros_map_without_centerline_extracts_one(tmp_path):
    track = load_track(_map_folder(tmp_path, MAP_YAML))
    assert track.walls_are_outlines
    assert 5.0 < track.length < 20.0


def test_missing_image_names_yaml_line_and_key(tmp_path):
    path = _map_folder(tmp_path, MAP_YAML.replace('m.png', 'gone.png'))
    msg = _load_error(path)
    assert f'{path}:1: image: names ' in msg and 'gone.png' in msg


def test_corrupt_image(tmp_path):
    path = _map_folder(tmp_path, MAP_YAML, image=False)
    (path.parent / 'm.png').write_bytes(b'not a png')
    msg = _load_error(path)
    assert f'{path}:1:' in msg and 'cannot decode' in msg


def test_unreadable_yaml_names_line(tmp_path):
    path = _map_folder(tmp_path, 'image: m.png\nresolution: [0.1\norigin: 3\n')
    msg = _load_error(path)
    assert f'{path}:3:7: invalid YAML' in msg


def test_map_yaml_with_bad_resolution(tmp_path):
    path = _map_folder(tmp_path, MAP_YAML.replace('0.1', 'fine'))
    msg = _load_error(path)
    assert f'{path}:2: resolution: expected a number > 0' in msg


def test_map_yaml_missing_origin(tmp_path):
    text = '\n'.join(line for line in MAP_YAML.splitlines() if 'origin' not in line)
    msg = _load_error(_map_folder(tmp_path, text))
    assert 'origin: missing, expected a list of 3 finite numbers' in msg


@pytest.fixture
def ring_copy(tmp_path, maps_dir):
    dst = tmp_path / 'maps' / 'mine'
    shutil.copytree(maps_dir / 'arsim_ring', dst)
    return dst


def _edit_yaml(folder, old, new):
    path = folder / 'track.yaml'
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))
    return path


def test_track_folder_by_name_from_maps_dir(ring_copy):
    track = load_track('mine', ring_copy.parent)
    assert track.name == 'arsim_ring' and track.source == ring_copy / 'track.yaml'


def test_unknown_track_name_lists_known_ones(ring_copy):
    msg = _load_error('nope', ring_copy.parent)
    assert 'nope' in msg and 'mine' in msg


def test_unknown_format_names_key_and_line(ring_copy):
    path = _edit_yaml(ring_copy, 'format: tum_csv', 'format: dxf')
    msg = _load_error(ring_copy)
    assert f'{path}:' in msg and ' format: expected one of ' in msg and 'tum_csv' in msg


def test_missing_data_file(ring_copy):
    path = _edit_yaml(ring_copy, 'file: centerline.csv', 'file: other.csv')
    msg = _load_error(ring_copy)
    assert f'{path}:' in msg and ' file: names ' in msg and 'other.csv' in msg


def test_start_index_out_of_range(ring_copy):
    path = _edit_yaml(ring_copy, 'index: 20 ', 'index: 5000 ')
    msg = _load_error(ring_copy)
    assert str(path) in msg and "'start.index'" in msg


def test_bad_direction_names_key(ring_copy):
    path = _edit_yaml(ring_copy, 'direction: forward', 'direction: sideways')
    msg = _load_error(ring_copy)
    assert f'{path}:' in msg and ' start.direction: expected one of ' in msg


def test_bad_units(ring_copy):
    _edit_yaml(ring_copy, 'units: m ', 'units: ft ')
    assert ' units: expected one of ' in _load_error(ring_copy)


def test_bad_csv_in_track_folder_names_csv(ring_copy):
    csv = ring_copy / 'centerline.csv'
    lines = csv.read_text().splitlines()
    lines[100] = '1,2'
    csv.write_text('\n'.join(lines) + '\n')
    assert f'{csv}:101:' in _load_error(ring_copy)


def test_reverse_direction_and_scale(ring_copy, maps_dir):
    base = load_track('arsim_ring', maps_dir)
    _edit_yaml(ring_copy, 'direction: forward', 'direction: reverse')
    _edit_yaml(ring_copy, 'units: m ', 'units: m\nscale: 2.0 ')
    track = load_track(ring_copy)
    assert track.length == pytest.approx(2 * base.length)
    np.testing.assert_allclose(track.centerline, 2 * base.centerline[::-1])
    np.testing.assert_allclose(track.width_left, 2 * base.width_right[::-1])
    x, y, yaw = track.start_pose
    bx, by, byaw = base.start_pose
    assert (x, y) == pytest.approx((2 * bx, 2 * by))
    assert abs(np.angle(np.exp(1j * (yaw - byaw - np.pi)))) < 0.05


def test_unknown_file_type(tmp_path):
    path = tmp_path / 'track.dxf'
    path.write_text('x')
    assert 'unknown track file type' in _load_error(path)


def test_bad_raceline_columns(ring_copy):
    (ring_copy / 'race.csv').write_text('# s;x;y\n0;1;2\n')
    path = ring_copy / 'track.yaml'
    path.write_text(path.read_text() + 'raceline: race.csv\n')
    msg = _load_error(ring_copy)
    assert f'{ring_copy / "race.csv"}:2:' in msg and 'needs 7 columns' in msg


def test_corrupt_mesh_file(tmp_path):
    path = tmp_path / 'broken.glb'
    path.write_bytes(b'glTF garbage')
    msg = _load_error(path)
    assert str(path) in msg and 'cannot read mesh' in msg


@pytest.mark.parametrize(('old', 'new', 'key'), [
    ('format: tum_csv', 'format: tum_csv\nbarrier_hieght: 0.5', 'barrier_hieght'),
    ('  direction: forward', '  direction: forward\n  lane: 2', 'start.lane'),
    ('format: tum_csv', 'format: tum_csv\noptions: {simplify_cells: 0.3}',
     'options.simplify_cells'),  # a map option, which a CSV track does not read
])
def test_an_unknown_key_of_track_yaml_is_refused_with_its_line(ring_copy, old, new, key):
    path = _edit_yaml(ring_copy, old, new)
    lines = path.read_text().splitlines()
    leaf = key.rsplit('.', 1)[-1]
    number = next(i for i, text in enumerate(lines, 1) if f'{leaf}:' in text)
    msg = _load_error(ring_copy)
    assert msg.startswith(f'{path}:{number}: {key}: unknown key, expected '), msg


def test_each_format_accepts_the_options_its_loader_reads():
    from arsim_core.track.loaders import FORMAT_OPTIONS

    assert FORMAT_OPTIONS['mesh'] == {'up_axis', 'slice_height', 'resolution'}
    assert FORMAT_OPTIONS['ros_map'] == FORMAT_OPTIONS['f1tenth'] == {'simplify_cells',
                                                                      'min_region_cells'}


def test_an_option_of_the_wrong_kind_is_refused_with_its_line(tmp_path):
    folder = _map_folder(tmp_path, MAP_YAML).parent  # writes map/m.yaml and map/m.png
    (folder / 'track.yaml').write_text('format: ros_map\nfile: m.yaml\n'
                                       'options:\n  simplify_cells: lots\n')
    msg = _load_error(folder)
    assert msg.startswith(f"{folder / 'track.yaml'}:4: options.simplify_cells: expected a "
                          f"number >= 0, got 'lots'"), msg


@pytest.mark.parametrize('name', ['../outside/m.yaml', '{outside}/m.yaml', 'link/m.yaml'])
def test_a_track_file_may_name_only_files_inside_its_folder(tmp_path, name):
    """A track folder downloaded from anywhere reads nothing else of the machine: a path that
    is absolute, climbs out with .., or follows a link out is refused with its key and line,
    though the file it names exists and is a valid map."""
    outside = _map_folder(tmp_path, MAP_YAML).parent.rename(tmp_path / 'outside')
    folder = tmp_path / 'track'
    folder.mkdir()
    (folder / 'link').symlink_to(outside, target_is_directory=True)
    (folder / 'track.yaml').write_text(f'format: ros_map\nfile: {name.format(outside=outside)}\n')
    msg = _load_error(folder)
    assert msg.startswith(f"{folder / 'track.yaml'}:2: file: expected a file inside {folder}, "
                          f"got "), msg


@pytest.mark.parametrize('image', ['../secret.png', '{tmp}/secret.png'])
def test_a_map_yaml_may_name_only_an_image_inside_its_folder(tmp_path, image):
    import cv2

    cv2.imwrite(str(tmp_path / 'secret.png'), np.full((60, 60), 254, np.uint8))
    folder = _map_folder(tmp_path, MAP_YAML.replace('m.png', image.format(tmp=tmp_path))).parent
    msg = _load_error(folder / 'm.yaml')
    assert f"image: expected a file inside {folder}, got " in msg, msg
