"""Is a model's weight already 4-bit? (spec §6.1, mitigations 1 and 2).

- :func:`gguf_tensor_types`: the quant type of every tensor of a GGUF file (the
  ``gguf`` reader lists them);
- :func:`distinct_per_block`: the number of distinct values in each block of 32
  consecutive weights along K. At most 16 everywhere means the weights are
  pre-quantized to a 16-level grid per block (Q4_1 dequantized by transformers).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import torch
from torch import nn

log = logging.getLogger(__name__)


def gguf_tensor_types(path: Path) -> dict[str, str]:
    """tensor name → quant type name (``Q4_1``, ``Q8_0``, ``F32`` …), logged as a summary."""
    import gguf

    reader = gguf.GGUFReader(str(path))
    types = {t.name: t.tensor_type.name for t in reader.tensors}
    log.info("GGUF %s: %s", Path(path).name, dict(Counter(types.values())))
    return types


def distinct_per_block(w: torch.Tensor, block: int = 32) -> torch.Tensor:
    """Distinct values in each block of ``block`` consecutive elements along K → (N, K/block)."""
    n, k = w.shape
    if k % block:
        raise ValueError(f"K={k} is not a multiple of block={block}")
    s = w.detach().reshape(n, k // block, block).sort(dim=2).values
    return 1 + (s.diff(dim=2) != 0).sum(dim=2)


def block_diagnostics(model: nn.Module, block: int = 32, skip: tuple[str, ...] = ("lm_head",)) -> dict[str, float]:
    """Summary over every ``nn.Linear`` weight except ``skip``: max/mean distinct values per block,
    share of blocks with ≤ 16."""
    counts = [
        distinct_per_block(m.weight.float(), block).flatten()
        for name, m in model.named_modules()
        if isinstance(m, nn.Linear) and m.weight.shape[1] % block == 0 and name.split(".")[-1] not in skip
    ]
    if not counts:
        return {"layers": 0}
    c = torch.cat(counts).float()
    return {
        "layers": len(counts),
        "blocks": int(c.numel()),
        "max_distinct": int(c.max()),
        "mean_distinct": float(c.mean()),
        "share_blocks_le_16": float((c <= 16).float().mean()),
    }
