"""Fitting a car profile to a recorded drive of a real car (``arsim-fit``).

The recorded commands are replayed open loop into the simulator's own ``Vehicle`` with a
candidate profile, over short windows that start from the recorded state (multiple shooting),
and the parameters the drive can identify are chosen so that the simulated speed, yaw rate and
lateral acceleration match the recorded ones. Modules, each with one job:

- ``bagfile``: the bag's messages of the wanted topics, read up to any damage;
- ``recording``: which topics serve, decoded into aligned arrays;
- ``parameters``: the profile values that can be fitted, how to set and write them;
- ``replay``: the multiple-shooting replay and its residuals;
- ``identify``: what the data can tell apart (Jacobian, flat directions, uncertainty);
- ``solve``: the optimiser;
- ``output``: the fitted profile and the domain-randomisation file;
- ``report``: the HTML report.

Nothing here imports ROS: messages are decoded with rosbags from the definitions the bag holds.
"""

from __future__ import annotations

from arsim_core.errors import ArsimError


class FitError(ArsimError):
    """A bag or profile a fit cannot work with, said in one line."""
