"""Optional numba compilation of the hot-path kernels.

The kernels are written in the subset of Python that numba compiles (floats, ``math``, indexing),
so the very same source runs as plain Python when numba is missing or disabled with
``ARSIM_NUMBA=0``. Compiled code is cached on disk (``cache=True``) so only the first start after
an install or an edit pays the compile time.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar('F', bound=Callable[..., Any])

_WANTED = os.environ.get('ARSIM_NUMBA', '1').strip().lower() not in ('0', 'false', 'no', 'off')

try:
    if not _WANTED:
        raise ImportError('disabled by ARSIM_NUMBA')
    import numba as _numba
except ImportError:  # pragma: no cover - depends on the environment
    _numba = None

#: True when the kernels are compiled with numba; False means the pure-Python fallback runs.
NUMBA_ENABLED: bool = _numba is not None


def kernel(func: F) -> F:
    """Compile ``func`` with numba (nopython, cached on disk, no fastmath).

    ``error_model='numpy'`` turns a division by zero into inf/NaN instead of an exception, so a
    diverging model is caught by the finiteness check after the step. Without numba the function
    is returned unchanged and runs as ordinary Python.
    """
    if _numba is None:
        return func
    compiled = _numba.njit(cache=True, nogil=True, error_model='numpy')(func)
    return compiled  # type: ignore[no-any-return]


def python_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """The plain-Python original of a kernel, for callers that pass lists instead of arrays."""
    return getattr(func, 'py_func', func)
