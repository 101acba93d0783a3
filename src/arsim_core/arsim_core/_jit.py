"""Optional numba compilation of the hot-path kernels.

The kernels are written in the subset of Python that numba compiles (floats, ``math``, indexing),
so the very same source runs as plain Python when numba is missing or disabled with
``ARSIM_NUMBA=0``.

Compiled code is cached on disk so only the first start after an install or an edit pays the
compile time. Numba invalidates a cached function only when *its own* file changes, but the
kernels (the vehicle models, the race metrics, the LiDAR sweep, the gym's batch step) call each
other and read constants across modules and packages; so the cache lives in a directory named
after a hash of every source file of ``arsim_core`` (``$ARSIM_NUMBA_CACHE`` or
``~/.cache/arsim/numba/<hash>``) and any edit starts a fresh one.

A stop signal while the main thread compiles (or loads from the cache) is held until it is done:
numba is not safe to interrupt there (``process.interrupts``).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from arsim_core.process.interrupts import hold_interrupts, release_interrupts

F = TypeVar('F', bound=Callable[..., Any])

#: False when ``ARSIM_NUMBA`` turned numba off as this module was imported (the process's one
#: decision: ``process.entrypoints`` sets it for programs that never step a car).
NUMBA_WANTED: bool = os.environ.get('ARSIM_NUMBA', '1').strip().lower() not in (
    '0', 'false', 'no', 'off')

_numba: Any
try:
    if not NUMBA_WANTED:
        raise ImportError('disabled by ARSIM_NUMBA')
    import numba as _numba
except ImportError:  # pragma: no cover - depends on the environment
    _numba = None

#: True when the kernels are compiled with numba; False means the pure-Python fallback runs.
NUMBA_ENABLED: bool = _numba is not None


def _source_hash() -> str:
    """Hash of arsim_core's sources (and the numba version) naming the cache directory."""
    digest = hashlib.sha256(getattr(_numba, '__version__', '').encode())
    package = Path(__file__).parent
    for path in sorted(package.rglob('*.py')):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _cache_dir() -> str | None:
    """A writable cache directory for this source version, or None to compile uncached."""
    base = os.environ.get('ARSIM_NUMBA_CACHE')
    if not base:
        xdg = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
        base = os.path.join(xdg, 'arsim', 'numba')
    path = os.path.join(base, _source_hash())
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return None
    return path


_CACHE_DIR = _cache_dir() if _numba is not None else None


def cache_directory() -> Path | None:
    """Where this source version's compiled kernels are cached; None when they are not."""
    return Path(_CACHE_DIR) if _CACHE_DIR is not None else None


def _hold_interrupts_while_compiling() -> None:
    """Hold stop signals while the main thread holds numba's compiler lock, which brackets
    compiling a kernel, loading it from the cache and saving it there."""
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev: event.Event) -> None:
            if threading.current_thread() is threading.main_thread():
                hold_interrupts()

        def on_end(self, ev: event.Event) -> None:
            if threading.current_thread() is threading.main_thread():
                release_interrupts()

    event.register('numba:compiler_lock', Listener())  # type: ignore[no-untyped-call]


if _numba is not None:
    _hold_interrupts_while_compiling()


def kernel(func: F) -> F:
    """Compile ``func`` with numba (nopython, cached on disk, no fastmath).

    ``error_model='numpy'`` turns a division by zero into inf/NaN instead of an exception, so a
    diverging model is caught by the finiteness check after the step. Without numba the function
    is returned unchanged and runs as ordinary Python.
    """
    if _numba is None:
        return func
    return cached_njit(func, error_model='numpy')  # a Dispatcher, called like func


def inline_kernel(func: F) -> F:
    """``kernel``, inlined into the kernels that call it: a small helper called per segment or
    beam, where a call passing arrays costs more than the helper's work."""
    if _numba is None:
        return func
    return cached_njit(func, error_model='numpy', inline='always')


#: Fewest rows (cars) a batch spreads over threads: below, starting them costs more than they
#: save (64 one-car races stepped as fast on one thread as on two here).
THREADED_ROWS = 64


def threads_for(rows: int, threads: int) -> int:
    """The threads a batch of ``rows`` takes when given ``threads``: one below THREADED_ROWS
    (1 means the serial kernel)."""
    return threads if rows >= THREADED_ROWS else 1


def parallel_kernel(func: F) -> F:
    """``kernel`` whose ``prange`` loops run on numba's threads: for in-process users who give
    cores to a batch of cars (``threads`` > 1). Its loops spin while they wait, and slow down
    many times over when another process takes their core, so a simulation that shares its
    cores keeps to the serial kernels."""
    if _numba is None:
        return func
    return cached_njit(func, error_model='numpy', parallel=True)


#: ``numba.prange`` in a ``parallel_kernel``, ``range`` without numba.
prange: Callable[..., Any] = range if _numba is None else _numba.prange


def cached_njit(func: Callable[..., Any], **options: Any) -> Any:
    """``numba.njit(nogil=True, **options)(func)``, cached in this source version's directory
    when there is a writable one. Requires numba."""
    config = _numba.config
    previous = config.CACHE_DIR
    config.CACHE_DIR = _CACHE_DIR or ''  # read while the decorator sets up the cache locator
    try:
        return _numba.njit(cache=_CACHE_DIR is not None, nogil=True, **options)(func)
    finally:
        config.CACHE_DIR = previous


def python_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """The plain-Python original of a kernel, for callers that pass lists instead of arrays."""
    return getattr(func, 'py_func', func)
