"""``paperworks rf edit`` / ``rf reconstruct`` run in-process with the tiny model."""

import io

from PIL import Image
from typer.testing import CliRunner


def _digit_png(tmp_path, held_out_digits, i=0):
    from methods.rf_solver.data import tensor_to_uint8

    path = tmp_path / "digit.png"
    Image.fromarray(tensor_to_uint8(held_out_digits.images[i])).save(path)
    return path


def test_rf_edit_command(tmp_path, monkeypatch, tiny_velocity, held_out_digits):
    from methods.rf_solver import experiment
    from services.cli.main import app

    monkeypatch.setattr(experiment, "load_velocity_model", lambda preset, progress, **_device: tiny_velocity)
    img = _digit_png(tmp_path, held_out_digits)
    out = tmp_path / "edit.png"
    label = str(int(held_out_digits.labels[0]))
    r = CliRunner().invoke(
        app,
        [
            "rf",
            "edit",
            str(img),
            "--source-label",
            label,
            "--target-label",
            "7",
            "--steps",
            "6",
            "--inject",
            "2",
            "--out",
            str(out),
            "--report",
            str(tmp_path / "r.md"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "cached_v_tensors" in r.output
    side = Image.open(io.BytesIO(out.read_bytes()))
    assert side.size[0] == 3 * side.size[1]  # source | reconstruction | edit
    assert (tmp_path / "r.md").read_text().startswith("# RF-Edit: ")


def _flat(output: str) -> str:
    """The CLI's error panel wraps at the terminal width (80 columns in CI): join it back up."""
    return " ".join(output.replace("│", " ").replace("╭", " ").replace("╰", " ").replace("─", " ").split())


def test_rf_edit_rejects_bad_input(tmp_path):
    from services.cli.main import app

    junk = tmp_path / "junk.png"
    junk.write_bytes(b"not an image")
    r = CliRunner().invoke(app, ["rf", "edit", str(junk), "--source-label", "3", "--target-label", "8"])
    assert r.exit_code == 2 and "not a readable image" in _flat(r.output)
    img = tmp_path / "ok.png"
    Image.new("L", (16, 16)).save(img)
    r = CliRunner().invoke(app, ["rf", "edit", str(img), "--source-label", "3", "--target-label", "flower"])
    assert r.exit_code == 2 and "labels" in _flat(r.output)


def test_rf_reconstruct_command(tmp_path, monkeypatch, tiny_velocity, held_out_digits):
    from methods.rf_solver import experiment
    from services.cli.main import app

    monkeypatch.setattr(experiment, "load_velocity_model", lambda preset, progress, **_device: tiny_velocity)
    img = _digit_png(tmp_path, held_out_digits, 2)
    r = CliRunner().invoke(
        app,
        [
            "rf",
            "reconstruct",
            str(img),
            "--label",
            str(int(held_out_digits.labels[2])),
            "--nfes",
            "4,8",
            "--out",
            str(tmp_path / "p.png"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert "RF-Solver-2" in r.output and (tmp_path / "p.png").stat().st_size > 1000
