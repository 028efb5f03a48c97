"""The spec's mechanical checks (gmail.md §7.1–§7.4), run live on the backbone in use by the reproducer.

Each returns ``(passed, detail)``; the test suite checks the same properties independently.
"""

from __future__ import annotations

import math

import torch

from methods.gmail.lora import LoRALinear, expected_lora_count, lora_parameters
from methods.gmail.losses import align_loss
from methods.gmail.model import GmailEncoders


def check_align_loss(batch: int = 16, dim: int = 32) -> tuple[bool, str]:
    """§7.1: L_align = log|B| when all similarities are equal; → 0 when each anchor matches only its target."""
    same = torch.ones(batch, dim)
    equal = float(align_loss(same, same, 0.07))
    eye = torch.eye(batch, dim)
    matched = float(align_loss(eye, eye, 0.07))
    ok = abs(equal - math.log(batch)) < 1e-5 and matched < 1e-5
    return ok, f"equal sims: {equal:.6f} vs log {batch} = {math.log(batch):.6f}; one-to-one: {matched:.2e}"


def check_asymmetry(backbone, images: torch.Tensor, real_emb: torch.Tensor) -> tuple[bool, str]:
    """§7.2: after a step only f_g's LoRA / Proj-for-Gen have gradients and change; f_r is bit-identical."""
    enc = GmailEncoders(backbone)
    before = {k: v.clone() for k, v in backbone.state_dict().items()}
    opt = torch.optim.AdamW(enc.trainable_parameters(), lr=1e-2)
    loss = align_loss(enc.f_g(images), real_emb.detach())
    loss.backward()
    grads = {n for n, p in enc.named_parameters() if p.grad is not None}
    opt.step()
    same = all(torch.equal(before[k], v) for k, v in backbone.state_dict().items())
    allowed = {n for n, p in enc.named_parameters() if any(p is q for q in enc.trainable_parameters())}
    b_moved = any(
        float(m.lora_b.detach().abs().sum()) > 0 for m in enc.gen_vision.modules() if isinstance(m, LoRALinear)
    )
    ok = same and grads <= allowed and b_moved
    return (
        ok,
        f"f_r bit-identical: {same}; parameters with gradients: {len(grads)}, all LoRA/Proj-for-Gen: {grads <= allowed}",
    )


def check_lora_identity(backbone, images: torch.Tensor) -> tuple[bool, str]:
    """§7.3: zero-initialised B ⇒ f_g ≡ f_r at step 0; trainable LoRA count = Σ r·(d_in + d_out)."""
    enc = GmailEncoders(backbone, rank=4)
    with torch.no_grad():
        diff = float((enc.f_g(images) - enc.f_r(images)).abs().max())
    n_lora = sum(p.numel() for p in lora_parameters(enc.gen_vision))
    expected = expected_lora_count(enc.gen_vision)
    ok = diff < 1e-6 and n_lora == expected and len(enc.adapted) % 4 == 0
    return ok, (f"max |f_g − f_r| at init {diff:.1e}; {len(enc.adapted)} adapted matrices (q/k/v/out × layers), "
                f"{n_lora} LoRA parameters = Σ r·(d_in+d_out) = {expected}")  # fmt: skip


def check_router(backbone, images: torch.Tensor) -> tuple[bool, str]:
    """§7.4: with real_inference_encoder="original" a real image never passes through f_g (spy on its tower)."""
    enc = GmailEncoders(backbone)
    calls = []
    handle = enc.gen_vision.register_forward_hook(lambda *a: calls.append(1))
    try:
        with torch.no_grad():
            enc.encode(images, "real", "original")
            original_calls = len(calls)
            enc.encode(images, "real", "lora")
    finally:
        handle.remove()
    ok = original_calls == 0 and len(calls) == 1
    return (
        ok,
        f"f_g tower calls for real images: {original_calls} with 'original', {len(calls) - original_calls} with 'lora'",
    )
