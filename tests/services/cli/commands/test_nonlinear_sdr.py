"""``paperworks sdr fit|dataset`` through typer's runner (in process)."""

import numpy as np
from typer.testing import CliRunner


def test_sdr_fit_a_csv_and_write_the_plot(tmp_path):
    from services.cli.main import app

    rng = np.random.default_rng(0)
    x = rng.standard_normal((80, 3))
    y = x[:, 0] - x[:, 2] + 0.1 * rng.standard_normal(80)
    csv = tmp_path / "t.csv"
    csv.write_text("a,b,c,y\n" + "\n".join(",".join(f"{v:.4f}" for v in (*r, t)) for r, t in zip(x, y)))
    plot = tmp_path / "plot.png"
    res = CliRunner().invoke(
        app,
        [
            "sdr",
            "fit",
            str(csv),
            "--response",
            "y",
            "--method",
            "linear",
            "--n-components",
            "1",
            "--no-evaluate",
            "--plot",
            str(plot),
        ],
        env={"COLUMNS": "200"},
    )
    assert res.exit_code == 0, res.output
    assert "Estimated directions" in res.output and "Eigenvalues" in res.output
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_sdr_bad_input_exits_2(tmp_path):
    from services.cli.main import app

    csv = tmp_path / "t.csv"
    csv.write_text("a,y\n1,2\n" * 20)
    res = CliRunner().invoke(app, ["sdr", "fit", str(csv), "--response", "nope"])
    assert res.exit_code == 2 and "no column" in res.output
    res = CliRunner().invoke(app, ["sdr", "dataset", "mnist"])
    assert res.exit_code == 2
