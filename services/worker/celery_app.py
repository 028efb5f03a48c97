"""The Celery application, configured from :mod:`core.config`.

One app, two queues (``cpu``, ``gpu``). The rule (``settings.worker_queues``, docs/GPU.md): a CPU
worker consumes ``cpu``; a GPU worker — ``paperworks worker --queues gpu`` on a machine with CUDA —
consumes ``gpu`` only, and the deployment declares it with ``PAPERWORKS_GPU_WORKERS=1`` so that
submissions route ``device=cuda`` / ``device=auto`` jobs there (:mod:`core.jobs.routing`).
Messages are acknowledged late and rejected when a worker is lost, so a job whose
worker dies is redelivered; the job's own state (and its exactly-once guarantee)
lives in the application database, not in Celery's result backend.

Brokers: the embedded default is kombu's SQLAlchemy transport on a SQLite file (no
server), made to delete acknowledged messages and redeliver unacknowledged ones after
``broker_visibility_timeout`` (:mod:`services.worker.broker`); ``redis://`` and ``amqp://``
URLs work unchanged. Whatever the broker, a job whose worker died is re-enqueued by the
reaper every worker runs (:func:`core.jobs.reap.reap_stale`), within
``job_stale_after_s`` + ``job_reap_interval_s`` — not after the broker's visibility timeout.
"""

from __future__ import annotations

from celery import Celery
from kombu import Queue

from core.config import get_settings
from services.worker.broker import install as install_embedded_transport


def make_celery() -> Celery:
    s = get_settings()
    # services.api.agent_exec registers the "langgraph.run" job type: Agent Protocol runs execute on the workers
    app = Celery("paperworks", broker=s.broker_url, include=["services.worker.tasks.jobs", "services.api.agent_exec"])
    transport_options: dict = {}
    if str(s.broker_url).startswith(("sqla+", "sqlalchemy+")):
        install_embedded_transport()
        transport_options["visibility_timeout"] = s.broker_visibility_timeout
    if str(s.broker_url).startswith(("redis://", "rediss://")):
        # unacknowledged messages of a dead worker come back after the visibility timeout;
        # sweep for them often enough that this is what bounds redelivery
        transport_options.update(
            visibility_timeout=s.broker_visibility_timeout,
            unacked_restore_interval=min(10.0, max(1.0, s.broker_visibility_timeout / 3)),
            unacked_restore_throttle=1,
        )
    app.conf.update(
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_acks_on_failure_or_timeout=True,
        worker_prefetch_multiplier=1,
        task_ignore_result=True,
        result_backend=None,
        task_default_queue="cpu",
        task_queues=[Queue("cpu"), Queue("gpu")],
        task_serializer="json",
        accept_content=["json"],
        broker_transport_options=transport_options,
        broker_connection_retry_on_startup=True,
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
        task_send_sent_event=False,
        enable_utc=True,
    )
    return app


app = make_celery()
