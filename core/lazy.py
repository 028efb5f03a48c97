"""Lazily created shared resources, built once even when threads ask for them at the same moment, and
package exports loaded on first use (:func:`lazy_exports`).

``functools.lru_cache`` does not serialise first calls: two threads that miss together both run the
function. For a pure function that only costs time; for a shared resource it breaks things. Two
embedded Chroma clients created at once for the same directory raced inside chromadb's client registry
(``KeyError: '<home>/chroma'`` on the first concurrent requests after an API restart); two
transformers loads at once raced its lazy imports. :func:`locked_cache` is the drop-in replacement::

    @locked_cache(maxsize=4)
    def _client(path: str) -> Client: ...

* a hit costs one dict lookup, no lock;
* a miss takes a lock of its own key: one thread builds the value, the others wait for it and get the
  same object; different keys build in parallel;
* an exception is not cached: the waiting threads see it too, and the next call tries again;
* ``cache_clear()`` and ``__wrapped__`` work as with ``lru_cache`` (tests, settings reloads); past
  ``maxsize`` entries the oldest is dropped.

Builders that share a non-thread-safe step whatever their key (transformers' lazy imports: a tokenizer and
a model of two different names loaded at once still race there) pass one shared re-entrant lock,
``@locked_cache(maxsize=4, lock=MODEL_LOADING)``: their misses then build one at a time, and a builder may
call another under the same lock (a backend loading its tokenizer) without deadlocking.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

_MISSING = object()

MODEL_LOADING = threading.RLock()
"""Held while a model, tokenizer or embedder is built (transformers and sentence-transformers import lazily)."""


class _Pending:
    """A value being built by one thread; the others wait on ``done``."""

    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = _MISSING
        self.error: BaseException | None = None


class LockedCache(Generic[P, R]):
    """The callable :func:`locked_cache` returns: ``fn`` memoised per arguments, each value built once."""

    def __init__(self, fn: Callable[P, R], maxsize: int | None, lock: Any = None) -> None:
        if maxsize is not None and maxsize < 1:
            raise ValueError(f"maxsize must be at least 1 (or None), got {maxsize}")
        self.__wrapped__ = fn
        self.maxsize = maxsize
        self.build_lock = lock
        self._values: OrderedDict[Hashable, Any] = OrderedDict()
        self._pending: dict[Hashable, _Pending] = {}
        self._lock = threading.Lock()
        self._generation = 0  # bumped by cache_clear: a value built before the clear is not stored after it
        functools.update_wrapper(self, fn)

    @staticmethod
    def _key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Hashable:
        return (args, tuple(sorted(kwargs.items()))) if kwargs else args

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        key = self._key(args, kwargs)
        value = self._values.get(key, _MISSING)  # the hot path: no lock (a dict read is atomic)
        if value is not _MISSING:
            return value
        if self.build_lock is not None:
            return self._build_under_shared_lock(key, args, kwargs)
        with self._lock:
            value = self._values.get(key, _MISSING)
            if value is not _MISSING:
                return value
            pending = self._pending.get(key)
            builder = pending is None
            if builder:
                pending = self._pending[key] = _Pending()
                generation = self._generation
        if not builder:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value
        try:
            pending.value = self.__wrapped__(*args, **kwargs)
        except BaseException as exc:
            pending.error = exc
            raise
        finally:
            with self._lock:
                if self._pending.get(key) is pending:
                    del self._pending[key]
            if pending.error is None:
                self._store(key, pending.value, generation)
            pending.done.set()
        return pending.value

    def _build_under_shared_lock(self, key: Hashable, args: tuple[Any, ...], kwargs: dict[str, Any]) -> R:
        with self.build_lock:
            value = self._values.get(key, _MISSING)
            if value is not _MISSING:
                return value
            with self._lock:
                generation = self._generation
            value = self.__wrapped__(*args, **kwargs)
            self._store(key, value, generation)
            return value

    def _store(self, key: Hashable, value: Any, generation: int) -> None:
        with self._lock:
            if generation == self._generation:
                self._values[key] = value
                if self.maxsize is not None and len(self._values) > self.maxsize:
                    self._values.popitem(last=False)

    def cache_clear(self) -> None:
        """Forget every value (a build still running finishes, but its value is not kept)."""
        with self._lock:
            self._values.clear()
            self._pending.clear()
            self._generation += 1

    def cache_len(self) -> int:
        """How many values are held."""
        return len(self._values)

    def __get__(self, obj: Any, objtype: Any = None) -> Any:  # used as a method: bind like a function
        return self if obj is None else functools.partial(self, obj)


def locked_cache(maxsize: int | None = 128, *, lock: Any = None) -> Callable[[Callable[P, R]], LockedCache[P, R]]:
    """Decorator: ``functools.lru_cache`` whose first calls per arguments are serialised (see the module).

    Args:
        maxsize: values kept (the oldest is dropped beyond it); ``None``: unbounded.
        lock: a lock shared with other caches (:data:`MODEL_LOADING`): every miss builds under it.
    """

    def deco(fn: Callable[P, R]) -> LockedCache[P, R]:
        return LockedCache(fn, maxsize, lock)

    return deco


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """A package's public names, each imported from its module on first use (PEP 562).

    Registering the jobs imports every method's ``jobs.py``, and with it the package's ``__init__``; a
    package that re-exports from its heavy modules (torch, scikit-learn) eagerly would make every API,
    worker and CLI start pay for them. In the ``__init__``::

        __all__, __getattr__, __dir__ = lazy_exports(__name__, {"QuantLinear": "methods.any4.modules"})

    Args:
        package: the package's ``__name__`` (named in the error for an unknown attribute).
        exports: public name -> the module that defines it.

    Returns:
        ``__all__`` (sorted), the module's ``__getattr__`` and ``__dir__``.
    """
    table = dict(exports)

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(set(table) | set(vars(importlib.import_module(package))))

    return sorted(table), __getattr__, __dir__
