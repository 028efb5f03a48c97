"""The process's job sender: how a recorded job reaches the workers.

The Celery task lives in ``services/worker``, and ``core`` may not import ``services`` (the layers
contract). So the worker package *registers* its send function here when it is imported
(``services/worker/tasks/jobs.py`` calls :func:`register_sender`); every process that runs jobs (a
Celery worker, the API) imports that module. :mod:`core.jobs.dispatch` (fan-out) and
:mod:`core.jobs.reap` (re-sending jobs whose worker died) both send through it, which is why it is a
module of its own below both.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from core.db.models import Job

Sender = Callable[[Job], None]

_sender: Sender | None = None
_sender_lock = threading.Lock()


class NoSender(RuntimeError):
    """No function to send a recorded job to the workers is registered in this process."""


def register_sender(send: Sender | None) -> Sender | None:
    """Install the process's job sender (``None`` removes it); returns the previous one."""
    global _sender
    with _sender_lock:
        previous, _sender = _sender, send
    return previous


def get_sender() -> Sender:
    """The registered sender, or :class:`NoSender`."""
    if _sender is None:
        raise NoSender(
            "no job sender is registered in this process: jobs reach the workers through "
            "services.worker (importing services.worker.tasks.jobs registers it; every worker and "
            "the API do), or pass send="
        )
    return _sender


def has_sender() -> bool:
    """Whether a sender is registered (a fan-out can send sub-jobs)."""
    return _sender is not None
