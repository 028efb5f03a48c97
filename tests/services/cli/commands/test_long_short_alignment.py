"""``paperworks lsa synthetic|lm|smollm2`` through typer's runner (in process)."""

from typer.testing import CliRunner


def test_lsa_synthetic_runs_and_lm_rejects_bad_alphas():
    from services.cli.main import app

    runner = CliRunner()
    res = runner.invoke(app, ["lsa", "synthetic", "--task", "length", "--pe", "learned", "--steps", "3"])
    assert res.exit_code == 0, res.output
    assert "refused" in res.output  # learned positions cannot run l > 10
    bad = runner.invoke(app, ["lsa", "lm", "--alphas", "a,b"])
    assert bad.exit_code != 0


def test_lsa_lm_and_smollm2_validate_their_params():
    from services.cli.main import app

    runner = CliRunner()
    assert runner.invoke(app, ["lsa", "lm", "--variants", "b3", "--stage-a-steps", "1"]).exit_code != 0
    assert runner.invoke(app, ["lsa", "smollm2", "--samples", "100000"]).exit_code != 0
    assert "SmolLM2" in runner.invoke(app, ["lsa", "smollm2", "--help"]).output
