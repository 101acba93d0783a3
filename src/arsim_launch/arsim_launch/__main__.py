"""``python3 -m arsim_launch``: the simulator's launcher (``arsim_launch.sim``), quiet when
stopped while it starts (``arsim_core.process.entrypoints``)."""

from __future__ import annotations

from arsim_core.process.entrypoints import run


def main() -> None:
    run('arsim_launch.sim')  # it imports no kernels: its planning process reads the configuration


if __name__ == '__main__':
    main()
