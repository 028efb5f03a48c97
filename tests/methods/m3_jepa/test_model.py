"""The MoE predictor (spec §3.2, §7): top-k gating without renormalisation, dense/one-expert limits, shapes."""

import pytest
import torch

from methods.m3_jepa.model import M3Predictor, MoE, PredictorConfig, masked_mean


@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_gate_keeps_exactly_k_largest_probabilities_unnormalised(k):
    torch.manual_seed(0)
    moe = MoE(16, 6, k, 0.0)
    z = torch.randn(3, 7, 16)
    w, p = moe.routing(z)
    assert torch.allclose(p.sum(-1), torch.ones(3, 7))  # the softmax sums to one
    assert ((w > 0).sum(-1) == k).all()
    top = p.topk(k, -1)
    assert torch.equal(w.gather(-1, top.indices), top.values)  # not renormalised
    total = w.sum(-1)
    if k == 6:
        assert torch.allclose(total, torch.ones(3, 7))
    else:
        assert (total < 1).all() and torch.allclose(total, top.values.sum(-1))


def test_k_equal_e_is_the_dense_softmax_mixture_and_one_expert_is_that_expert():
    torch.manual_seed(1)
    z = torch.randn(2, 5, 16)
    dense = MoE(16, 4, 4, 0.0).eval()
    p = torch.softmax(dense.gate(z), -1)
    ref = sum(p[..., j : j + 1] * dense.experts[j](z) for j in range(4))
    torch.testing.assert_close(dense(z), ref)
    one = MoE(16, 1, 1, 0.0).eval()
    torch.testing.assert_close(one(z), one.experts[0](z))


def test_sparse_output_uses_only_the_selected_experts():
    torch.manual_seed(2)
    moe = MoE(8, 5, 2, 0.0).eval()
    z = torch.randn(1, 1, 8)
    w, _ = moe.routing(z)
    picked = torch.nonzero(w[0, 0]).flatten().tolist()
    ref = sum(w[0, 0, j] * moe.experts[j](z) for j in picked)
    torch.testing.assert_close(moe(z), ref)


def test_bad_top_k_is_refused():
    with pytest.raises(ValueError, match="top_k"):
        MoE(8, 3, 4, 0.0)


@pytest.mark.parametrize("block", ["moe", "mlp"])
def test_heads_and_pooling_shapes(block):
    cfg = PredictorConfig(d_img=64, d_txt=40, hidden=24, experts=3, top_k=2, block=block)
    m = M3Predictor(cfg).eval()
    img, txt = torch.randn(5, 16, 64), torch.randn(5, 9, 40)
    mask = torch.ones(5, 9, dtype=torch.bool)
    mask[:, 6:] = False
    i2t, t2i = m("i2t", img), m("t2i", txt, mask, return_weights=True)
    assert i2t.pred.shape == (5, 40) and i2t.cl.shape == (5, 24)
    assert t2i.pred.shape == (5, 64) and t2i.cl.shape == (5, 24)
    assert m.target_cl("text", txt, mask).shape == (5, 24) and m.target_cl("image", img).shape == (5, 24)
    if block == "moe":
        assert set(t2i.weights) == {"pred", "cl"} and t2i.weights["cl"].shape == (5, 9, 3)
        # the two branches see different (branch-embedded) inputs, so their gates route differently
        assert not torch.equal(t2i.weights["pred"], t2i.weights["cl"])
    else:
        assert t2i.weights is None


def test_padding_tokens_do_not_change_the_pooled_outputs():
    torch.manual_seed(3)
    m = M3Predictor(PredictorConfig(d_img=8, d_txt=12, hidden=16, experts=3, top_k=2)).eval()
    txt = torch.randn(2, 4, 12)
    mask = torch.tensor([[1, 1, 1, 0], [1, 1, 0, 0]], dtype=torch.bool)
    a = m("t2i", txt, mask)
    txt2 = txt.clone()
    txt2[~mask] = 100.0  # garbage in the padding
    b = m("t2i", txt2, mask)
    torch.testing.assert_close(a.cl, b.cl)
    torch.testing.assert_close(masked_mean(txt, mask)[1], txt[1, :2].mean(0))


def test_direction_parameters_partition_the_model():
    m = M3Predictor(PredictorConfig(d_img=8, d_txt=12, hidden=16, experts=3, top_k=2))
    t2i, i2t, shared = m.direction_parameters("t2i"), m.direction_parameters("i2t"), m.shared_parameters()
    assert not set(t2i) & set(i2t)
    assert set(t2i) | set(i2t) | set(shared) == set(dict(m.named_parameters()))
    assert "in_proj.text.weight" in t2i and "cl_target.image.weight" in t2i and "dir_emb.t2i" in t2i
    assert "in_proj.image.weight" in i2t and "cl_target.text.weight" in i2t
    assert any(k.startswith("block.gate") for k in shared) and any(k.startswith("block.experts") for k in shared)


def test_sparse_moe_runs_under_bf16_autocast():
    """bf16 experts (autocast) add into the mixture in its own dtype; close to the fp32 output."""
    from core.device import autocast

    torch.manual_seed(0)
    moe = MoE(16, 4, 2, 0.0).eval()
    z = torch.randn(3, 5, 16)
    with torch.no_grad():
        ref = moe(z)
        with autocast("cpu", "bf16"):
            out = moe(z)
    assert out.shape == ref.shape and torch.allclose(out.float(), ref, atol=0.1)
