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
    args += list(argv if argv is not None else sys.argv[1:]) or ["--pool=solo"]
    app.worker_main(args)


if __name__ == "__main__":
    main()
