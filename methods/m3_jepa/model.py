"""The M3-JEPA predictor (spec §3.2) and the baselines' projectors.

Notation (spec §3.2, direction s→τ, s the source modality):

* x ∈ R^{T×d_s} source tokens; ``dir_emb[s→τ]`` ∈ R^{d_s} added to every token;
* u = GELU(W_s x + b) ∈ R^{T×h} (source-specific input projection);
* u_pred = u + e_pred, u_cl = u + e_cl (branch embeddings, shared by both directions);
* MoE(z) = Σ_{j∈topk(p)} p_j Expert_j(z), p = softmax(W_g z + b) — the kept top-k values are NOT
  renormalised; experts and gate are shared by every direction and branch ("multi-gate": the gate
  sees direction- and branch-conditioned inputs, so the routing differs per (direction, objective));
* o = GELU(LN_branch(MoE(u_branch))) + u_branch;
* ŷ_pred = mean_T(Head^pred_{s→τ}(o_pred)) ∈ R^{d_τ}, ŷ_cl = mean_T(Head^cl_{s→τ}(o_cl)) ∈ R^h;
* contrastive target y_cl = mean_T(W^cl_τ y_tokens) ∈ R^h (``cl_image_emb`` / ``cl_text_emb``).

All new Linear layers: Kaiming-uniform (ReLU gain), zero bias; the embeddings Kaiming-uniform.
``block="mlp"`` swaps the MoE for an MLP with two hidden layers of width h (the §6 ablation);
everything else stays.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

DIRECTIONS = ("t2i", "i2t")
SOURCE = {"t2i": "text", "i2t": "image"}
TARGET = {"t2i": "image", "i2t": "text"}


@dataclass(frozen=True)
class PredictorConfig:
    d_img: int = 64
    d_txt: int = 576
    hidden: int = 128
    experts: int = 6
    top_k: int = 2
    dropout: float = 0.1
    block: str = "moe"  # "moe" or "mlp"

    def dim(self, modality: str) -> int:
        return self.d_img if modality == "image" else self.d_txt


def _init_linear(layer: nn.Linear) -> nn.Linear:
    nn.init.kaiming_uniform_(layer.weight, nonlinearity="relu")
    nn.init.zeros_(layer.bias)
    return layer


def _embedding(d: int) -> nn.Parameter:
    w = torch.empty(1, d)
    nn.init.kaiming_uniform_(w, nonlinearity="relu")
    return nn.Parameter(w.view(d))


class Expert(nn.Sequential):
    """Linear(h, h) → GELU → Dropout → Linear(h, h) → Dropout."""

    def __init__(self, h: int, dropout: float) -> None:
        super().__init__(
            _init_linear(nn.Linear(h, h)),
            nn.GELU(),
            nn.Dropout(dropout),
            _init_linear(nn.Linear(h, h)),
            nn.Dropout(dropout),
        )


class MoE(nn.Module):
    """Per-token top-k mixture: weights = the k largest softmax probabilities, not renormalised."""

    def __init__(self, h: int, experts: int, top_k: int, dropout: float) -> None:
        super().__init__()
        if not 1 <= top_k <= experts:
            raise ValueError(f"need 1 <= top_k <= experts, got top_k={top_k}, experts={experts}")
        self.top_k = top_k
        self.gate = _init_linear(nn.Linear(h, experts))
        self.experts = nn.ModuleList(Expert(h, dropout) for _ in range(experts))

    def routing(self, z: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(weights, probs), both (..., E): ``weights`` keeps the top-k of ``probs`` and zeros the rest."""
        probs = F.softmax(self.gate(z), dim=-1)
        vals, idx = probs.topk(self.top_k, dim=-1)
        return torch.zeros_like(probs).scatter(-1, idx, vals), probs

    def forward(self, z: torch.Tensor, *, return_weights: bool = False):
        w, _ = self.routing(z)
        if self.top_k == len(self.experts):  # dense: every expert sees every token
            outs = torch.stack([e(z) for e in self.experts], dim=-2)  # (..., E, h)
            y = (w.unsqueeze(-1) * outs).sum(-2)
        else:  # sparse dispatch: each expert runs only on the tokens routed to it
            flat_z, flat_w = z.reshape(-1, z.shape[-1]), w.reshape(-1, w.shape[-1])
            y = torch.zeros_like(flat_z)
            for j, expert in enumerate(self.experts):
                rows = torch.nonzero(flat_w[:, j] > 0).flatten()
                if len(rows):
                    part = flat_w[rows, j : j + 1] * expert(flat_z[rows])
                    y = y.index_add(0, rows, part.to(y.dtype))  # under bf16 autocast the experts run in bf16
            y = y.view_as(z)
        return (y, w) if return_weights else y


class MLPBlock(nn.Sequential):
    """The no-MoE ablation: Linear → GELU → Dropout → Linear → GELU → Dropout → Linear (two hidden layers h)."""

    def __init__(self, h: int, dropout: float) -> None:
        super().__init__(
            _init_linear(nn.Linear(h, h)),
            nn.GELU(),
            nn.Dropout(dropout),
            _init_linear(nn.Linear(h, h)),
            nn.GELU(),
            nn.Dropout(dropout),
            _init_linear(nn.Linear(h, h)),
        )


def masked_mean(x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Mean over the token axis (dim 1), counting only ``mask`` tokens."""
    if mask is None:
        return x.mean(1)
    m = mask.to(x.dtype).unsqueeze(-1)
    return (x * m).sum(1) / m.sum(1).clamp_min(1.0)


@dataclass
class PredictorOutput:
    pred: torch.Tensor  # (B, d_τ) ŷ_pred
    cl: torch.Tensor  # (B, h) ŷ_cl
    weights: dict[str, torch.Tensor] | None = None  # branch → (B, T, E) routing weights (MoE only)


class M3Predictor(nn.Module):
    """Both directions' predictor: shared experts + gate, direction-specific embeddings, projections and heads."""

    def __init__(self, cfg: PredictorConfig) -> None:
        super().__init__()
        self.cfg = cfg
        h = cfg.hidden
        self.dir_emb = nn.ParameterDict({d: _embedding(cfg.dim(SOURCE[d])) for d in DIRECTIONS})
        self.in_proj = nn.ModuleDict({m: _init_linear(nn.Linear(cfg.dim(m), h)) for m in ("image", "text")})
        self.branch_emb = nn.ParameterDict({"pred": _embedding(h), "cl": _embedding(h)})
        if cfg.block == "moe":
            self.block: nn.Module = MoE(h, cfg.experts, cfg.top_k, cfg.dropout)
        elif cfg.block == "mlp":
            self.block = MLPBlock(h, cfg.dropout)
        else:
            raise ValueError(f"block must be 'moe' or 'mlp', got {cfg.block!r}")
        self.norm = nn.ModuleDict({"pred": nn.LayerNorm(h), "cl": nn.LayerNorm(h)})
        self.pred_head = nn.ModuleDict({d: _init_linear(nn.Linear(h, cfg.dim(TARGET[d]))) for d in DIRECTIONS})
        self.cl_head = nn.ModuleDict({d: _init_linear(nn.Linear(h, h)) for d in DIRECTIONS})
        # cl_image_emb / cl_text_emb: the contrastive target projections
        self.cl_target = nn.ModuleDict({m: _init_linear(nn.Linear(cfg.dim(m), h)) for m in ("image", "text")})

    def _branch(self, u: torch.Tensor, branch: str) -> tuple[torch.Tensor, torch.Tensor | None]:
        z = u + self.branch_emb[branch]
        if isinstance(self.block, MoE):
            y, w = self.block(z, return_weights=True)
        else:
            y, w = self.block(z), None
        return F.gelu(self.norm[branch](y)) + z, w

    def forward(
        self, direction: str, src: torch.Tensor, mask: torch.Tensor | None = None, *, return_weights: bool = False
    ) -> PredictorOutput:
        """``src`` (B, T, d_s) source tokens (``mask`` (B, T) for padded text) → pooled ŷ_pred, ŷ_cl."""
        u = F.gelu(self.in_proj[SOURCE[direction]](src + self.dir_emb[direction]))
        o_pred, w_pred = self._branch(u, "pred")
        o_cl, w_cl = self._branch(u, "cl")
        # Head then mean-pool (§3.2 steps 6-7), computed as pool then head: a Linear commutes with a
        # (masked) mean exactly, so this is the same function at a fraction of the cost.
        pred = self.pred_head[direction](masked_mean(o_pred, mask))
        cl = self.cl_head[direction](masked_mean(o_cl, mask))
        weights = {"pred": w_pred, "cl": w_cl} if return_weights and w_pred is not None else None
        return PredictorOutput(pred=pred, cl=cl, weights=weights)

    def target_cl(self, modality: str, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """y_cl = mean_T(Linear_{d_τ→h}(target tokens))."""
        return self.cl_target[modality](masked_mean(tokens, mask))  # = mean_T(Linear(tokens)), see forward

    def direction_parameters(self, direction: str) -> dict[str, nn.Parameter]:
        """Parameters that only ``direction`` uses (its source projection, embedding, heads, target projection)."""
        src, tgt = SOURCE[direction], TARGET[direction]
        named = dict(self.named_parameters())
        keys = [f"dir_emb.{direction}"]
        keys += [
            k for k in named if k.startswith((f"in_proj.{src}.", f"pred_head.{direction}.", f"cl_head.{direction}."))
        ]
        keys += [k for k in named if k.startswith(f"cl_target.{tgt}.")]
        return {k: named[k] for k in keys}

    def shared_parameters(self) -> dict[str, nn.Parameter]:
        """Experts, gate, branch embeddings and LayerNorms (used by every direction)."""
        own = set(self.direction_parameters("t2i")) | set(self.direction_parameters("i2t"))
        return {k: p for k, p in self.named_parameters() if k not in own}


class LinearCLIP(nn.Module):
    """The CLIP-style baseline: mean-pooled frozen features, one linear projection per modality into R^h."""

    def __init__(self, d_img: int, d_txt: int, hidden: int) -> None:
        super().__init__()
        self.proj = nn.ModuleDict(
            {"image": _init_linear(nn.Linear(d_img, hidden)), "text": _init_linear(nn.Linear(d_txt, hidden))}
        )

    def embed(self, modality: str, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        return self.proj[modality](masked_mean(tokens, mask))
