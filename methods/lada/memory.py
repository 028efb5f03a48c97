"""Label-specific memory units (spec §3.2) and distribution-preserved prototypes (spec §3.3).

Notation: i = f_I(x)/‖f_I(x)‖ (d-dim); task k has M^k classes; W^k_j ∈ R^{λ1×d} are class j's
memory vectors. φ^k(i) = [W^k_1 i, …, W^k_{M^k} i] and φ(i) = [φ^1(i), …, φ^k(i)] (λ1·Σ M dims).
The fixed classifier h sums φ_act(x) = exp(−β(1 − x)) over a label's λ1 units:
LADA_c(i) = Σ_r exp(−β(1 − (W_c)_r · i)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def kmeans_memory(features: torch.Tensor, lambda1: int, seed: int = 0) -> torch.Tensor:
    """(λ1, d) unit-norm k-means centres of one class's normalised features.

    With fewer than λ1 samples every sample is a centre and the rows are padded by repetition.
    """
    x = F.normalize(features.detach().double(), dim=-1).numpy()
    n = len(x)
    if n == 0:
        raise ValueError("a class needs at least one training feature")
    if n <= lambda1:
        centres = x[np.arange(lambda1) % n]
    else:
        from sklearn.cluster import KMeans

        centres = KMeans(n_clusters=lambda1, n_init=4, random_state=seed).fit(x).cluster_centers_
    return F.normalize(torch.as_tensor(centres, dtype=torch.float32), dim=-1)


def label_scores(feats: torch.Tensor, memory: torch.Tensor, beta: float) -> torch.Tensor:
    """h∘φ: (n, d) features × (C, λ1, d) memory → (n, C) scores Σ_r exp(−β(1 − w_r·i))."""
    sims = torch.einsum("nd,crd->ncr", feats, memory)
    return torch.exp(-beta * (1.0 - sims)).sum(-1)


class LabelMemory(nn.Module):
    """The growing bank W^1..W^k; only the newest task's block is trainable."""

    def __init__(self, beta: float):
        super().__init__()
        self.beta = float(beta)
        self.blocks = nn.ParameterList()

    def add_task(self, init: torch.Tensor) -> nn.Parameter:
        """Append W^k (M^k, λ1, d) and freeze every earlier block."""
        for p in self.blocks:
            p.requires_grad_(False)
        self.blocks.append(nn.Parameter(init.clone()))
        return self.blocks[-1]

    def freeze(self) -> None:
        for p in self.blocks:
            p.requires_grad_(False)

    @property
    def n_labels(self) -> int:
        return sum(int(b.shape[0]) for b in self.blocks)

    def phi(self, feats: torch.Tensor) -> torch.Tensor:
        """φ(i): (n, λ1·Σ_k M^k) dot products with every memory vector, task by task."""
        return torch.cat([torch.einsum("nd,crd->ncr", feats, b).flatten(1) for b in self.blocks], dim=1)

    def forward(self, feats: torch.Tensor) -> torch.Tensor:
        """(n, |C_L|) LADA scores of every label learned so far, in learning order."""
        return torch.cat([label_scores(feats, b, self.beta) for b in self.blocks], dim=1)


@dataclass
class ClassPrototypes:
    """λ2 stored modes of one class: weights π (λ2,), means p (λ2, d) and noise scales sqrt(Tr Σ_l / d) (λ2,)."""

    weights: torch.Tensor
    means: torch.Tensor
    noise: torch.Tensor


def fit_prototypes(
    features: torch.Tensor, lambda2: int, *, mode: str = "gmm", covariance: str = "diag", seed: int = 0
) -> ClassPrototypes:
    """GMM(λ2) of one class's frozen features (``gmm``) or its k-means centres with π uniform and no noise (``centres``)."""
    x = features.detach().double().numpy()
    k = min(lambda2, len(x))
    if mode == "centres":
        means = kmeans_memory(features, k, seed)
        return ClassPrototypes(torch.full((k,), 1.0 / k), means, torch.zeros(k))
    if mode != "gmm":
        raise ValueError(f"unknown prototype mode {mode!r}")
    from sklearn.mixture import GaussianMixture

    gmm = GaussianMixture(n_components=k, covariance_type=covariance, reg_covar=1e-6, random_state=seed).fit(x)
    d = x.shape[1]
    cov = gmm.covariances_
    traces = cov.sum(axis=1) if covariance == "diag" else np.trace(cov, axis1=1, axis2=2)
    return ClassPrototypes(
        torch.as_tensor(gmm.weights_, dtype=torch.float32),
        torch.as_tensor(gmm.means_, dtype=torch.float32),
        torch.as_tensor(np.sqrt(traces / d), dtype=torch.float32),
    )


def augment(
    protos: ClassPrototypes, generator: torch.Generator | None = None, *, normalize: bool = True
) -> torch.Tensor:
    """p̃_l = p_l + e·sqrt(Tr(Σ_l)/d), e ~ N(0, I_d) (spec §3.3), optionally re-normalised to unit norm."""
    e = torch.randn(protos.means.shape, generator=generator)
    out = protos.means + e * protos.noise[:, None]
    return F.normalize(out, dim=-1) if normalize else out
