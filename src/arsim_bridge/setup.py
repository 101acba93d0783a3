from setuptools import find_packages, setup

PACKAGE = 'arsim_bridge'

setup(
    name=PACKAGE,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', [f'resource/{PACKAGE}']),
        (f'share/{PACKAGE}', ['package.xml']),
    ],
    install_requires=['setuptools'],
    zip_safe=False,
    maintainer='arsim maintainers',
    maintainer_email='maintainers@arsim.dev',
    description='ROS 2 nodes of the arsim racing simulator.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'bridge = arsim_bridge.entry_points:bridge',
            'description = arsim_bridge.entry_points:description',
            'dynamics = arsim_bridge.entry_points:dynamics',
            'container = arsim_bridge.entry_points:container',
            'sensors = arsim_bridge.entry_points:sensors',
            'track_loader = arsim_bridge.entry_points:track_loader',
            'foxglove = arsim_bridge.entry_points:foxglove',
            'autopilot = arsim_bridge.entry_points:autopilot',
            'recorder = arsim_bridge.entry_points:recorder',
        ],
    },
)
