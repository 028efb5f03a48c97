"""``paperworks fourier-mamba derain`` / ``train`` in-process with the tiny preset."""

import io

import numpy as np
from PIL import Image
from typer.testing import CliRunner


def test_derain_image_with_added_rain_writes_output(tmp_path):
    from services.cli.main import app

    img = tmp_path / "in.png"
    Image.fromarray(np.random.default_rng(1).integers(0, 255, (40, 52, 3), dtype=np.uint8)).save(img)
    out = tmp_path / "out.png"
    r = CliRunner().invoke(
        app, ["fourier-mamba", "derain", str(img), "--add-rain", "L", "--preset", "tiny", "--out", str(out)]
    )
    assert r.exit_code == 0, r.output
    assert "PSNR(Y)" in r.output
    with Image.open(io.BytesIO(out.read_bytes())) as im:
        assert im.size == (52, 40)


def test_bad_inputs_exit_2(tmp_path):
    from services.cli.main import app

    runner = CliRunner()
    assert runner.invoke(app, ["fourier-mamba", "derain"]).exit_code == 2  # neither IMAGE nor --sample
    bad = tmp_path / "x.png"
    bad.write_bytes(b"not an image")
    assert runner.invoke(app, ["fourier-mamba", "derain", str(bad)]).exit_code == 2
    assert runner.invoke(app, ["fourier-mamba", "derain", "--sample", "mars"]).exit_code == 2
    assert runner.invoke(app, ["fourier-mamba", "train", "--preset", "huge"]).exit_code == 2
