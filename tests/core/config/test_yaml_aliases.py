"""YAML anchors and aliases in config files: legitimate ones load, ones that expand without
bound or refer to themselves are refused with an error naming the file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from arsim_core.config.scenario import load_scenario, parse_overrides
from arsim_core.errors import ConfigError
from arsim_core.yaml_fields import MAX_FLOW_DEPTH, load_section, load_yaml


def laughs(levels: int) -> str:
    """The "billion laughs": each level a list of ten aliases of the one before."""
    lines = ['l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]']
    lines += [f'l{i}: &l{i} [{", ".join([f"*l{i - 1}"] * 10)}]' for i in range(1, levels + 1)]
    return '\n'.join(lines) + '\n'


@pytest.mark.timeout(30)
def test_an_alias_bomb_is_refused_at_once(tmp_path: Path) -> None:
    """Nine levels, under 1 KB, used to keep the loader busy for minutes."""
    path = tmp_path / 'bomb.yaml'
    path.write_text(laughs(9))
    assert len(path.read_bytes()) < 1024
    with pytest.raises(ConfigError, match=r'bomb\.yaml:\d+: too many aliased nodes'):
        load_section(path)
    with pytest.raises(ConfigError, match='too many aliased nodes'):
        load_yaml(path)


@pytest.mark.timeout(30)
def test_an_alias_bomb_in_a_scenario_is_refused(tmp_path: Path, repo_root: Path) -> None:
    path = tmp_path / 'sim.yaml'
    path.write_text((repo_root / 'config' / 'sim.yaml').read_text() + '\nbomb:\n' +
                    ''.join(f'  {line}\n' for line in laughs(9).splitlines()))
    with pytest.raises(ConfigError, match=r'sim\.yaml:\d+: too many aliased nodes'):
        load_scenario(path, repo_root)


@pytest.mark.timeout(30)
@pytest.mark.parametrize('text', ['a: &a [*a]\n', 'x: 1\na: &a {b: *a}\n',
                                  'a: &a\n  - [1, 2]\n  - {c: [*a]}\n'])
def test_a_recursive_alias_is_refused_naming_file_and_line(tmp_path: Path, text: str) -> None:
    """It used to end in RecursionError."""
    path = tmp_path / 'loop.yaml'
    path.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if '&a' in row)
    with pytest.raises(ConfigError, match=rf'loop\.yaml:{line}: recursive YAML alias'):
        load_section(path)


@pytest.mark.timeout(30)
def test_nesting_too_deep_is_refused(tmp_path: Path) -> None:
    path = tmp_path / 'deep.yaml'
    path.write_text('a: ' + '[' * 50_000 + ']' * 50_000 + '\n')
    with pytest.raises(ConfigError, match=r'deep\.yaml:1:\d+: .*nest'):
        load_section(path)


@pytest.mark.parametrize('opening', ['[', '{a: '])
def test_flow_nesting_is_refused_where_it_passes_the_limit(tmp_path: Path,
                                                            opening: str) -> None:
    """Refused as it is scanned, naming the line and column: PyYAML's scanner works per open
    level for every token, so thousands of levels would cost it seconds before any error."""
    closing = ']' if opening == '[' else '}'
    path = tmp_path / 'deep.yaml'
    path.write_text('ok: [[[1]]]\nb: ' + opening * 3000 + '1' + closing * 3000 + '\n')
    column = 4 + len(opening) * MAX_FLOW_DEPTH
    with pytest.raises(ConfigError, match=rf'deep\.yaml:2:{column}: invalid YAML: lists and '
                                          rf'mappings nest deeper than {MAX_FLOW_DEPTH} '):
        load_section(path)
    path.write_text('b: ' + opening * MAX_FLOW_DEPTH + '1' + closing * MAX_FLOW_DEPTH + '\n')
    assert load_section(path).raw('b') is not None


def test_ordinary_aliases_still_load_with_their_lines(tmp_path: Path) -> None:
    path = tmp_path / 'cars.yaml'
    path.write_text('base: &base {mass: 3.5, wheelbase: 0.33}\n'
                    'cars:\n'
                    '  - {name: a, params: *base}\n'
                    '  - {name: b, params: {<<: *base, mass: 4.0}}\n'
                    'shared: [*base, *base]\n')
    section = load_section(path)
    cars = section.raw('cars')
    assert cars[0]['params'] == {'mass': 3.5, 'wheelbase': 0.33}
    assert cars[1]['params'] == {'mass': 4.0, 'wheelbase': 0.33}
    assert section.raw('shared') == [cars[0]['params']] * 2
    with pytest.raises(ConfigError, match=r'cars\.yaml:2: cars'):
        section.string('cars')


@pytest.mark.timeout(30)
def test_overrides_are_read_with_the_same_bounds() -> None:
    with pytest.raises(ConfigError, match='too many aliased nodes'):
        parse_overrides(laughs(9))
    with pytest.raises(ConfigError, match='recursive YAML alias'):
        parse_overrides('a: &a [*a]')
    assert parse_overrides('simulation: {seed: 3}') == {'simulation': {'seed': 3}}
    with pytest.raises(ConfigError, match='must be a mapping'):
        parse_overrides('[1, 2]')


@pytest.mark.parametrize('text', ['\x1fnull\n', '\x00a: 1\n', 'a: \x07\n', f'a: {"9" * 5000}\n'])
def test_a_file_pyyaml_cannot_read_or_build_is_a_config_error(tmp_path, text):
    """Control characters stop PyYAML's reader before parsing starts, and an integer of more
    digits than Python converts stops it while building: both are the file's fault."""
    path = tmp_path / 'odd.yaml'
    path.write_text(text)
    with pytest.raises(ConfigError, match=f'{path}.*: invalid YAML: '):
        load_section(path)


def test_an_integer_too_large_for_a_float_is_refused_naming_the_key(tmp_path: Path) -> None:
    """A YAML integer of a few hundred digits is a valid int that no float holds."""
    path = tmp_path / 'big.yaml'
    path.write_text('barrier_height: ' + '9' * 400 + '\n')
    with pytest.raises(ConfigError, match=r'big\.yaml:1: barrier_height: expected a number'):
        load_section(path).number('barrier_height', minimum=0.0)
