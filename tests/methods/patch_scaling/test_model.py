"""Spec §7 checks 1–4 and 6 for the patch-scaling models."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from methods.patch_scaling.model import (
    AdventurerBlock,
    Mamba2Mixer,
    PatchEmbed,
    TinyAdventurer,
    TinyViT,
    flip_tokens,
    flips,
    interpolate_pos_embed,
    patchify,
    unpatchify,
)
from paperworks_kernels.selective_scan import selective_scan_chunked, selective_scan_reference

ROOT = Path(__file__).resolve().parents[3]


# --- §7.1 patch embedding ------------------------------------------------------------
@pytest.mark.parametrize(("size", "p"), [(8, 8), (8, 4), (8, 2), (8, 1), (16, 16), (16, 1)])
def test_token_count(size, p):
    emb = PatchEmbed(size, p, 1, 12)
    assert emb(torch.randn(2, 1, size, size)).shape == (2, (size // p) ** 2, 12)
    for m in (
        TinyViT(image_size=size, patch=p, dim=16, depth=1),
        TinyAdventurer(image_size=size, patch=p, dim=16, depth=1),
    ):
        assert m.pos_embed.shape == (1, (size // p) ** 2 + 1, 16)
        assert m(torch.randn(2, 1, size, size)).shape == (2, 10)


def test_p1_is_per_pixel_linear_map():
    torch.manual_seed(0)
    emb = PatchEmbed(8, 1, 3, 5)
    x = torch.randn(2, 3, 8, 8)
    w, b = emb.proj.weight[:, :, 0, 0], emb.proj.bias
    expected = x.permute(0, 2, 3, 1).reshape(2, 64, 3) @ w.T + b
    torch.testing.assert_close(emb(x), expected, atol=1e-6, rtol=0)


@pytest.mark.parametrize("p", [1, 2, 4, 8])
def test_unpatchify_of_identity_embedding(p):
    c = 2
    emb = PatchEmbed(8, p, c, c * p * p)
    with torch.no_grad():
        emb.proj.weight.copy_(torch.eye(c * p * p).reshape(c * p * p, c, p, p))
        emb.proj.bias.zero_()
    x = torch.randn(3, c, 8, 8)
    tokens = emb(x)
    torch.testing.assert_close(tokens, patchify(x, p), atol=1e-6, rtol=0)
    assert torch.equal(unpatchify(patchify(x, p), p, c), x)
    torch.testing.assert_close(unpatchify(tokens, p, c), x, atol=1e-6, rtol=0)


# --- §7.2 scan ------------------------------------------------------------------------
def _mamba2_operands(L, b=2, heads=2, headdim=16, n=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    d = heads * headdim
    return dict(
        u=torch.randn(b, d, L, generator=g),
        delta=torch.randn(b, heads, L, generator=g),
        A=-torch.rand(heads, generator=g) * 4 - 0.5,
        B=torch.randn(b, n, L, generator=g),
        C=torch.randn(b, n, L, generator=g),
        D=torch.randn(heads, generator=g),
        delta_bias=torch.randn(heads, generator=g) * 0.5,
        delta_softplus=True,
    )


@pytest.mark.parametrize("L", [1, 5, 64, 257])
@pytest.mark.parametrize("chunk", [7, 32])
def test_chunked_scan_matches_sequential(L, chunk):
    ops = _mamba2_operands(L)
    ref = selective_scan_reference(**ops)
    out = selective_scan_chunked(**ops, chunk=chunk)
    assert (out - ref).abs().max().item() < 1e-4


TRITON_SCRIPT = """
import json, torch
from paperworks_kernels.selective_scan.kernel import selective_scan_triton_forward
from paperworks_kernels.selective_scan import selective_scan_reference
errs = {}
for L in (1, 5, 64, 257):
    g = torch.Generator().manual_seed(L)
    ops = dict(u=torch.randn(1, 32, L, generator=g), delta=torch.randn(1, 2, L, generator=g),
               A=-torch.rand(2, generator=g) * 4 - 0.5, B=torch.randn(1, 16, L, generator=g),
               C=torch.randn(1, 16, L, generator=g), D=torch.randn(2, generator=g),
               delta_bias=torch.randn(2, generator=g) * 0.5, delta_softplus=True)
    y, _ = selective_scan_triton_forward(**ops)
    errs[L] = (y - selective_scan_reference(**ops)).abs().max().item()
print(json.dumps(errs))
"""


def test_triton_scan_matches_sequential_in_interpreter():
    pytest.importorskip("triton")
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", TRITON_SCRIPT], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    errs = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(errs) == {"1", "5", "64", "257"}
    assert max(errs.values()) < 1e-4, errs


def test_mixer_is_causal_and_implementations_agree():
    torch.manual_seed(0)
    mixer = Mamba2Mixer(32, d_state=16, headdim=16, impl="chunked", chunk=5).eval()
    x = torch.randn(2, 13, 32)
    y = mixer(x)
    x2 = x.clone()
    x2[:, 7] += 3.0
    y2 = mixer(x2)
    assert torch.equal(y[:, :7], y2[:, :7])
    assert (y[:, 7:] - y2[:, 7:]).abs().max() > 1e-3
    mixer.impl = "reference"
    torch.testing.assert_close(mixer(x), y, atol=1e-4, rtol=0)


# --- §7.3 flips -------------------------------------------------------------------------
def test_flip_is_involution_and_keeps_class_last():
    x = torch.randn(2, 6, 4)
    f = flip_tokens(x)
    assert torch.equal(f[:, -1], x[:, -1])
    assert torch.equal(f[:, 0], x[:, -2])
    assert torch.equal(flip_tokens(f), x)


def test_released_rule_flips_layers_2_and_3_only():
    assert [i for i in range(12) if flips(i, "released")] == [2, 3]
    assert [i for i in range(12) if flips(i, "alternate")] == [2, 3, 6, 7, 10, 11]
    m = TinyAdventurer(patch=4, dim=16, depth=4, headdim=8, d_state=4)
    assert [blk.flip for blk in m.blocks] == [False, False, True, True]


# --- §7.4 heading average ----------------------------------------------------------------
def test_heading_average_token():
    torch.manual_seed(0)
    blk = AdventurerBlock(16, 2, "released", 0.0, d_state=4, headdim=8).eval()
    seen = {}
    blk.mixer.register_forward_hook(lambda mod, inp, out: seen.update(x=inp[0]))
    h = torch.randn(3, 5, 16)  # N = 4 patch tokens + class
    out = blk(h)
    assert out.shape == (3, 5, 16)
    assert blk.mixer_len == 6 and seen["x"].shape[1] == 6  # N + 2
    torch.testing.assert_close(seen["x"][:, 0], seen["x"][:, 1:].mean(1))
    torch.testing.assert_close(seen["x"][:, 1:], flip_tokens(blk.norm1(h)))  # layer 2 flips


def test_adventurer_classifies_from_last_token():
    torch.manual_seed(0)
    m = TinyAdventurer(patch=2, dim=16, depth=2, headdim=8, d_state=4).eval()
    feats = {}
    m.norm.register_forward_hook(lambda mod, inp, out: feats.update(z=out))
    logits = m(torch.randn(2, 1, 8, 8))
    torch.testing.assert_close(logits, m.head(feats["z"][:, -1]))


# --- §7.6 position-embedding interpolation ---------------------------------------------------
def test_pos_embed_interpolation_identity_and_class_slot():
    pos = torch.randn(1, 17, 8)
    same = interpolate_pos_embed(pos, 4)
    torch.testing.assert_close(same, pos, atol=1e-6, rtol=0)
    assert torch.equal(same[:, -1], pos[:, -1])
    big = interpolate_pos_embed(pos, 8)
    assert big.shape == (1, 65, 8) and torch.equal(big[:, -1], pos[:, -1])
    vit = interpolate_pos_embed(pos, 8, cls_last=False)
    assert torch.equal(vit[:, 0], pos[:, 0])
    const = torch.ones(1, 17, 2)
    torch.testing.assert_close(interpolate_pos_embed(const, 8)[:, :64], torch.ones(1, 64, 2))
