from setuptools import find_packages, setup

PACKAGE = 'arsim_core'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={PACKAGE: ['py.typed', 'view/static/*']},
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
        # User commands also go to bin/, which colcon's setup.bash puts on the PATH.
        ('bin', ['scripts/arsim-track']),
    ],
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='arsim maintainers',
    maintainer_email='maintainers@arsim.dev',
    description='ROS-free core of the arsim racing simulator.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'backend = arsim_core.process.entrypoints:backend',
            'arsim-track = arsim_core.track.cli:main',
        ],
    },
)
