"""scikit-learn digits (1,797 real 8×8 images) with the fixed stratified 1,257 / 540 split of spec §5.

``size=16`` is the optional upsampled variant (bilinear 8 → 16) so that p ∈ {16, 8, 4, 2, 1}.
Pixels are scaled to [0, 1] and standardised with the training mean and std.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import torch
import torch.nn.functional as F

TEST_SIZE = 540
SPLIT_SEED = 0


@lru_cache(maxsize=4)
def load_split(size: int = 8) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(x_train (1257, 1, S, S), y_train, x_test (540, 1, S, S), y_test)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if size not in (8, 16):
        raise ValueError("size must be 8 or 16")
    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    y = torch.tensor(d.target, dtype=torch.long)
    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=TEST_SIZE, stratify=d.target, random_state=SPLIT_SEED)
    if size == 16:
        x = F.interpolate(x, size=(16, 16), mode="bilinear", align_corners=False)
    mean, std = x[tr].mean(), x[tr].std()
    x = (x - mean) / std
    return x[tr], y[tr], x[te], y[te]


def random_shift(x: torch.Tensor, gen: torch.Generator, max_shift: int = 1) -> torch.Tensor:
    """Shift each image by up to ±max_shift pixels in each direction, filling with the background value."""
    b, _, s, _ = x.shape
    pad = F.pad(x, (max_shift,) * 4, value=float(x.min()))
    dx = torch.randint(0, 2 * max_shift + 1, (b,), generator=gen)
    dy = torch.randint(0, 2 * max_shift + 1, (b,), generator=gen)
    return torch.stack([pad[i, :, dy[i] : dy[i] + s, dx[i] : dx[i] + s] for i in range(b)])
