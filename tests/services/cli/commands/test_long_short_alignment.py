"""``paperworks lsa synthetic|lm`` through typer's runner (in process)."""

from typer.testing import CliRunner


def test_lsa_synthetic_runs_and_lm_rejects_bad_alphas():
    from services.cli.main import app

    runner = CliRunner()
    res = runner.invoke(app, ["lsa", "synthetic", "--task", "length", "--pe", "learned", "--steps", "3"])
    assert res.exit_code == 0, res.output
    assert "refused" in res.output  # learned positions cannot run l > 10
    bad = runner.invoke(app, ["lsa", "lm", "--alphas", "a,b"])
    assert bad.exit_code != 0
