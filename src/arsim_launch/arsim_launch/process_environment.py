"""The variables a run adds to its node processes' environment: how far ROS discovery reaches
(``arsim_launch.discovery``) and whether Fast DDS needs its large shared-memory segment for
the cars' sensors (``arsim_bridge.dds``)."""

from __future__ import annotations

from collections.abc import Mapping

from arsim_bridge.dds import large_sensor_messages
from arsim_core.config.scenario import Scenario
from arsim_launch.discovery import discovery_environment


def process_environment(scenario: Scenario, environ: Mapping[str, str]
                        ) -> tuple[dict[str, str], str]:
    """The variables to add to ``environ`` for ``scenario``'s processes, and one line saying
    how discovery was chosen."""
    added, discovery = discovery_environment(scenario.ros_discovery, environ)
    kinds = {sensor.kind for car in scenario.cars for sensor in car.profile.sensors}
    return {**added, **large_sensor_messages(kinds)}, discovery
