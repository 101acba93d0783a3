"""Rows of one array, looked up by name: how the batched paths hand over per-car data (poses,
scans) without an array per car, while callers that want one car still index by name."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np


class NamedRows(Mapping[str, np.ndarray]):
    """``rows[i]`` is the value of ``names[i]``."""

    def __init__(self, names: Sequence[str], rows: np.ndarray,
                 index: Mapping[str, int] | None = None) -> None:
        """``index``, each name's row, may be given by a caller who keeps it."""
        self.names = tuple(names)
        self.rows = rows
        self._index = index if index is not None else dict(
            zip(self.names, range(len(self.names)), strict=True))

    def __getitem__(self, name: str) -> np.ndarray:
        return self.rows[self._index[name]]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)

    def take(self, names: tuple[str, ...]) -> np.ndarray:
        """The rows of ``names``, as one array: ``rows`` itself (no copy) when ``names`` are
        all the names, in order."""
        if names == self.names:
            return self.rows
        return self.rows[[self._index[name] for name in names]]


def stacked(values: Mapping[str, np.ndarray], names: tuple[str, ...]) -> np.ndarray:
    """The values of ``names`` as the rows of one array; no copy where ``values`` already are
    those rows."""
    if isinstance(values, NamedRows):
        return values.take(names)
    return np.array([values[name] for name in names])
