"""``paperworks sites`` and ``paperworks pae`` commands."""

from __future__ import annotations

from typer.testing import CliRunner

from agents.pae import store


def _app():
    from services.cli.main import app

    return app


def test_commands_are_registered_and_validate():
    runner = CliRunner()
    app = _app()
    r = runner.invoke(app, ["sites", "serve", "--help"])
    assert r.exit_code == 0 and "--port" in r.output
    for cmd in (["pae", "run", "--help"], ["pae", "episode", "--help"], ["pae", "runs", "--help"]):
        assert runner.invoke(app, cmd).exit_code == 0
    bad = runner.invoke(app, ["pae", "run", "--train-sites", "github"])  # options generated from TrainParams
    assert bad.exit_code == 2 and "unknown sites" in bad.output
    bad = runner.invoke(app, ["pae", "run", "--train-sites", '["shop", "github"]'])  # a JSON list works too
    assert bad.exit_code == 2 and "unknown sites" in bad.output and "github" in bad.output
    assert runner.invoke(app, ["pae", "run", "--preset", "huge"]).exit_code != 0
    assert runner.invoke(app, ["pae", "episode", "hi", "--site", "nowhere"]).exit_code != 0


def test_runs_and_show():
    run_id = store.create_run(name="cli-listed", config={})
    store.update_run(run_id=run_id, metrics={"history": [{"kind": "test", "iteration": 0, "success": {"test": 0.5}}]})
    runner = CliRunner()
    listed = runner.invoke(_app(), ["pae", "runs", "--limit", "200"])
    assert listed.exit_code == 0 and run_id[:8] in listed.output
    shown = runner.invoke(_app(), ["pae", "show", run_id])
    assert shown.exit_code == 0 and '"success": {"test": 0.5}' in shown.output
    assert runner.invoke(_app(), ["pae", "show", "0" * 32]).exit_code == 1
