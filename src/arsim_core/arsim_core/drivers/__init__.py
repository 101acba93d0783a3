"""The driver zoo: built-in drivers of graded skill, and users' Gym policies, for races run in
process (docs/race-control.md, "The driver zoo"). ``zoo.build_driver`` makes the driver a
car's ``driver`` names."""
