"""Which queue a job goes to, decided from its validated params' ``device``.

Every submission path asks :func:`job_queue`: a single job (``POST /v1/jobs``, the per-method
routes, MCP, :func:`core.jobs.submit.submit_job`), a batch (``POST /v1/jobs:batch``,
:func:`core.jobs.submit.submit_jobs`: a refused item fails alone) and a fan-out's sub-jobs
(:func:`core.jobs.dispatch.enqueue`, which goes through ``submit_job``). The rule:

==============  ==========================  =====================================================
``device``      GPU workers declared        none declared (the default)
==============  ==========================  =====================================================
``cuda``        ``gpu``                     refused: :class:`NoGpuWorker` (the API answers 422)
``auto``        ``gpu``                     the method's queue (``cpu``): it runs on a CPU worker
``cpu``/none    the method's queue          the method's queue
==============  ==========================  =====================================================

"Declared" is ``settings.gpu_workers`` (``PAPERWORKS_GPU_WORKERS=1``), set on every service of a
deployment whose workers include one that consumes ``gpu`` (``paperworks worker --queues gpu`` on
a machine with CUDA). A GPU worker consumes ``gpu`` only; CPU work needs a worker on ``cpu``
(``settings.worker_queues`` documents the rule; docs/GPU.md shows both set-ups).

A caller's explicit queue (``dispatch.enqueue(queue=...)``) replaces the method's queue in the
table, never ``gpu`` where the device asks for it. A job run in this process (``paperworks run``
without ``--remote``, MCP's inline dispatch: ``sent=False``) is never refused here: no queue is
involved, and :func:`core.device.resolve_device` fails it at once if this process has no CUDA. Its
row still names the queue a re-send would use (the reaper re-sends a job whose process died): the
table's, except that ``cuda`` without declared GPU workers keeps the method's queue.

:func:`runs_here` is the other half: :func:`core.jobs.dispatch.wait` runs a stalled sub-job in
the waiting process only if that process consumes the sub-job's queue, so a CPU parent never
takes a GPU job.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from core.config import get_settings
from core.jobs.registry import InvalidParams, MethodSpec

GPU_QUEUE = "gpu"

NO_GPU_WORKER = (
    "device=cuda needs a GPU worker, but this deployment declares none (PAPERWORKS_GPU_WORKERS is not set): "
    "submit it with device=cpu or device=auto, or add a GPU worker (docs/GPU.md)."
)


class NoGpuWorker(InvalidParams):
    """``device=cuda`` was submitted to a deployment that declares no GPU worker (a 422, like bad params).

    Its ``str`` is one sentence saying so; ``errors`` locates it at ``device`` for clients that
    read pydantic-style error lists.
    """

    def __init__(self, method: str) -> None:
        super().__init__(method, [{"loc": ("device",), "msg": NO_GPU_WORKER, "type": "no_gpu_worker"}])
        self.args = (NO_GPU_WORKER,)

    def __str__(self) -> str:
        return NO_GPU_WORKER


def gpu_workers_declared() -> bool:
    """Whether this deployment declares a worker on the ``gpu`` queue (``settings.gpu_workers``)."""
    return bool(get_settings().gpu_workers)


def consumed_queues() -> frozenset[str]:
    """The queues this process consumes as a worker (``settings.worker_queues``; ``cpu`` by default)."""
    return frozenset(get_settings().queues)


def runs_here(queue: str) -> bool:
    """Whether a job on ``queue`` may be run in this process (it consumes that queue)."""
    return queue in consumed_queues()


def requested_device(params: BaseModel | Mapping[str, Any] | None) -> str | None:
    """The ``device`` a job's params ask for (``None`` for a method without the field)."""
    if params is None:
        return None
    value = params.get("device") if isinstance(params, Mapping) else getattr(params, "device", None)
    return None if value is None else str(value)


def job_queue(
    spec: MethodSpec,
    params: BaseModel | Mapping[str, Any] | None,
    *,
    queue: str | None = None,
    sent: bool = True,
) -> str:
    """The queue for a job of ``spec`` with validated ``params`` (the module's table).

    Args:
        spec: the registered method.
        params: its validated params (model or dumped dict).
        queue: the caller's explicit queue, used instead of the method's own where the device does not decide.
        sent: whether the job goes to the workers through a queue (``False``: it runs in this process).

    Raises:
        NoGpuWorker: ``device=cuda`` where no GPU worker is declared and the job would be sent.
    """
    device = requested_device(params)
    declared = gpu_workers_declared()
    if device == "cuda":
        if declared:
            return GPU_QUEUE
        if sent:
            raise NoGpuWorker(spec.name)
        return queue or spec.queue
    if device == "auto" and declared:
        return GPU_QUEUE
    return queue or spec.queue
