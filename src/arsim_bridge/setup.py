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
            'bridge = arsim_bridge.bridge_node:main',
            'description = arsim_bridge.description_node:main',
            'dynamics = arsim_bridge.dynamics_node:main',
            'container = arsim_bridge.container:main',
            'sensors = arsim_bridge.sensor_node:main',
            'track_loader = arsim_bridge.track_node:main',
        ],
    },
)
