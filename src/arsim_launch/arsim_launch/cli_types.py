"""Argument types the command-line tools share (argparse ``type=``)."""

from __future__ import annotations

import argparse


def positive_int(value: str) -> int:
    """A whole number >= 1, or argparse's usage error saying so."""
    number = int(value)
    if number < 1:
        msg = f'expected a whole number >= 1, got {value}'
        raise argparse.ArgumentTypeError(msg)
    return number
