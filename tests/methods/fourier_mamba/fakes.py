"""Stand-ins for the device tests (tests/test_devices.py): models in a temporary folder, a small upload.

The jobs cache trained models under ``<cache_dir>/fourier_mamba``; a test run on another device must
neither overwrite the shared cache nor derain a full-size sample photo (minutes on the lazy stand-in).
"""

from __future__ import annotations

import hashlib
import io

import numpy as np
from PIL import Image


def _small_png() -> bytes:
    """A deterministic 24×32 RGB image (smooth colour ramps and a few stripes)."""
    yy, xx = np.mgrid[0:24, 0:32]
    img = np.stack([xx * 8, yy * 10, (xx + yy) * 4], axis=-1) % 256
    img[:, ::7] = 230  # vertical stripes: something for the model to remove
    buf = io.BytesIO()
    Image.fromarray(img.astype(np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


SMALL_PNG = _small_png()
SMALL_SHA = hashlib.sha256(SMALL_PNG).hexdigest()


def isolated_models(monkeypatch, tmp_path) -> None:
    """Trained models go to (and come from) ``tmp_path``, never the shared cache."""
    from methods.fourier_mamba import experiment

    monkeypatch.setattr(experiment, "checkpoint_path", lambda preset, order: tmp_path / f"{preset}-{order}.pt")


def tiny_model_and_small_upload(monkeypatch, tmp_path) -> None:
    """:func:`isolated_models`, a ``tiny`` zigzag model trained there on the CPU (2 steps), and
    :data:`SMALL_PNG` in the artifact store (params name it by :data:`SMALL_SHA`)."""
    from core.artifacts import get_artifact_store
    from core.jobs.context import null_context
    from methods.fourier_mamba.experiment import train_and_save

    isolated_models(monkeypatch, tmp_path)
    assert get_artifact_store().put_bytes(SMALL_PNG, name="small.png").sha256 == SMALL_SHA
    train_and_save("tiny", "zigzag", null_context(), device="cpu", steps=2)
