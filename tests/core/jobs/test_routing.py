"""Routing by device: single submissions, batches and fan-outs; wait's steal guard; the worker's fail-fast.

A test-only method with :class:`core.device.DeviceParams` (registered inside a registry
snapshot) keeps these tests independent of which real methods already take a device.
"""

from __future__ import annotations

import uuid

import pytest
from pydantic import Field

from core.device import DeviceParams, device_provenance, resolve_device
from core.jobs import Report, register_method, registry_snapshot
from core.jobs.routing import NO_GPU_WORKER, NoGpuWorker, job_queue

METHOD = "test_routing.torch_job"


class _Params(DeviceParams):
    x: int = Field(0, ge=0)


def _run(params: _Params, progress) -> Report:
    dev = resolve_device(params.device)  # raises DeviceUnavailable at once where CUDA is missing
    report = Report(title="routed", summary=f"ran on {dev}")
    report.metrics.update(device_provenance(dev, params.amp))
    return report


@pytest.fixture
def method():
    """The test method, registered for the test only (queue ``cpu``)."""
    with registry_snapshot():
        register_method(METHOD, title="routing test job", queue="cpu")(_run)
        from core.jobs import get_method

        yield get_method(METHOD)


@pytest.fixture
def deployment(settings, monkeypatch):
    """``deployment(gpu_workers=..., queues=...)``: this process's view of the deployment."""

    def set_(*, gpu_workers: bool, queues: str = "cpu") -> None:
        monkeypatch.setattr(settings, "gpu_workers", gpu_workers)
        monkeypatch.setattr(settings, "worker_queues", queues)

    set_(gpu_workers=False)
    return set_


@pytest.fixture
def sent():
    from core.jobs.dispatch import register_sender

    log: list = []
    previous = register_sender(log.append)
    yield log
    register_sender(previous)


def _count(method: str = METHOD) -> int:
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        return sum(1 for j in crud.list_jobs(s, method=method, limit=10_000))


# --- the rule ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "device,declared,expected",
    [
        ("cpu", False, "cpu"),
        ("cpu", True, "cpu"),
        ("auto", False, "cpu"),
        ("auto", True, "gpu"),
        ("cuda", True, "gpu"),
        ("cuda", False, NoGpuWorker),
        (None, True, "cpu"),
    ],
)
def test_the_queue_follows_the_device_and_the_declared_workers(method, deployment, device, declared, expected):
    deployment(gpu_workers=declared)
    params = {} if device is None else {"device": device}
    if expected is NoGpuWorker:
        with pytest.raises(NoGpuWorker) as info:
            job_queue(method, method.validate(params))
        assert str(info.value) == NO_GPU_WORKER and info.value.errors[0]["loc"] == ("device",)
    else:
        assert job_queue(method, method.validate(params)) == expected


def test_an_explicit_queue_never_takes_a_gpu_job_off_the_gpu_queue(method, deployment):
    deployment(gpu_workers=True)
    assert job_queue(method, {"device": "cuda"}, queue="cpu") == "gpu"
    assert job_queue(method, {"device": "auto"}, queue="cpu") == "gpu"
    assert job_queue(method, {"device": "cpu"}, queue="gpu") == "gpu"  # the caller's choice for a cpu job


def test_a_job_run_in_this_process_is_not_refused(method, deployment):
    """``paperworks run`` without ``--remote``: no queue involved, the device itself decides at run time."""
    from core.jobs.submit import submit_job

    deployment(gpu_workers=False)
    job, created = submit_job(METHOD, {"device": "cuda"})
    assert created and job.queue == "cpu"  # where the reaper would re-send it: no GPU worker is declared
    with pytest.raises(NoGpuWorker):
        submit_job(METHOD, {"device": "cuda"}, enqueue=lambda job: None)
    deployment(gpu_workers=True)
    assert submit_job(METHOD, {"device": "cuda"})[0].queue == "gpu"


# --- single submissions through the API --------------------------------------------------------


@pytest.fixture
def api(method, api_client, monkeypatch):
    """The API with a recording ``enqueue`` (no broker): returns (client, sent jobs)."""
    from services.api import deps

    log: list = []
    monkeypatch.setattr(deps, "enqueue", log.append)
    return api_client, log


def test_api_refuses_cuda_without_gpu_workers_with_one_sentence(api, deployment):
    client, sent = api
    deployment(gpu_workers=False)
    before = _count()
    r = client.post("/v1/jobs", json={"method": METHOD, "params": {"device": "cuda"}})
    assert r.status_code == 422, r.text
    assert r.json()["detail"]["message"] == NO_GPU_WORKER
    assert r.json()["detail"]["errors"][0]["loc"] == ["device"]
    assert _count() == before and sent == []


@pytest.mark.parametrize(
    "device,declared,queue",
    [("auto", False, "cpu"), ("auto", True, "gpu"), ("cuda", True, "gpu"), ("cpu", True, "cpu")],
)
def test_api_routes_by_device(api, deployment, device, declared, queue):
    client, sent = api
    deployment(gpu_workers=declared)
    r = client.post("/v1/jobs", json={"method": METHOD, "params": {"device": device}})
    assert r.status_code == 201, r.text
    assert r.json()["queue"] == queue and [j.queue for j in sent] == [queue]


def test_api_batch_refuses_only_the_cuda_item(api, deployment):
    client, sent = api
    deployment(gpu_workers=False)
    jobs = [
        {"method": METHOD, "params": {"device": "cpu", "x": 1}},
        {"method": METHOD, "params": {"device": "cuda", "x": 2}},
        {"method": METHOD, "params": {"device": "auto", "x": 3}},
    ]
    r = client.post("/v1/jobs:batch", json={"jobs": jobs})
    assert r.status_code == 200, r.text
    items = r.json()["items"]
    assert [it["status"] for it in items] == [201, 422, 201]
    assert items[1]["error"]["message"] == NO_GPU_WORKER and items[1]["job"] is None
    assert [it["job"]["queue"] for it in (items[0], items[2])] == ["cpu", "cpu"]
    assert sorted(j.params["x"] for j in sent) == [1, 3]


def test_api_batch_sends_gpu_items_to_the_gpu_queue(api, deployment):
    client, sent = api
    deployment(gpu_workers=True)
    jobs = [{"method": METHOD, "params": {"device": d}} for d in ("cpu", "cuda", "auto")]
    r = client.post("/v1/jobs:batch", json={"jobs": jobs})
    assert [it["job"]["queue"] for it in r.json()["items"]] == ["cpu", "gpu", "gpu"]
    assert [j.queue for j in sent] == ["cpu", "gpu", "gpu"]


# --- fan-out --------------------------------------------------------------------------------


def test_fan_out_sub_jobs_keep_their_device_queue(method, deployment, sent):
    from core.jobs.dispatch import enqueue, rows

    deployment(gpu_workers=True)
    gpu = enqueue(METHOD, {"device": "cuda"})
    cpu = enqueue(METHOD, {"device": "cpu"})
    forced = enqueue(METHOD, {"device": "cuda"}, queue="cpu")
    assert [j.queue for j in sent] == ["gpu", "cpu", "gpu"]
    assert [r.queue for r in rows([gpu, cpu, forced])] == ["gpu", "cpu", "gpu"]


def test_fan_out_of_cuda_without_gpu_workers_records_nothing(method, deployment, sent):
    from core.jobs.dispatch import enqueue

    deployment(gpu_workers=False)
    before = _count()
    with pytest.raises(NoGpuWorker):
        enqueue(METHOD, {"device": "cuda"}, idempotency_key=uuid.uuid4().hex)
    assert _count() == before and sent == []


def test_wait_never_steals_a_gpu_job_into_a_cpu_process(method, deployment, sent):
    from core.jobs.dispatch import WaitTimeout, enqueue, rows, wait

    deployment(gpu_workers=True, queues="cpu")
    on_gpu = enqueue(METHOD, {"device": "auto"})  # routed to gpu; it could run on a CPU, but must not here
    on_cpu = enqueue(METHOD, {"device": "cpu"})
    stolen: list[str] = []
    with pytest.raises(WaitTimeout, match=on_gpu):
        wait([on_gpu, on_cpu], timeout=0.5, poll=0.05, max_poll=0.1, steal_after=0.0, on_steal=stolen.append)
    assert stolen == [on_cpu]
    assert [r.status for r in rows([on_gpu, on_cpu])] == ["queued", "succeeded"]


def test_wait_steals_a_gpu_job_in_a_process_that_consumes_gpu(method, deployment, sent):
    from core.jobs.dispatch import enqueue, wait

    deployment(gpu_workers=True, queues="gpu")
    job = enqueue(METHOD, {"device": "auto"})
    stolen: list[str] = []
    (row,) = wait([job], timeout=30, poll=0.05, steal_after=0.0, on_steal=stolen.append)
    assert row.status == "succeeded" and row.queue == "gpu" and stolen == [job]


# --- the worker: a device it cannot serve fails the job at once --------------------------------


def test_a_cuda_job_on_a_worker_without_cuda_fails_at_once_without_retry(method, deployment, monkeypatch):
    import core.device
    from core.db import crud
    from core.db.session import session_scope
    from core.jobs.submit import submit_job
    from services.worker.tasks.jobs import run_job

    monkeypatch.setattr(core.device, "cuda_available", lambda: False)
    deployment(gpu_workers=True, queues="gpu")
    job, _ = submit_job(METHOD, {"device": "cuda"}, enqueue=lambda job: None)
    assert job.queue == "gpu"
    retried: list = []
    monkeypatch.setattr(run_job, "retry", lambda *a, **k: retried.append(k) or RuntimeError("retried"))
    assert run_job.run(job.id) == "failed"
    assert retried == []
    with session_scope() as s:
        row = crud.get_job(s, job_id=job.id)
        assert row.status == "failed" and row.attempts == 1
        assert "DeviceUnavailable" in row.message and "this worker has no CUDA" in row.message
