"""`paperworks run --batch`, `examples`/`try`, `doctor`/`prepare --check`, and the remote runner's SSE follow."""

from __future__ import annotations

import contextlib
import json

import pytest
from typer.testing import CliRunner

from services.cli import jobrun
from services.cli.main import app


@pytest.fixture
def remote_api(api_client, monkeypatch):
    """The in-process API; a submitted job runs at once (as a worker would)."""
    from core.jobs.lifecycle import execute_job
    from services.api import deps

    monkeypatch.setattr(deps, "enqueue", lambda job: execute_job(job.id))
    monkeypatch.setattr(jobrun, "api_client", lambda: contextlib.nullcontext(api_client))
    return api_client


def test_iter_sse_parses_events_and_skips_comments():
    lines = [": keep-alive", "", "event: progress", "id: 1", 'data: {"a":', "data: 1}", "", "data: x", ""]
    assert list(jobrun.iter_sse(lines)) == [("progress", '{"a":\n1}'), ("message", "x")]


def test_follow_remote_uses_the_event_stream(remote_api):
    seen = []
    job = remote_api.post("/v1/jobs", json={"method": "diag.sleep", "params": {"seconds": 0, "steps": 2}}).json()
    final = jobrun.follow_remote(remote_api, job, lambda f, m: seen.append((f, m)))
    assert final["status"] == "succeeded" and seen[-1][0] == 1.0


def test_batch_file_submits_once_and_waits(remote_api, tmp_path):
    f = tmp_path / "jobs.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps({"method": "diag.sleep", "params": {"seconds": 0, "steps": 1}}),
                "# a comment",
                json.dumps({"method": "diag.sleep", "params": {"seconds": 0, "fail": True}, "idempotency_key": "k-2"}),
                json.dumps({"method": "diag.sleep", "params": {"seconds": 0, "steps": 3}}),
            ]
        )
    )
    out = tmp_path / "results.jsonl"
    r = CliRunner().invoke(app, ["run", "--batch", str(f), "--out", str(out)])
    assert r.exit_code == 1, r.output  # one job failed on purpose
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["job"]["status"] for row in rows] == ["succeeded", "failed", "succeeded"]
    assert "3 submitted" in r.output.replace("\n", " ")
    first_ids = [row["job"]["id"] for row in rows]
    again = CliRunner().invoke(app, ["run", "--batch", str(f), "--out", str(out)])
    assert "0 submitted, 3 already submitted" in again.output.replace("\n", " ")
    assert [json.loads(line)["job"]["id"] for line in out.read_text().splitlines()] == first_ids
    fresh = CliRunner().invoke(app, ["run", "--batch", str(f), "--fresh", "--no-wait"])
    # new derived keys; the line with its own key (k-2) still finds its job
    assert fresh.exit_code == 0 and "2 submitted, 1 already submitted" in fresh.output.replace("\n", " ")


def test_batch_rejections_and_bad_files(remote_api, tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text(json.dumps({"method": "diag.sleep", "params": {"seconds": -1}}) + "\n")
    r = CliRunner().invoke(app, ["run", "--batch", str(f)])
    assert r.exit_code == 2 and "rejected (422)" in r.output
    assert "seconds: Input should be greater than or equal to 0" in r.output and "{'" not in r.output
    f.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))  # a renamed image: a sentence, not a codec error
    r = CliRunner().invoke(app, ["run", "--batch", str(f)], env={"COLUMNS": "300"})
    assert r.exit_code == 2 and "bad.jsonl is not a JSON Lines file: its content is a PNG image" in r.output
    f.write_text("{not json\n")
    assert CliRunner().invoke(app, ["run", "--batch", str(f)]).exit_code == 2
    f.write_text(json.dumps({"method": "diag.sleep", "extra": 1}) + "\n")
    r = CliRunner().invoke(app, ["run", "--batch", str(f)])
    assert r.exit_code == 2 and "unknown keys" in r.output
    assert CliRunner().invoke(app, ["run", "diag.sleep", "--batch", str(f)]).exit_code == 2
    assert CliRunner().invoke(app, ["run"]).exit_code == 2


def test_every_example_validates_and_needs_no_data(settings):
    from core.jobs import get_method
    from services.examples import EXAMPLES, examples, get_example

    assert len({e.name for e in EXAMPLES}) == len(EXAMPLES)
    for e in examples():
        get_method(e.method).validate(e.params)  # raises InvalidParams if the example went stale
        assert "data_dir" not in json.dumps(e.params) and "/shared/" not in json.dumps(e.params)
    assert get_example("llm.complete").name == "llm"
    with pytest.raises(KeyError, match="known: llm"):
        get_example("nope")


def test_examples_and_try_commands(api_client):
    r = CliRunner().invoke(app, ["examples"])
    assert r.exit_code == 0 and "paperworks try NAME" in r.output and "progress" in r.output
    r = CliRunner().invoke(app, ["try", "progress", "-p", "seconds=0"])
    assert r.exit_code == 0, r.output
    assert "paperworks run diag.sleep" in r.output and "succeeded" in r.output
    assert CliRunner().invoke(app, ["try", "nope"]).exit_code == 2
    listed = api_client.get("/v1/examples").json()
    assert {"name": "progress", "method": "diag.sleep"}.items() <= listed[1].items() or any(
        e["name"] == "progress" for e in listed
    )
    assert api_client.get("/v1/examples", headers={"Authorization": ""}).status_code == 401


def test_doctor_lists_checks_and_methods(monkeypatch):
    from services.cli import doctor

    results = doctor.run_checks()
    assert {r.check.name for r in results} >= {"database", "broker", "WordNet 3.0", "tesseract", "chromium"}
    # a machine without WordNet: DEFAME lacks it, the others are unaffected, and the fix is named
    fake = [doctor.Result(r.check, "missing here" if r.check.name == "WordNet 3.0" else None) for r in results]
    per = doctor.per_method(fake)
    assert [r.check.name for r in per["defame.check"]] == ["WordNet 3.0"] and per["diag.sleep"] == []
    monkeypatch.setattr(doctor, "run_checks", lambda: fake)
    r = CliRunner().invoke(app, ["doctor"])  # the tables go to stdout (issue #47): they can be piped
    assert r.exit_code == 0, r.output
    assert "wordnet-base" in r.stdout and "lacks WordNet 3.0" in r.stdout
    r = CliRunner().invoke(app, ["doctor", "--json"])
    got = json.loads(r.stdout)
    assert got["methods"]["defame.check"] == ["WordNet 3.0"] and got["methods"]["diag.sleep"] == []
    assert any(c["check"] == "WordNet 3.0" and not c["ok"] and "wordnet-base" in c["fix"] for c in got["checks"])
    r = CliRunner().invoke(app, ["prepare", "--check"])
    assert r.exit_code == 0


def test_prepare_warns_on_a_failing_step_unless_strict(monkeypatch):
    from core.jobs import register_preparer, registry_snapshot

    def broken() -> str:
        raise RuntimeError("WordNet 3.0 files not found: apt-get install -y wordnet-base")

    with registry_snapshot():
        from core.jobs import registry

        for name in list(registry._PREPARERS):  # only the broken one: no model conversion here
            registry._PREPARERS.pop(name)
        register_preparer("test.broken")(broken)
        r = CliRunner().invoke(app, ["prepare"])
        assert r.exit_code == 0
        assert CliRunner().invoke(app, ["prepare", "--strict"]).exit_code == 1
