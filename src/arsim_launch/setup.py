from pathlib import Path

from setuptools import find_packages, setup

PACKAGE = 'arsim_launch'
# config/, maps/ and rviz/ live at the workspace root; they are installed with this package so
# that an installed workspace is self-contained.
ROOT = Path('..', '..')


def tree(folder: str) -> list[tuple[str, list[str]]]:
    files = sorted(p for p in (ROOT / folder).rglob('*') if p.is_file())
    by_dir: dict[str, list[str]] = {}
    for path in files:
        target = Path('share', PACKAGE, path.parent.relative_to(ROOT))
        by_dir.setdefault(str(target), []).append(str(path))
    return sorted(by_dir.items())


setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        (f'share/{PACKAGE}/launch', ['launch/sim.launch.py']),
        *tree('config'), *tree('maps'), *tree('rviz'),
        # User commands also go to bin/, which colcon's setup.bash puts on the PATH.
        ('bin', ['scripts/arsim-dataset', 'scripts/arsim-fit', 'scripts/arsim-race']),
    ],
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='arsim maintainers',
    maintainer_email='maintainers@arsim.dev',
    description='Launch generation and default resources of the arsim racing simulator.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'sim = arsim_launch.__main__:main',
            'arsim-dataset = arsim_launch.dataset_cli:main',
            'arsim-fit = arsim_launch.fit_cli:main',
            'arsim-race = arsim_launch.race_cli:main',
        ],
    },
)
