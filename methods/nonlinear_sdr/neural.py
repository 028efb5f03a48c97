"""The neural principal machine (spec §3.3, neural variant).

F is a class of MLPs f_θ: R^p → R. One shared trunk (two tanh layers) carries one scalar head
per (loss, dichotomy); the loss is

    mean_h [ Var_n(f_h(X)) + λ · mean_i s_i L(Ỹ_i^{(h)} (f_h(X_i) − mean_n f_h − t_h)) ]

with a free offset t_h per head, trained full-batch with AdamW (weight decay 1e-4) through
:func:`core.train.fit`. Var_n(f) is the function-space analogue of ψᵀΣ̂ψ; Y enters only
through the bounded ±1 labels. Aggregation as for every principal machine: F_ih = f̂_h(X_i) −
mean f̂_h (each loss's block scaled to unit trace), Ĝ = FᵀF/n, eigenvectors a_j, and the
sufficient predictors ĝ_j(x) = Σ_h a_jh (f̂_h(x) − mean f̂_h).

Training runs on ``NeuralConfig.device`` (the MLP is initialised on the CPU, so every device starts
from the same weights; ``amp="bf16"`` trains under bfloat16 autocast). The trained MLP comes back to
the CPU for float64 inference (row results independent of the batch; a 64-unit MLP needs no GPU), so
a fitted estimator holds no device memory and pickles anywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from methods.nonlinear_sdr.machines import Loss, eigh_desc
from methods.nonlinear_sdr.slicing import Dichotomy


@dataclass(frozen=True)
class NeuralConfig:
    """Architecture and training of the neural principal machine."""

    hidden: int = 64
    steps: int = 400
    lr: float = 1e-2
    weight_decay: float = 1e-4
    seed: int = 0
    threads: int = 1
    device: str = "cpu"
    amp: str = "off"


def _torch_loss(loss: Loss, m):
    import torch.nn.functional as F

    if loss == "hinge":
        return F.relu(1.0 - m)
    if loss == "logistic":
        return F.softplus(-m)
    if loss == "squared_hinge":
        return F.relu(1.0 - m) ** 2
    if loss == "least_squares":
        return (1.0 - m) ** 2
    raise ValueError(f"unknown loss {loss!r}")


class NeuralMachine:
    """Fits the shared-trunk MLP and exposes the aggregated sufficient predictors."""

    def __init__(self, config: NeuralConfig | None = None) -> None:
        self.config = config or NeuralConfig()

    def fit(
        self, x: np.ndarray, problems: Sequence[Dichotomy], *, losses: Sequence[Loss] = ("hinge",), lam: float = 1.0
    ) -> NeuralMachine:
        import torch
        from torch import nn

        from core.device import resolve_device
        from core.train import fit, pin_threads, seed_everything

        cfg = self.config
        dev = resolve_device(cfg.device)
        losses = list(dict.fromkeys(losses))
        self.mu_, self.sd_ = x.mean(axis=0), x.std(axis=0) + 1e-12
        heads = [(loss, d) for loss in losses for d in problems]
        labels = torch.tensor(np.stack([d.labels for _, d in heads], axis=1), dtype=torch.float32)  # n×H
        weights = torch.tensor(
            np.stack([np.where(d.labels > 0, d.weight_pos, d.weight_neg) * d.mask for _, d in heads], axis=1),
            dtype=torch.float32,
        )
        used = labels.ne(0).float().sum(0)
        labels, weights, used = labels.to(dev), weights.to(dev), used.to(dev)
        with pin_threads(cfg.threads):
            seed_everything(cfg.seed)
            p = x.shape[1]
            self.model_ = nn.Sequential(
                nn.Linear(p, cfg.hidden),
                nn.Tanh(),
                nn.Linear(cfg.hidden, cfg.hidden),
                nn.Tanh(),
                nn.Linear(cfg.hidden, len(heads)),
            )
            self.offset_ = nn.Parameter(torch.zeros(len(heads)))
            module = nn.ModuleDict({"net": self.model_})
            module.register_parameter("offset", self.offset_)
            xt = torch.tensor((x - self.mu_) / self.sd_, dtype=torch.float32).to(dev)
            head_losses = [loss for loss, _ in heads]

            def loss_fn(mod, _batch):
                f = mod["net"](xt)
                fc = f - f.mean(0, keepdim=True)
                var = fc.pow(2).mean(0)
                m = labels * (fc - mod.offset)
                per = torch.stack([_torch_loss(h, m[:, j]) for j, h in enumerate(head_losses)], dim=1)
                risk = (weights * per).sum(0) / used
                return (var + lam * risk).mean()

            self.losses_ = fit(
                module,
                lambda _s: None,
                loss_fn,
                steps=cfg.steps,
                lr=cfg.lr,
                warmup=0,
                weight_decay=cfg.weight_decay,
                device=dev,
                amp=cfg.amp,
            )
            module.cpu()  # back from the device (a move may replace the Parameter objects: re-read them)
            self.model_ = module["net"].double()  # inference in float64: row results independent of the batch
            self.offset_ = module.offset
            f = self._raw(x)
        self.f_mean_ = f.mean(axis=0)
        fc = f - self.f_mean_
        scale = np.ones(fc.shape[1])
        k = len(problems)
        for i in range(len(losses)):
            block = fc[:, i * k : (i + 1) * k]
            tr = float(np.sum(block**2) / len(x))
            scale[i * k : (i + 1) * k] = 1.0 / np.sqrt(tr) if tr > 0 else 1.0
        self.scale_ = scale
        g = (fc * scale).T @ (fc * scale) / len(x)
        self.eigenvalues_, self.eigenvectors_ = eigh_desc(g)
        return self

    def _raw(self, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            xt = torch.tensor((np.asarray(x, dtype=float) - self.mu_) / self.sd_, dtype=torch.float64)
            return self.model_(xt).numpy()

    def transform(self, x: np.ndarray) -> np.ndarray:
        """ĝ_1..ĝ_H at ``x`` (n×H), in eigenvalue order."""
        from core.train import pin_threads

        with pin_threads(self.config.threads):
            f = self._raw(x)
        return ((f - self.f_mean_) * self.scale_) @ self.eigenvectors_
