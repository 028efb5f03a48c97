"""Keeps docs/PLATFORM.md's worked example true: the template method below is the one the
document shows (a params model, a job, a reproducer with an options model and presets). It
registers, runs in-process as a recorded job, reproduces into a folder, and appears in
``GET /v1/methods`` and ``paperworks methods``."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from typer.testing import CliRunner

from core.jobs import (
    JobContext,
    Report,
    ReproducerOptions,
    get_reproducer,
    register_method,
    register_reproducer,
    registry_snapshot,
)
from core.jobs.lifecycle import run_inline

DOC = Path(__file__).resolve().parents[1] / "docs" / "PLATFORM.md"


# --- the template method of docs/PLATFORM.md ("A new method in three files") --------------
class Params(BaseModel):
    n: int = Field(3, ge=1, le=100, description="How many squares.")


def run(params: Params, progress: JobContext) -> Report:
    """Sum of the first n squares."""
    total = 0
    for i in progress.iter(range(1, params.n + 1), "square"):
        total += i * i
    report = Report(title="Squares", summary=f"sum of the first {params.n} squares = {total}")
    report.metrics["total"] = total
    report.add_table("Squares", ["i", "i²"], [[i, i * i] for i in range(1, params.n + 1)])
    return report


class Options(ReproducerOptions):
    PRESETS = {"quick": {"n": 3}, "full": {"n": 50}}
    preset: Literal["quick", "full"] = Field("quick", description="quick (tests) or full (the results).")
    n: int = Field(3, ge=1, le=100, description="How many squares.")


def reproduce(options: Options, progress: JobContext) -> Report:
    """Squares at the preset's size."""
    report = run(Params(n=options.n), progress)
    report.add_file("squares.json", f'{{"total": {report.metrics["total"]}}}', kind="json")
    return report


def _register() -> None:
    register_method("example.squares", title="Example: squares", queue="cpu")(run)
    register_reproducer("example", options=Options, description="The worked example of docs/PLATFORM.md")(reproduce)


def test_the_document_shows_this_example():
    text = DOC.read_text(encoding="utf-8")
    for needle in (
        '@register_method("example.squares"',
        '@register_reproducer("example", options=Options',
        "class Options(ReproducerOptions):",
        'PRESETS = {"quick": {"n": 3}, "full": {"n": 50}}',
        "def reproduce(options: Options, progress: JobContext) -> Report:",
        "register_preparer",
        "register_learner",
        "PUBLIC = True",
    ):
        assert needle in text, needle
    assert "dpcr.run" not in text  # no such job
    block = text.split("```python\n# methods/example/jobs.py\n", 1)[1].split("```", 1)[0]
    compile(block, "docs/PLATFORM.md", "exec")  # the shown file is valid Python
    for line in (
        "class Params(BaseModel):",
        '    n: int = Field(3, ge=1, le=100, description="How many squares.")',
        '    for i in progress.iter(range(1, params.n + 1), "square"):',
        "    report = run(Params(n=options.n), progress)",
    ):
        assert line in block, line


def test_example_registers_runs_reproduces_and_is_listed(settings, api_client, tmp_path):
    with registry_snapshot():
        _register()
        job_id, outcome = run_inline("example.squares", {"n": 4})
        assert outcome.status == "succeeded", outcome.error

        spec = get_reproducer("example")
        path = spec.run(tmp_path, None, {"preset": "full", "n": 10})
        assert path == tmp_path / "example.md"
        assert "sum of the first 10 squares = 385" in path.read_text()
        assert (tmp_path / "example" / "squares.json").read_text() == '{"total": 385}'
        assert spec.validate({"preset": "full"}).n == 50

        listed = api_client.get("/v1/methods")
        assert listed.status_code == 200
        assert "example.squares" in [m["name"] for m in listed.json()]

        from services.cli.main import app

        res = CliRunner().invoke(app, ["methods"], env={"COLUMNS": "200"})
        assert res.exit_code == 0 and "example.squares" in res.output
    from core.jobs import list_methods

    assert "example.squares" not in [m.name for m in list_methods()]  # the snapshot removed it
