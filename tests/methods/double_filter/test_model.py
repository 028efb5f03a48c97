"""The two-stream VLP: kept patches keep their positions, genome switches, FLOPs accounting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from methods.double_filter import ipf
from methods.double_filter.config import ModelConfig
from methods.double_filter.flops import ffn, mhsa, model_flops
from methods.double_filter.model import DoubleFilterVLP

CFG = ModelConfig(width=32, heads=2, vision_layers=2, text_layers=1, fusion_layers=1)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    m = DoubleFilterVLP(CFG, vocab_size=30).eval()
    with torch.no_grad():  # random, non-trivial weights everywhere (LayerNorm too)
        for p in m.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return m


def _batch(n=4):
    g = torch.Generator().manual_seed(1)
    images = torch.rand(n, 3, 32, 32, generator=g)
    tokens = torch.randint(4, 30, (n, 7), generator=g)
    tokens[:, 0] = 2
    tokens[:, -1] = 3
    tokens[0, 5:] = 0  # one padded row
    return images, tokens


def _fused(m, images, tokens, keep=None):
    txt, pad = m.encode_text(tokens)
    return m.fuse(txt, pad, m.encode_image(images, keep))


def test_patch_embedding_matches_a_stride_p_convolution(model):
    images, _ = _batch()
    conv = model.patch_embed((images - 0.5) / 0.25).flatten(2).transpose(1, 2) + model.pos_img[:, 1:]
    assert torch.allclose(model.patch_tokens(images), conv, atol=1e-5)


def test_kept_patches_keep_their_position_embeddings(model):
    images, _ = _batch()
    keep = torch.tensor([[0, 3, 9, 15], [1, 2, 4, 8], [5, 6, 7, 14], [10, 11, 12, 13]])
    full = model.patch_tokens(images)
    kept = model.patch_tokens(images, keep)
    assert torch.equal(kept, torch.gather(full, 1, keep[..., None].expand(-1, -1, full.shape[-1])))
    # positions are attached by patch index, not by slot: re-numbering the kept patches 1..k would differ
    by_slot = kept - torch.gather(model.pos_img[:, 1:].expand(4, -1, -1), 1, keep[..., None].expand(-1, -1, 32))
    by_slot = by_slot + model.pos_img[:, 1:5]
    assert not torch.allclose(by_slot, kept)


def test_rho_one_equals_unfiltered(model):
    images, tokens = _batch()
    boxes = [np.array([[4, 4, 20, 20]], np.float32)] * len(images)
    keep, _ = ipf.ipf_keep(model, images, boxes, 1.0)
    assert keep.shape == (4, 16)
    assert torch.equal(_fused(model, images, tokens), _fused(model, images, tokens, keep))
    half, fgs = ipf.ipf_keep(model, images, boxes, 0.5)
    assert half.shape == (4, 8) and fgs.sum(1).tolist() == [5] * 4  # a plus of 5 patches ≥ 50 % covered
    assert not torch.allclose(_fused(model, images, tokens), _fused(model, images, tokens, half))


def test_cls_attention_is_a_distribution(model):
    images, _ = _batch()
    a = model.cls_attention(images)
    assert a.shape == (4, 16) and (a >= 0).all() and torch.allclose(a.sum(1), torch.ones(4))


def test_all_ones_genome_is_exact_and_skipping_removes_the_branch(model):
    images, tokens = _batch()
    ref = _fused(model, images, tokens)
    subs = model.sublayers()
    assert len(subs) == 2 * 2 + 2 * 1 + 3 * 1
    model.set_genome([1] * len(subs))
    assert torch.equal(ref, _fused(model, images, tokens))
    i = [s.name for s in subs].index("vision.1.ffn")
    g = [1] * len(subs)
    g[i] = 0
    model.set_genome(g)
    skipped = _fused(model, images, tokens)
    assert model.genome() == g
    model.set_genome([1] * len(subs))
    fc2 = model.vision[1].ffn.fc2
    saved = fc2.weight.data.clone(), fc2.bias.data.clone()
    fc2.weight.data.zero_()
    fc2.bias.data.zero_()
    removed = _fused(model, images, tokens)
    fc2.weight.data, fc2.bias.data = saved
    assert torch.allclose(skipped, removed, atol=1e-6) and not torch.allclose(skipped, ref)
    with pytest.raises(ValueError):
        model.set_genome([1, 0])


def test_flops_formulas_and_monotonicity(model):
    subs = model.sublayers()
    ones = [1] * len(subs)
    f = model_flops(CFG, subs, ones, kept_patches=16, n_txt=8)
    w = CFG.width
    # vision: 2 blocks on 17 tokens; embed: 16 patches × 192 × w MACs
    assert f["vision"] == pytest.approx(2 * (mhsa(17, w) + ffn(17, w, 4)))
    assert f["embed"] == pytest.approx(2 * 16 * 192 * w)
    assert mhsa(10, 4) == 2 * (4 * 10 * 16 + 2 * 100 * 4)
    g, prev = list(ones), f["total"]
    for j in np.random.default_rng(0).permutation(len(subs)):
        g[j] = 0
        cur = model_flops(CFG, subs, g, kept_patches=16, n_txt=8)["total"]
        assert cur < prev
        prev = cur
    fewer = model_flops(CFG, subs, ones, kept_patches=8, n_txt=8)
    assert fewer["vision"] < f["vision"] and fewer["fusion"] < f["fusion"]
    with_ipf = model_flops(CFG, subs, ones, kept_patches=8, n_txt=8, score_layers=1, detector_flops=1000.0)
    assert with_ipf["ipf"] > 1000 and with_ipf["total"] == pytest.approx(fewer["total"] + with_ipf["ipf"])
    pair = model_flops(CFG, subs, ones, kept_patches=16, n_txt=8, images=2)
    assert pair["vision"] == 2 * f["vision"] and pair["text"] == f["text"]


def test_itc_itm_loss_is_bit_identical_to_the_old_code():
    """Three ITC + ITM losses (one CPU generator for the hard negatives, the last with kept patches) and the
    gradient of the last: literal values are the OUTPUT OF THE OLD CODE (pretrain.py before the loss built
    its tensors on the inputs' device, commit 401c525), so CPU pretraining and cached backbones are unchanged."""
    import hashlib

    from core.train import pin_threads
    from methods.double_filter.pretrain import itc_itm_loss

    with pin_threads(1):
        torch.manual_seed(0)
        m = DoubleFilterVLP(CFG, vocab_size=30)
        g = torch.Generator().manual_seed(1)
        images = torch.rand(6, 3, 32, 32, generator=g)
        tokens = torch.randint(4, 30, (6, 7), generator=g)
        tokens[:, 0] = 2
        tokens[2, 5:] = 0
        labels = torch.tensor([0, 1, 0, 2, 3, 1])
        same = labels[:, None] == labels[None, :]
        gen = torch.Generator().manual_seed(5)
        values = []
        for i in range(3):
            loss = itc_itm_loss(m, images, tokens, same, gen, None if i < 2 else torch.arange(8).repeat(6, 1))
            values.append(loss.item())
        loss.backward()
    h = hashlib.sha256()
    for name, p in m.named_parameters():
        h.update(name.encode())
        h.update(p.grad.numpy().tobytes())
    assert values == [2.4692635536193848, 2.4764962196350098, 2.4802513122558594]
    assert h.hexdigest() == "4bf0519b457efa2bcc18fe513d8a2a116682314755b205bd13167dd637c72a29"


def test_hard_negatives_off_the_cpu_follow_the_weights():
    """Off the CPU the CPU generator cannot drive multinomial: CPU uniforms through the rows' CDF, on the device."""
    from methods.double_filter.pretrain import hard_negatives
    from tests.devices import stand_in_device

    dev = stand_in_device()
    peaked = torch.full((5, 5), 1e-9)
    peaked[torch.arange(5), torch.tensor([3, 0, 4, 1, 2])] = 1.0
    gen = torch.Generator().manual_seed(0)
    idx = hard_negatives(peaked.to(dev), gen)
    assert idx.device.type == "lazy" and idx.cpu().tolist() == [3, 0, 4, 1, 2]
    w = torch.tensor([[1.0, 2.0, 1e-9, 5.0]]).repeat(4000, 1)
    counts = torch.bincount(hard_negatives(w.to(dev), gen).cpu(), minlength=4).double() / 4000
    assert counts.tolist() == pytest.approx([1 / 8, 2 / 8, 0.0, 5 / 8], abs=0.03)
    cpu = torch.bincount(hard_negatives(w, torch.Generator().manual_seed(0)), minlength=4).double() / 4000
    assert cpu.tolist() == pytest.approx(counts.tolist(), abs=0.04)  # the same distribution as multinomial
