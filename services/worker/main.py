"""``paperworks-worker``-style entry: start a worker on the configured queues."""

from __future__ import annotations

import logging
import sys

from core.config import get_settings
from core.jobs import load_all


def main(argv: list[str] | None = None) -> None:
    """Start a Celery worker consuming ``settings.worker_queues`` (solo pool by default on CPU)."""
    from services.worker.celery_app import app

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    load_all()
    s = get_settings()
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
