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


def test_a_gpu_worker_without_cuda_or_undeclared_says_so_at_start(monkeypatch, caplog, settings):
    import logging

    import core.device
    from services.worker import main as worker
    from services.worker.celery_app import app

    assert worker.queue_warnings(["gpu"], cuda=True, gpu_workers=True) == []
    assert worker.queue_warnings(["cpu"], cuda=False, gpu_workers=False) == []
    no_cuda, undeclared = worker.queue_warnings(["gpu"], cuda=False, gpu_workers=False)
    assert "no CUDA" in no_cuda and "PAPERWORKS_GPU_WORKERS" in undeclared

    monkeypatch.setattr(app, "worker_main", lambda args: None)
    monkeypatch.setattr(worker, "load_all", lambda: None)
    monkeypatch.setattr(core.device, "cuda_available", lambda: False)
    monkeypatch.setattr(settings, "worker_queues", "gpu")
    monkeypatch.setattr(settings, "gpu_workers", True)
    with caplog.at_level(logging.WARNING, logger="services.worker.main"):
        worker.main(["--pool=solo"])
    assert [r.getMessage() for r in caplog.records] == [no_cuda]
