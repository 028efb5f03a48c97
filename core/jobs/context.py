"""The ``progress`` object a method's ``run(params, progress)`` receives.

Call it to report progress: ``progress(0.25, "task 1/4 done")``. It raises
:class:`JobCancelled` when the job was cancelled, so long loops stop promptly.
``progress.sub(a, b)`` gives a child context mapping 0..1 onto a..b, and
``progress.iter(items, "msg")`` wraps an iterable.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sized
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


class JobCancelled(Exception):
    """Raised inside a method when its job has been cancelled."""


class TransientError(Exception):
    """A failure worth retrying (lost connection, busy resource); the worker retries with backoff."""


Sink = Callable[[float, str], bool]
"""Receives (fraction, message); returns True when the job must stop."""


class JobContext:
    """Progress reporting, cancellation and a scratch directory for one run."""

    def __init__(
        self,
        sink: Sink | None = None,
        *,
        job_id: str | None = None,
        workdir: Path | None = None,
        lo: float = 0.0,
        hi: float = 1.0,
        min_interval_s: float = 0.25,
    ) -> None:
        self._sink = sink
        self.job_id = job_id
        self.workdir = workdir
        self._lo, self._hi = lo, hi
        self._min_interval = min_interval_s
        self._last_t = 0.0
        self._last_frac = -1.0
        self.fraction = 0.0
        self.message = ""

    def __call__(self, fraction: float, message: str = "") -> None:
        frac = self._lo + (self._hi - self._lo) * min(max(float(fraction), 0.0), 1.0)
        self.fraction, self.message = frac, message or self.message
        now = time.monotonic()
        force = fraction >= 1.0 or fraction <= 0.0 or abs(frac - self._last_frac) >= 0.05
        if self._sink is None or (not force and now - self._last_t < self._min_interval):
            return
        self._last_t, self._last_frac = now, frac
        if self._sink(frac, self.message):
            raise JobCancelled(f"job {self.job_id or ''} cancelled".strip())

    def sub(self, lo: float, hi: float) -> JobContext:
        """A child context whose 0..1 maps onto ``lo..hi`` of this one."""
        span = self._hi - self._lo
        child = JobContext(
            self._sink,
            job_id=self.job_id,
            workdir=self.workdir,
            lo=self._lo + span * lo,
            hi=self._lo + span * hi,
            min_interval_s=self._min_interval,
        )
        return child

    def iter(self, items: Iterable[T], message: str = "", total: int | None = None) -> Iterator[T]:
        """Yield ``items``, reporting ``i/total`` after each."""
        if total is None and isinstance(items, Sized):
            total = len(items)
        for i, item in enumerate(items):
            yield item
            if total:
                self((i + 1) / total, f"{message} {i + 1}/{total}".strip())

    def log(self, message: str) -> None:
        """Report a message without moving the bar."""
        local = (self.fraction - self._lo) / (self._hi - self._lo) if self._hi > self._lo else 0.0
        self(local, message)


def null_context() -> JobContext:
    """A context that reports nowhere (library calls, tests)."""
    return JobContext(None)
