"""Analytic FLOPs (2 × multiply-adds) of the two-stream VLP under a layer mask and a patch budget.

Counted: patch embedding of the kept patches, every switched-on sub-layer's linear maps and attention
products, the IPF importance scorer (first ``score_layers`` vision blocks on all N + 1 tokens) and the
detector (:attr:`methods.double_filter.ipf.Detector.flops_per_image`). Not counted: LayerNorms,
softmax, GELU, the heads (the same in every arm). Per image–text pair; NLVR pairs have two images.
"""

from __future__ import annotations

from collections.abc import Sequence

from methods.double_filter.config import ModelConfig


def mhsa(n: float, w: int) -> float:
    """Q, K, V, O projections + QKᵀ and AV."""
    return 2 * (4 * n * w * w + 2 * n * n * w)


def ffn(n: float, w: int, ratio: int) -> float:
    return 2 * (2 * n * w * w * ratio)


def cross(n_q: float, n_kv: float, w: int) -> float:
    """Q, O on the text tokens, K, V on the image tokens, QKᵀ and AV."""
    return 2 * (2 * n_q * w * w + 2 * n_kv * w * w + 2 * n_q * n_kv * w)


def sublayer_flops(cfg: ModelConfig, subs: Sequence, n_img: float, n_txt: float) -> list[float]:
    """FLOPs of each gene's sub-layer at ``n_img`` image tokens (with [CLS]) and ``n_txt`` text tokens."""
    w, r = cfg.width, cfg.mlp_ratio
    out = []
    for s in subs:
        n = n_img if s.group == "vision" else n_txt
        if s.kind == "mhsa":
            out.append(mhsa(n, w))
        elif s.kind == "ffn":
            out.append(ffn(n, w, r))
        else:
            out.append(cross(n_txt, n_img, w))
    return out


def model_flops(
    cfg: ModelConfig,
    subs: Sequence,
    genome: Sequence[int],
    *,
    kept_patches: float,
    n_txt: float,
    images: int = 1,
    score_layers: int = 0,
    detector_flops: float = 0.0,
) -> dict[str, float]:
    """Per-sample FLOPs split into ``embed``, ``vision``, ``text``, ``fusion``, ``ipf`` (scorer + detector), ``total``.

    ``images`` image streams per sample (NLVR: 2, each fused with the one text); ``score_layers`` > 0
    adds the IPF scorer on all N patches; ``detector_flops`` the detector's cost per image.
    """
    n_all = (cfg.image_size // cfg.patch_size) ** 2
    patch_dim = 3 * cfg.patch_size**2
    n_img = kept_patches + 1
    per = sublayer_flops(cfg, subs, n_img, n_txt)
    parts = {"embed": images * 2 * kept_patches * patch_dim * cfg.width, "vision": 0.0, "text": 0.0, "fusion": 0.0}
    for s, f, g in zip(subs, per, genome, strict=True):
        if g:
            parts[s.group] += f * (1 if s.group == "text" else images)
    ipf = 0.0
    if score_layers:
        n_full = n_all + 1
        ipf += 2 * n_all * patch_dim * cfg.width
        ipf += score_layers * (mhsa(n_full, cfg.width) + ffn(n_full, cfg.width, cfg.mlp_ratio))
        ipf -= ffn(n_full, cfg.width, cfg.mlp_ratio)  # the last scoring block stops at its attention map
        ipf += detector_flops
        ipf *= images
    parts["ipf"] = ipf
    parts["total"] = sum(parts.values())
    return parts
