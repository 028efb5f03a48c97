"""A solo worker prefetches one message only: a SIGKILL then loses only the job it was running (the reaper's)."""

import pytest


@pytest.mark.parametrize(
    "argv,concurrency",
    [
        (None, "--concurrency=1"),
        (["--pool=solo"], "--concurrency=1"),
        (["--pool", "solo", "--hostname=w@h"], "--concurrency=1"),
        (["--pool=solo", "--concurrency=3"], "--concurrency=3"),
        (["--pool=prefork"], None),
    ],
)
def test_solo_worker_runs_with_concurrency_one(monkeypatch, argv, concurrency):
    from services.worker import main as worker
    from services.worker.celery_app import app

    seen = []
    monkeypatch.setattr(app, "worker_main", lambda args: seen.append(args))
    monkeypatch.setattr(worker, "load_all", lambda: None)
    monkeypatch.setattr("sys.argv", ["worker"])
    worker.main(argv)
    flags = [a for a in seen[0] if a.startswith("--concurrency")]
    assert flags == ([concurrency] if concurrency else [])
