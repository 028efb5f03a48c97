"""core.jobs.dispatch.map_jobs: one fan-out, as sub-jobs (device routing, steal guard) or inline with progress."""

from __future__ import annotations

import uuid

import pytest
from pydantic import Field

from core.device import DeviceParams
from core.jobs import InvalidParams, JobContext, Report, register_method, registry_snapshot
from core.jobs.dispatch import NoSender, WaitTimeout, map_jobs, register_sender, use_jobs

METHOD = "test_map.square"


class _Params(DeviceParams):
    x: int = Field(0, ge=0, le=1000)


def _square(params: _Params, progress: JobContext) -> Report:
    progress(1.0, f"x={params.x}")
    report = Report(title="square", summary=str(params.x**2))
    report.data = {"square": params.x**2, "device": params.device, "amp": params.amp}
    return report


@pytest.fixture
def method():
    with registry_snapshot():
        register_method(METHOD, title="map_jobs test job", queue="cpu")(_square)
        yield METHOD


@pytest.fixture
def no_sender():
    previous = register_sender(None)
    yield
    register_sender(previous)


@pytest.fixture
def sent():
    log: list = []
    previous = register_sender(log.append)
    yield log
    register_sender(previous)


@pytest.fixture
def deployment(settings, monkeypatch):
    def set_(*, gpu_workers: bool, queues: str = "cpu") -> None:
        monkeypatch.setattr(settings, "gpu_workers", gpu_workers)
        monkeypatch.setattr(settings, "worker_queues", queues)

    set_(gpu_workers=False)
    return set_


def _recording_context(events: list) -> JobContext:
    return JobContext(lambda f, m: events.append((round(f, 3), m)))


def test_inline_without_a_sender_runs_each_in_turn_with_a_share_of_the_progress(method, no_sender):
    events: list = []
    seen: list = []

    def inline(p: _Params, share: JobContext) -> int:
        seen.append(type(p))
        share(1.0, f"done {p.x}")
        return p.x + 100

    out = map_jobs(
        method, [{"x": 1}, _Params(x=2)], inline=inline, progress=_recording_context(events), label=lambda p: f"x{p.x}"
    )
    assert out == [101, 102] and seen == [_Params, _Params]
    assert events == [(0.0, "x1"), (0.5, "done 1"), (0.5, "x2"), (1.0, "done 2")]


def test_inline_by_default_runs_the_registered_job_and_returns_its_data(method, no_sender):
    out = map_jobs(method, [{"x": 3}, {"x": 4}], result=lambda d: d["square"])
    assert out == [9, 16]
    assert map_jobs(method, [{"x": 5}])[0]["square"] == 25
    assert map_jobs(method, []) == []


def test_dispatch_jobs_without_a_sender_fails_before_anything_runs(method, no_sender):
    ran: list = []
    with pytest.raises(NoSender):
        map_jobs(method, [{"x": 1}], dispatch="jobs", inline=lambda p, s: ran.append(p))
    assert ran == [] and not use_jobs("auto") and not use_jobs("inline")
    with pytest.raises(ValueError, match="dispatch"):
        use_jobs("sometimes")  # type: ignore[arg-type]


def test_bad_params_fail_before_any_sub_job_is_sent(method, sent):
    with pytest.raises(InvalidParams):
        map_jobs(method, [{"x": 1}, {"x": -1}])
    assert sent == []


def test_with_a_sender_the_params_become_sub_jobs_whose_reports_come_back(method, sent, deployment):
    parent = JobContext(lambda f, m: None, job_id=f"parent-{uuid.uuid4().hex[:8]}")
    # nobody consumes the queue: wait() steals the queued sub-jobs at once and runs them here
    out = map_jobs(
        method,
        [{"x": 2}, {"x": 3, "amp": "bf16"}],
        result=lambda d: (d["square"], d["amp"]),
        progress=parent,
        key="sq",
        steal_after=0.0,
        inline=lambda p, s: pytest.fail("ran inline"),
    )
    assert out == [(4, "off"), (9, "bf16")]
    assert [j.method for j in sent] == [METHOD, METHOD]
    assert [j.idempotency_key for j in sent] == [f"sq:{parent.job_id}:0", f"sq:{parent.job_id}:1"]
    assert [j.params["amp"] for j in sent] == ["off", "bf16"]
    # a retried parent finds its sub-jobs again: the same keys send nothing new and re-run nothing
    again = map_jobs(method, [{"x": 2}, {"x": 3, "amp": "bf16"}], progress=parent, key="sq", steal_after=0.0)
    assert [d["square"] for d in again] == [4, 9] and len(sent) == 2


def test_a_gpu_sub_job_is_routed_to_gpu_and_never_stolen_by_a_cpu_parent(method, sent, deployment):
    deployment(gpu_workers=True, queues="cpu")
    with pytest.raises(WaitTimeout):
        map_jobs(method, [{"x": 1, "device": "cuda"}], steal_after=0.0, timeout=0.5)
    assert [j.queue for j in sent] == ["gpu"] and sent[0].status == "queued"


def test_explicit_keys_are_content_keys_shared_across_runs(method, sent):
    keys = [f"content-{uuid.uuid4().hex}:{x}" for x in (1, 2)]
    first = map_jobs(method, [{"x": 1}, {"x": 2}], keys=keys, steal_after=0.0, result=lambda d: d["square"])
    other_run = JobContext(lambda f, m: None, job_id="another-parent")
    again = map_jobs(method, [{"x": 1}, {"x": 2}], keys=keys, progress=other_run, steal_after=0.0)
    assert first == [1, 4] and [d["square"] for d in again] == [1, 4]
    assert [j.idempotency_key for j in sent] == keys  # sent once, found again by the second run
    with pytest.raises(ValueError, match="one per params"):
        map_jobs(method, [{"x": 1}], keys=["a", "b"])
