"""GQA expansion and the LLM-oriented projection against transformers' own attention pieces (spec §7)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers.models.llama.modeling_llama import repeat_kv

from methods.lms3.projections import attention_projections, expand_kv_weight, projection_matrix


def test_expand_matches_repeat_kv_grouping():
    torch.manual_seed(1)
    n_heads, n_kv, hd, d = 9, 3, 8, 72
    w_k = torch.randn(n_kv * hd, d)
    h = torch.randn(5, d)
    k = (h @ w_k.T).reshape(5, n_kv, hd).transpose(0, 1)[None]  # (1, n_kv, seq, hd) as in HF
    k_rep = repeat_kv(k, n_heads // n_kv)[0]  # (n_heads, seq, hd)
    ours = (h @ expand_kv_weight(w_k, n_heads, n_kv).T).reshape(5, n_heads, hd).transpose(0, 1)
    torch.testing.assert_close(ours, k_rep)
    # query head i meets key head i // n_rep, not i % n_kv
    assert torch.equal(ours[1], k_rep[1]) and torch.equal(ours[1], ours[0])
    assert not torch.allclose(ours[1], ours[3])


def test_expand_rejects_bad_head_counts():
    with pytest.raises(ValueError):
        expand_kv_weight(torch.zeros(16, 8), 5, 2)


def test_projection_is_the_attention_logit(tiny_llama):
    """x_qᵀ (W̃_Kᵀ W_Q) x_X equals Σ_heads q_h(x_X)·k_h(x_q) from the model's q_proj/k_proj + repeat_kv."""
    model = tiny_llama.model
    attn = model.base_model.layers[-1].self_attn
    pr = attention_projections(model)
    n_heads, n_kv, hd = pr.n_heads, pr.n_kv_heads, pr.head_dim
    assert (n_heads, n_kv, hd) == (4, 2, 16)
    g = torch.Generator().manual_seed(3)
    x_demo, x_q = torch.randn(6, 64, generator=g), torch.randn(6, 64, generator=g)
    with torch.no_grad():
        q = attn.q_proj(x_demo).reshape(6, n_heads, hd).transpose(0, 1)[None]
        k = repeat_kv(attn.k_proj(x_q).reshape(6, n_kv, hd).transpose(0, 1)[None], n_heads // n_kv)
    per_head = (q[0] * k[0]).sum(-1)  # (heads, pairs): logits of pair i, pre-RoPE, unscaled
    # per head: (W_Q h) · (W̃_K h') blockwise
    qe = (x_demo.numpy() @ pr.w_q.T).reshape(6, n_heads, hd)
    ke = (x_q.numpy() @ pr.w_k_expanded.T).reshape(6, n_heads, hd)
    np.testing.assert_allclose((qe * ke).sum(-1).T, per_head.numpy(), rtol=1e-4, atol=1e-4)
    # summed over heads: the bilinear form with P_attention
    bil = np.einsum("nd,nd->n", x_q.numpy(), pr.project(x_demo.numpy(), "attention"))
    np.testing.assert_allclose(bil, per_head.sum(0).numpy(), rtol=1e-4, atol=1e-4)


def test_reference_orientation_is_the_executed_product(tiny_llama):
    pr = attention_projections(tiny_llama.model)
    w_q, w_k = torch.from_numpy(pr.w_q), torch.from_numpy(pr.w_k_expanded)
    np.testing.assert_allclose(pr.p_reference, (w_k @ w_q).numpy(), rtol=1e-6)
    np.testing.assert_allclose(pr.p_attention, (w_k.T @ w_q).numpy(), rtol=1e-6)
    assert not np.allclose(pr.p_reference, pr.p_attention)
    with pytest.raises(ValueError):
        projection_matrix(torch.zeros(8, 4), torch.zeros(8, 6), "reference")


def test_stab_expansion_is_a_constant_factor(tiny_llama):
    """‖W̃_V x‖ = √n_rep ‖W_V x‖, so the unexpanded W_V ranks the same."""
    pr = attention_projections(tiny_llama.model)
    x = np.random.default_rng(0).normal(size=(20, 64)).astype(np.float32)
    w_v_exp = expand_kv_weight(torch.from_numpy(pr.w_v), pr.n_heads, pr.n_kv_heads).numpy()
    expanded = np.linalg.norm(x @ w_v_exp.T, axis=1)
    np.testing.assert_allclose(expanded, np.sqrt(pr.n_heads // pr.n_kv_heads) * pr.stability(x), rtol=1e-5)
    assert (np.argsort(expanded) == np.argsort(pr.stability(x))).all()


def test_smollm2_shapes():
    """SmolLM2-135M: d = 576, 9 query heads over 3 KV heads of 64 (spec §6)."""
    from core.llm import get_local_model

    pr = attention_projections(get_local_model().model)
    assert (pr.n_heads, pr.n_kv_heads, pr.head_dim) == (9, 3, 64)
    assert pr.w_k_expanded.shape == (576, 576) and pr.w_v.shape == (192, 576)
    assert pr.p_reference.dtype == np.float32 and np.isfinite(pr.p_reference).all()
