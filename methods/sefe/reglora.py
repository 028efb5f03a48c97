"""RegLoRA (spec §3.3): key elements of each task's LoRA update and the penalty that protects them.

Notation (spec): an adapted linear layer ℓ has frozen ``W_ℓ ∈ R^{m×n}`` and LoRA factors
``B_ℓ ∈ R^{m×r}``, ``A_ℓ ∈ R^{r×n}``; the forward uses ``W + (α/r)·B A`` but selection and penalty
both use the **unscaled** ``ΔW_ℓ = B_ℓ A_ℓ``.

1. :func:`key_positions` — ``S_ℓ^{(t)}`` = flat indices of the top-``⌊0.02·m·n⌋`` entries of
   ``|B_ℓ A_ℓ|`` (fp32), after task t, from task t's own adapter
   (reference: ``key_elements_identification.py``).
2. :meth:`KeyMemory.extend` — ``K_ℓ^{(t)} = S_ℓ^{(t)} ⧺ K_ℓ^{(t−1)}`` (a list: duplicates kept).
3. :func:`penalty` — ``L_reg = (1/N_mod) Σ_ℓ mean_{(i,j)∈K_ℓ} |(B_ℓ A_ℓ)_{ij}|`` with N_mod the number
   of adapted matrices (the reference hard-codes 224 for LLaVA-7B; here it is counted, 210 for
   SmolLM2-135M); the loss is ``CE + λ·L_reg`` (λ = 2.5e3) on every step of tasks ≥ 2.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

KEY_FRACTION = 0.02


def key_count(m: int, n: int, fraction: float = KEY_FRACTION) -> int:
    """``⌊fraction · m · n⌋``."""
    return int(fraction * m * n)


def key_positions(B: torch.Tensor, A: torch.Tensor, fraction: float = KEY_FRACTION) -> torch.Tensor:
    """Flat indices (int64, into the m×n ΔW) of the top-k entries of ``|B A|`` computed in fp32.

    ``row = idx // n``, ``col = idx % n``.
    """
    with torch.no_grad():
        delta = (B.detach().float() @ A.detach().float()).abs().flatten()
        k = key_count(B.shape[0], A.shape[1], fraction)
        if k == 0:
            return torch.empty(0, dtype=torch.long)
        return torch.topk(delta, k, sorted=False).indices


def lora_pairs(model: Any, adapter: str = "default") -> Iterator[tuple[str, torch.Tensor, torch.Tensor]]:
    """``(module name, B, A)`` of every LoRA-adapted linear layer of a PEFT model, in module order."""
    for name, mod in model.named_modules():
        lora_a = getattr(mod, "lora_A", None)
        lora_b = getattr(mod, "lora_B", None)
        if lora_a is not None and lora_b is not None and adapter in lora_a:
            yield name.replace("base_model.model.", "", 1), lora_b[adapter].weight, lora_a[adapter].weight


class KeyMemory:
    """The accumulated key positions ``K_ℓ`` of every adapted matrix (module name → flat indices)."""

    def __init__(self, fraction: float = KEY_FRACTION) -> None:
        self.fraction = fraction
        self.positions: dict[str, torch.Tensor] = {}
        self.tasks = 0

    def extend(self, pairs: Any) -> dict[str, int]:
        """Append ``S_ℓ`` of a task's adapter to ``K_ℓ`` for every layer; returns the counts added.

        ``pairs``: a PEFT model, or an iterable of ``(module name, B, A)``.
        """
        added = {}
        for name, B, A in lora_pairs(pairs) if hasattr(pairs, "named_modules") else pairs:
            s = key_positions(B, A, self.fraction).to(torch.int32)  # ≤ 1536·576 fits in int32
            prev = self.positions.get(name)
            self.positions[name] = s if prev is None else torch.cat([s.to(prev.device), prev])
            added[name] = int(s.numel())
        self.tasks += 1
        return added

    def __len__(self) -> int:
        return sum(int(v.numel()) for v in self.positions.values())

    def to(self, device: Any) -> KeyMemory:
        """Keep the stored positions on ``device`` (where the penalty indexes the adapters); returns self."""
        self.positions = {k: v.to(device) for k, v in self.positions.items()}
        return self

    def state_dict(self) -> dict[str, Any]:
        return {"fraction": self.fraction, "tasks": self.tasks, "positions": self.positions}

    @classmethod
    def from_state_dict(cls, state: dict[str, Any]) -> KeyMemory:
        mem = cls(state["fraction"])
        mem.tasks = int(state["tasks"])
        mem.positions = dict(state["positions"])
        return mem


def penalty(model: Any, memory: KeyMemory) -> torch.Tensor:
    """``L_reg = (1/N_mod) Σ_ℓ mean_{K_ℓ} |(B_ℓ A_ℓ)|`` over the model's adapted matrices (0 when K is empty).

    N_mod counts every adapted matrix (as the reference's fixed 224 does), including any without
    stored positions.
    """
    terms = []
    n_mod = 0
    device = None
    for name, B, A in lora_pairs(model):
        n_mod += 1
        device = B.device
        idx = memory.positions.get(name)
        if idx is None or idx.numel() == 0:
            continue
        delta = (B @ A).flatten()
        terms.append(delta[idx.to(delta.device).long()].abs().mean())
    if not terms:
        return torch.zeros((), device=device)
    return torch.stack(terms).sum() / n_mod


def magnitudes(pairs: Any, memory: KeyMemory) -> tuple[float, float]:
    """Mean over matrices of mean ``|B A|`` at the stored positions and outside them.

    The §7 diagnostic: with RegLoRA the first should be much lower than without it.
    ``pairs``: ``(module name, B, A)`` of the adapter being examined.
    """
    with torch.no_grad():
        inside, outside = [], []
        for name, B, A in pairs:
            delta = (B.float() @ A.float()).abs().flatten()
            mask = torch.ones_like(delta, dtype=torch.bool)
            idx = memory.positions.get(name)
            if idx is not None and idx.numel():
                idx = idx.to(delta.device).long()
                inside.append(float(delta[idx].mean()))
                mask[idx] = False
            outside.append(float(delta[mask].mean()))
    mean = lambda v: float(sum(v) / len(v)) if v else float("nan")  # noqa: E731
    return mean(inside), mean(outside)
