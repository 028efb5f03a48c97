"""How many CPU threads a local llama.cpp engine uses when ``PAPERWORKS_LOCAL_THREADS`` is not set.

A job that pins torch to ``n`` threads (PAE's ``torch_threads``) wants the llama.cpp
engine it builds to use ``n`` too: on oversubscribed cores llama.cpp's spinning
workers run many times slower. The job says so explicitly with
:func:`local_threads` instead of writing into the shared settings.

The hint is process-wide, not a context variable, on purpose: the engine is built by
whichever thread makes the first local completion — often one of an agent's worker
threads, which do not inherit context variables — and it is one per process anyway.
A configured ``settings.local_threads`` always wins over the hint.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_hint = 0
_lock = threading.Lock()


def threads_hint() -> int:
    """The current hint (0: none)."""
    return _hint


def set_threads_hint(n: int) -> int:
    """Set the hint to ``n`` (0 clears it); returns the previous one (to restore it)."""
    global _hint
    if n < 0:
        raise ValueError(f"thread count must be >= 0, got {n}")
    with _lock:
        previous, _hint = _hint, int(n)
    return previous


@contextlib.contextmanager
def local_threads(n: int) -> Iterator[None]:
    """Within the block, a llama.cpp engine built in this process uses ``n`` threads (unless configured)."""
    previous = set_threads_hint(n)
    try:
        yield
    finally:
        set_threads_hint(previous)


def resolve_threads(configured: int, usable_cores: int) -> int:
    """``configured`` if set, else the hint, else half the usable cores (at least 1)."""
    if configured > 0:
        return configured
    return _hint if _hint > 0 else max(1, usable_cores // 2)
