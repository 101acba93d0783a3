"""``python3 -m arsim_launch``: the simulator's launcher (``arsim_launch.sim``), quiet when
stopped while it starts (``arsim_core.process.entrypoints``)."""

from __future__ import annotations

from arsim_core.process.entrypoints import run


def main() -> None:
    run('arsim_launch.sim', steps_cars=False)  # it reads and checks the configuration


if __name__ == '__main__':
    main()
