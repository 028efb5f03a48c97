"""The last decoder layer's attention projections used by LMS3 (spec §3.2-3.3).

All weights are taken from ``layers[-1].self_attn`` in PyTorch's ``[out, in]``
layout and cast to fp32:

* ``W_Q ∈ R^{(H·h)×d}``, ``W_K ∈ R^{(H_kv·h)×d}``, ``W_V ∈ R^{(H_kv·h)×d}``;
* the GQA expansion ``W̃_K`` repeats every key head's block ``n_rep = H / H_kv``
  times consecutively, so query head ``i`` meets key head ``⌊i / n_rep⌋``, the
  grouping of HF ``repeat_kv``;
* ``P = W̃_K · W_Q`` (orientation ``"reference"``, the product the reference code
  executes) or ``P = W̃_Kᵀ · W_Q`` (orientation ``"attention"``: then
  ``x_qᵀ P x_X`` is the pre-RoPE attention logit of query ``x_X`` against key ``x_q``,
  summed over heads);
* ``Stab(X) = ‖W_V x_X‖₂`` with the unexpanded ``W_V`` (paper Eq. 22).

RoPE, biases and the ``1/√h`` scale are ignored, as in the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from methods.lms3.config import Orientation


def expand_kv_weight(w_k: torch.Tensor, n_heads: int, n_kv_heads: int) -> torch.Tensor:
    """GQA-expand a key (or value) weight from ``(H_kv·h, d)`` to ``(H·h, d)``.

    Each key head's ``h × d`` block is repeated ``n_rep = H / H_kv`` times in a row,
    matching ``transformers``' ``repeat_kv`` (query head ``i`` uses key head ``i // n_rep``).
    """
    if n_heads % n_kv_heads:
        raise ValueError(f"n_heads={n_heads} is not a multiple of n_kv_heads={n_kv_heads}")
    rows, d = w_k.shape
    if rows % n_kv_heads:
        raise ValueError(f"weight rows {rows} do not split into {n_kv_heads} heads")
    head_dim = rows // n_kv_heads
    n_rep = n_heads // n_kv_heads
    blocks = w_k.reshape(n_kv_heads, head_dim, d)
    return blocks.repeat_interleave(n_rep, dim=0).reshape(n_heads * head_dim, d)


def projection_matrix(w_q: torch.Tensor, w_k_expanded: torch.Tensor, orientation: Orientation) -> torch.Tensor:
    """``P`` of spec §3.3: ``W̃_K W_Q`` (``"reference"``) or ``W̃_Kᵀ W_Q`` (``"attention"``)."""
    if orientation == "reference":
        if w_k_expanded.shape[1] != w_q.shape[0]:
            raise ValueError(
                "the reference orientation W̃_K·W_Q needs H·h == hidden size; "
                f"got W̃_K {tuple(w_k_expanded.shape)} and W_Q {tuple(w_q.shape)}"
            )
        return w_k_expanded @ w_q
    if orientation == "attention":
        return w_k_expanded.T @ w_q
    raise ValueError(f"unknown orientation {orientation!r}")


@dataclass(frozen=True)
class AttentionProjections:
    """fp32 copies of the last layer's ``W_Q``, ``W̃_K``, ``W_V`` and both ``P`` matrices."""

    w_q: np.ndarray
    w_k_expanded: np.ndarray
    w_v: np.ndarray
    p_reference: np.ndarray
    p_attention: np.ndarray
    n_heads: int
    n_kv_heads: int
    head_dim: int

    @property
    def hidden_size(self) -> int:
        return int(self.w_q.shape[1])

    def p(self, orientation: Orientation) -> np.ndarray:
        if orientation == "reference":
            return self.p_reference
        if orientation == "attention":
            return self.p_attention
        raise ValueError(f"unknown orientation {orientation!r}")

    def project(self, x: np.ndarray, orientation: Orientation) -> np.ndarray:
        """``P x`` for each row of ``x`` (n, d) → (n, d), in fp32."""
        return np.asarray(x, dtype=np.float32) @ self.p(orientation).T

    def stability(self, x: np.ndarray) -> np.ndarray:
        """``Stab(X) = ‖W_V x_X‖₂`` for each row of ``x`` (paper Eq. 22), fp32."""
        v = np.asarray(x, dtype=np.float32) @ self.w_v.T
        return np.linalg.norm(v, axis=1).astype(np.float32)


def attention_projections(model: torch.nn.Module) -> AttentionProjections:
    """Read the last decoder layer's projections from a transformers causal LM.

    The head counts come from the model config (the reference hard-codes
    Llama-3-8B's; spec §8 pitfall 5). The model is not modified.
    """
    cfg = model.config
    n_heads = int(cfg.num_attention_heads)
    n_kv = int(getattr(cfg, "num_key_value_heads", None) or n_heads)
    attn = model.base_model.layers[-1].self_attn
    with torch.no_grad():
        w_q = attn.q_proj.weight.detach().to(torch.float32).clone()
        w_k = attn.k_proj.weight.detach().to(torch.float32).clone()
        w_v = attn.v_proj.weight.detach().to(torch.float32).clone()
        head_dim = w_q.shape[0] // n_heads
        w_k_exp = expand_kv_weight(w_k, n_heads, n_kv)
        p_att = projection_matrix(w_q, w_k_exp, "attention")
        try:
            p_ref = projection_matrix(w_q, w_k_exp, "reference")
        except ValueError:  # H·h != d: only the attention orientation is defined
            p_ref = torch.full_like(p_att, float("nan"))
    return AttentionProjections(
        w_q=w_q.numpy(),
        w_k_expanded=w_k_exp.numpy(),
        w_v=w_v.numpy(),
        p_reference=p_ref.numpy(),
        p_attention=p_att.numpy(),
        n_heads=n_heads,
        n_kv_heads=n_kv,
        head_dim=int(head_dim),
    )
