from setuptools import find_packages, setup

PACKAGE = 'arsim_gym'

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
    description='Gymnasium environments on the arsim racing simulation engine.',
    license='Apache-2.0',
)
