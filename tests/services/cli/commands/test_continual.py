"""``paperworks continual methods|run`` through typer's runner (in process)."""

from typer.testing import CliRunner


def test_continual_methods_and_a_quick_one_task_run(tmp_path):
    from services.cli.main import app

    runner = CliRunner()
    listed = runner.invoke(app, ["continual", "methods"])
    assert listed.exit_code == 0, listed.output
    assert "dpcr" in listed.output and "quick" in listed.output

    out = tmp_path / "run.md"
    res = runner.invoke(
        app,
        [
            "continual",
            "run",
            "dpcr",
            "--preset",
            "quick",
            "--tasks",
            "1",
            "--samples-per-class",
            "24",
            "-o",
            "channels=[4,8,8]",
            "-o",
            "epochs_first=1",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "A_f" in res.output and "lwf" in res.output
    text = out.read_text()
    assert "24 samples/class" in text
    for arm in ("lwf", "ridge_uncal", "tssp", "dpcr", "oracle"):
        assert f"| {arm} |" in text

    bad = runner.invoke(app, ["continual", "run", "dpcr", "--preset", "nope"])
    assert bad.exit_code == 2 and "unknown preset" in bad.output
    bad = runner.invoke(app, ["continual", "run", "dpcr", "-o", "epochs_first=-3"])
    assert bad.exit_code == 2 and "epochs_first" in bad.output
