"""Races run in process between drivers of the zoo and users' policies, and leagues of them
with a rating table (``arsim-race``, docs/race-control.md, "Leagues")."""
