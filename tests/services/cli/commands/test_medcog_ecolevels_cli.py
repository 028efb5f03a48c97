"""``paperworks medcog`` and ``paperworks ecolevels`` commands."""

from typer.testing import CliRunner

from services.cli.main import app


def test_listing_commands(data_dir):
    runner = CliRunner()
    r = runner.invoke(app, ["medcog", "diseases"])
    assert r.exit_code == 0 and "Pancreatitis" in r.output
    r = runner.invoke(app, ["ecolevels", "probes", "--target", "letter_assistant"])
    assert r.exit_code == 0 and "reference_letter" in r.output and "L4" in r.output


def test_high_runs_in_process_with_a_scripted_model(data_dir, scripted_llm):
    scripted_llm(
        "cli-rush", lambda m: "Diagnosis: pancreatitis" if "Diagnosis:" in m[-1]["content"] else "Action: OUTPUT"
    )
    r = CliRunner().invoke(app, ["medcog", "high", "--model", "scripted/cli-rush", "--max-turns", "4"])
    assert r.exit_code == 0, r.output
    assert "macro strict 0.000" in r.output and "Pancreatitis" in r.output
