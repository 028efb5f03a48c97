"""``services/cli/jobrun.py``: the one key=value parser and the one job runner (here and --remote)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import typer
from rich.console import Console

from services.cli import jobrun


@pytest.fixture
def out_buf(monkeypatch) -> io.StringIO:
    """Capture what jobrun prints (it prints on the shared stderr console)."""
    buf = io.StringIO()
    monkeypatch.setattr(jobrun, "console", Console(file=buf, force_terminal=False, width=200))
    from services.cli import progress

    monkeypatch.setattr(progress, "console", Console(file=io.StringIO(), force_terminal=False))
    return buf


def test_parse_kv_json_values_strings_and_base():
    got = jobrun.parse_kv(["a=1", "b=[4, 8]", "c=true", "d=hello", "e=", " f =x=y", 'g="1"'], {"a": 0, "z": 9})
    assert got == {"a": 1, "b": [4, 8], "c": True, "d": "hello", "e": "", "f": "x=y", "g": "1", "z": 9}
    base = {"k": 1}
    jobrun.parse_kv(["k=2"], base)
    assert base == {"k": 1}  # the base (a preset) is not modified


@pytest.mark.parametrize("pair", ["novalue", "=3", "  =x"])
def test_parse_kv_rejects_pairs_without_a_key(pair):
    with pytest.raises(typer.BadParameter, match="expected key=value"):
        jobrun.parse_kv(["a=1", pair])


def test_run_here_prints_the_report_or_writes_it(out_buf, tmp_path, capsys):
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "steps": 2}) == 0
    status, report = out_buf.getvalue(), capsys.readouterr().out
    assert ": succeeded" in status and "Diagnostic sleep" not in status  # status on stderr, the report on stdout
    assert "Diagnostic sleep" in report and "slept" in report
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "steps": 2}, as_json=True) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["steps"] == 2
    md = tmp_path / "r.md"
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "steps": 1}, out=md) == 0
    assert md.read_text().startswith("# Diagnostic sleep") and f"report written to {md}" in out_buf.getvalue()


def test_run_here_exit_codes(out_buf):
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "fail": True, "message": "on purpose"}) == 1
    assert "failed" in out_buf.getvalue() and "on purpose" in out_buf.getvalue()
    assert jobrun.run_job("diag.sleep", {"seconds": -1}) == 2
    assert "seconds" in out_buf.getvalue()
    assert jobrun.run_job("no.such_method", {}) == 2
    assert "unknown method" in out_buf.getvalue()


def test_show_replaces_the_markdown_and_out_still_writes_it(out_buf, tmp_path):
    seen = []
    md = tmp_path / "r.md"
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "steps": 3}, out=md, show=seen.append) == 0
    (result,) = seen
    assert result.report.metrics["steps"] == 3 and len(result.job_id) > 8
    assert md.read_text() == result.markdown
    with pytest.raises(LookupError, match="no stored artifact"):
        result.artifact_bytes("nothing.png")


@pytest.fixture
def remote_api(api_client, monkeypatch):
    """--remote against the in-process API; a submitted job runs at once (as a worker would)."""
    from core.jobs.lifecycle import execute_job
    from services.api import deps

    monkeypatch.setattr(deps, "enqueue", lambda job: execute_job(job.id))
    monkeypatch.setattr(jobrun, "api_client", lambda: contextlib.nullcontext(api_client))
    return api_client


def _artifact_method(params, progress):
    from core.jobs.report import Report

    report = Report(title="With a file", summary="one artifact")
    report.add_file("blob.bin", b"\x00\x01payload")
    return report


def test_remote_runs_through_the_api_and_reads_artifacts(out_buf, remote_api, monkeypatch, tmp_path):
    from pydantic import BaseModel

    from core.jobs import registry

    class NoParams(BaseModel):
        pass

    spec = registry.MethodSpec(
        name="test.cli_artifact", title="t", description="t", params_model=NoParams, run=_artifact_method
    )
    monkeypatch.setitem(registry._METHODS, "test.cli_artifact", spec)
    seen = []
    assert jobrun.run_job("test.cli_artifact", {}, remote=True, show=seen.append, poll_s=0.0) == 0
    assert seen[0].artifact_bytes("blob.bin") == b"\x00\x01payload"
    assert "/v1/artifacts/" in seen[0].markdown

    md = tmp_path / "remote.md"
    assert jobrun.run_job("diag.sleep", {"seconds": 0}, remote=True, out=md, poll_s=0.0) == 0
    assert md.read_text().startswith("# Diagnostic sleep")
    assert jobrun.run_job("diag.sleep", {"seconds": 0, "fail": True, "message": "boom"}, remote=True, poll_s=0.0) == 1
    assert "boom" in out_buf.getvalue()
    assert jobrun.run_job("diag.sleep", {"seconds": -1}, remote=True) == 2
    assert "error 422" in out_buf.getvalue() and "seconds" in out_buf.getvalue()
    assert jobrun.run_job("no.such_method", {}, remote=True) == 2
    assert "error 404" in out_buf.getvalue()


def test_run_command_uses_the_runner(tmp_path):
    from typer.testing import CliRunner

    from services.cli.main import app

    md = tmp_path / "run.md"
    r = CliRunner().invoke(app, ["run", "diag.sleep", "-p", "seconds=0", "-p", "steps=2", "--out", str(md)])
    assert r.exit_code == 0, r.output
    assert "slept" in md.read_text()
    bad = CliRunner().invoke(app, ["run", "diag.sleep", "-p", "seconds"])
    assert bad.exit_code == 2 and "expected key=value" in bad.output
    failed = CliRunner().invoke(app, ["run", "diag.sleep", "-p", "seconds=0", "-p", "fail=true"])
    assert failed.exit_code == 1
