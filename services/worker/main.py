"""``paperworks-worker``-style entry: start a worker on the configured queues.

The queue rule (``settings.worker_queues``, docs/GPU.md): a CPU worker consumes ``cpu``; a GPU
worker consumes ``gpu`` only, on a machine with CUDA, and the deployment says it has one with
``PAPERWORKS_GPU_WORKERS=1`` (read where jobs are submitted). :func:`queue_warnings` names what
contradicts the rule at start-up; a ``device=cuda`` job that still reaches a worker without CUDA
fails at once (:class:`core.device.DeviceUnavailable` is not retried).
"""

from __future__ import annotations

import logging
import sys

from core.config import get_settings
from core.jobs import load_all

log = logging.getLogger(__name__)


def queue_warnings(queues: list[str], *, cuda: bool, gpu_workers: bool) -> list[str]:
    """What is wrong with consuming ``queues`` here: a ``gpu`` worker without CUDA, or one the settings do not declare."""
    out = []
    if "gpu" in queues and not cuda:
        out.append(
            "this worker consumes the gpu queue but torch sees no CUDA here: every device=cuda job it takes fails "
            "at once (DeviceUnavailable) and device=auto jobs run on its CPU; run it on a machine with a GPU and a "
            "CUDA build of torch (docs/GPU.md)"
        )
    if "gpu" in queues and not gpu_workers:
        out.append(
            "this worker consumes the gpu queue but PAPERWORKS_GPU_WORKERS is not set: submissions where it is not "
            "set refuse device=cuda and keep device=auto jobs on cpu; set PAPERWORKS_GPU_WORKERS=1 on every service"
        )
    return out


def main(argv: list[str] | None = None) -> None:
    """Start a Celery worker consuming ``settings.worker_queues`` (solo pool by default on CPU)."""
    from services.worker.celery_app import app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    load_all()
    s = get_settings()
    if "gpu" in s.queues:
        from core.device import cuda_available

        for warning in queue_warnings(s.queues, cuda=cuda_available(), gpu_workers=s.gpu_workers):
            log.warning(warning)
    args = [
        "worker",
        "-Q",
        ",".join(s.queues),
        "--loglevel=INFO",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    extra = list(argv if argv is not None else sys.argv[1:]) or ["--pool=solo"]
    solo = "--pool=solo" in extra or any(a == "--pool" and b == "solo" for a, b in zip(extra, extra[1:], strict=False))
    if solo and not any(a in ("-c", "--concurrency") or a.startswith("--concurrency=") for a in extra):
        # Celery sizes a solo worker's prefetch by the CPU count: on 2 cores it reserved a second message while
        # running one, and a SIGKILL took that reserved message with it (back only after the visibility timeout)
        extra.append("--concurrency=1")
    args += extra
    app.worker_main(args)


if __name__ == "__main__":
    main()
