"""``paperworks lms3 index|select|pools`` through typer's runner (in process, real SmolLM2)."""

from __future__ import annotations

from typer.testing import CliRunner


def test_index_twice_then_select(data_dir):
    from services.cli.main import app

    runner = CliRunner()
    first = runner.invoke(app, ["lms3", "index", "mawps", "--pool-size", "6", "--seed", "5"])
    assert first.exit_code == 0, first.output
    assert "encoded now 6" in first.output
    again = runner.invoke(app, ["lms3", "index", "mawps", "--pool-size", "6", "--seed", "5"])
    assert again.exit_code == 0 and "encoded now 0" in again.output and "forward passes 0" in again.output

    q = "Tom has 9.0 books and gives away 4.0 . How many books does he have left ?"
    res = runner.invoke(app, ["lms3", "select", "mawps", q, "--pool-size", "6", "--seed", "5", "-k", "2", "--l", "1.0"])
    assert res.exit_code == 0, res.output
    assert "2 demonstration(s) kept" in res.output and "Here are some examples you can refer to." in res.output
    rej = runner.invoke(app, ["lms3", "select", "mawps", q, "--pool-size", "6", "--seed", "5"])
    assert rej.exit_code == 0 and "rejected" in rej.output and "Let's think step by step: " in rej.output

    listed = runner.invoke(app, ["lms3", "pools"])
    assert listed.exit_code == 0 and "mawps-n6s5" in listed.output

    bad = runner.invoke(app, ["lms3", "select", "math", "2+2"])
    assert bad.exit_code == 2 and "subject" in bad.output
