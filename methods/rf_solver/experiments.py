"""The three studies behind ``paperworks reproduce rf_solver`` (spec §6–§7).

1. :func:`analytic_study`: error vs NFE on the Gaussian and the mixture flows, Euler vs
   RF-Solver-2 (and order 3) at equal NFE, observed orders, round trips.
2. :func:`reconstruction_study`: invert-then-sample MSE/PSNR/SSIM of a trained model for
   N ∈ {5, 10, 25}, RF-Solver-2 (N steps) vs Euler (2N steps, equal NFE) and Euler (N steps).
3. :func:`edit_tradeoff`: digits edited from label a to label b, target-label accuracy (logistic
   regression scorer) and pixel MSE to the source as the number of injected steps k grows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from core.stats import bootstrap_ci, wilson
from methods.rf_solver.analytic import default_gaussian, default_mixture
from methods.rf_solver.convergence import ErrorPoint, gaussian_errors, mixture_errors, observed_order, round_trip_error
from methods.rf_solver.edit import EditableModel, edit_sweep, reconstruct_image, rf_edit
from methods.rf_solver.metrics import mse, summary
from methods.rf_solver.scorer import digit_scorer

log = logging.getLogger(__name__)

ANALYTIC_NFES = (8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


@dataclass
class AnalyticResult:
    """Error curves per flow ("gauss", "gauss_shift", "mog") and order, slopes, round trips."""

    curves: dict[str, dict[int, list[ErrorPoint]]]
    slopes: dict[str, dict[int, float]]
    round_trips: list[dict[str, Any]]


def _slope_in(points: list[ErrorPoint], lo: int, hi: int) -> float:
    sel = [p for p in points if lo <= p.nfe <= hi and p.error > 0]
    return observed_order(sel)


def analytic_study(n_points: int = 2000, seed: int = 0, nfes: Sequence[int] = ANALYTIC_NFES) -> AnalyticResult:
    """Max-abs inversion error vs NFE for orders 1–3, with and without the FLUX shift (L = 256)."""
    g = torch.Generator().manual_seed(seed)
    gauss, mog = default_gaussian(), default_mixture()
    xg, xm = gauss.draw(n_points, g), mog.draw(n_points // 4, g)
    curves = {
        "gauss": gaussian_errors(gauss, xg, nfes, (1, 2, 3)),
        "gauss_shift": gaussian_errors(gauss, xg, nfes, (1, 2, 3), shift=True),
        "mog": mixture_errors(mog, xm, nfes, (1, 2, 3)),
    }
    # Orders fitted over NFE 16..256 on the Gaussians (spec §7.3) and over RF-Solver-2's
    # N ∈ [16, 128], i.e. NFE 32..256, on the mixture (spec §7.4).
    lo = {"gauss": 16, "gauss_shift": 16, "mog": 32}
    slopes = {name: {o: _slope_in(pts, lo[name], 256) for o, pts in c.items()} for name, c in curves.items()}
    trips = []
    for nfe in (16, 32, 64):
        trips.append(
            {
                "nfe_per_direction": nfe,
                "euler": round_trip_error(mog, xm, nfe, 1),
                "rf_solver2": round_trip_error(mog, xm, nfe, 2),
            }
        )
    return AnalyticResult(curves, slopes, trips)


@dataclass
class ReconRow:
    """One reconstruction setting on one dataset."""

    dataset: str
    solver: str
    steps: int
    nfe: int
    mse: float
    psnr: float
    ssim: float
    seconds: float


def _device(model: EditableModel) -> torch.device:
    """The model's device (``DiTVelocity.device``); the CPU for models that do not say."""
    return getattr(model, "device", None) or torch.device("cpu")


def reconstruction_study(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    dataset: str,
    step_counts: Sequence[int] = (5, 10, 25),
    shift: bool = True,
) -> list[ReconRow]:
    """RF-Solver-2 (N) vs Euler (2N, equal NFE) vs Euler (N, equal steps) for each N."""
    rows = []
    for n in step_counts:
        for name, order, steps in (
            ("RF-Solver-2", 2, n),
            ("Euler (equal NFE)", 1, 2 * n),
            ("Euler (equal steps)", 1, n),
        ):
            t0 = time.perf_counter()
            rec, _, nfe = reconstruct_image(model, images.to(_device(model)), labels, steps, order, shift)
            rec = rec.float().cpu()
            sec = time.perf_counter() - t0
            m = summary(rec, images)
            rows.append(ReconRow(dataset, name, steps, nfe, m["mse"], m["psnr"], m["ssim"], sec))
            log.info("%s %s N=%d: mse %.3g", dataset, name, steps, m["mse"])
    return rows


def injection_reconstruction_check(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    num_steps: int = 10,
    ks: Sequence[int] = (0, 1, 2, 5, 10),
) -> dict[int, float]:
    """Spec §7.6: same prompt, guidance 1, reconstruction MSE as the injected steps k grow (k = N included)."""
    out = {}
    for k in ks:
        res = rf_edit(model, images.to(_device(model)), labels, labels, num_steps=num_steps, inject_k=k, guidance=1.0)
        out[k] = float(mse(res.edited.float().cpu(), images).mean())
    return out


@dataclass
class TradeoffResult:
    """Per-k edit metrics over the evaluated images."""

    ks: list[int]
    target_acc: list[float]
    source_acc: list[float]
    mse_to_source: list[float]
    mse_sem: list[float]
    num_images: int
    num_steps: int
    guidance: float
    examples: dict[int, torch.Tensor] = field(default_factory=dict)
    sources: torch.Tensor | None = None
    targets: torch.Tensor | None = None

    def monotone_violations(self) -> int:
        return sum(b > a for a, b in zip(self.mse_to_source, self.mse_to_source[1:]))

    def spearman(self) -> float:
        from scipy.stats import spearmanr

        return float(spearmanr(self.ks, self.mse_to_source).statistic)


def edit_tradeoff(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    ks: Sequence[int],
    num_steps: int = 15,
    guidance: float = 2.0,
    seed: int = 0,
    batch: int = 25,
) -> TradeoffResult:
    """Edit every image to a random other digit for each k; score with the logistic-regression scorer."""
    g = torch.Generator().manual_seed(seed)
    targets = (labels + torch.randint(1, 10, labels.shape, generator=g)) % 10
    scorer = digit_scorer()
    edits: dict[int, list[torch.Tensor]] = {k: [] for k in ks}
    for i in range(0, len(labels), batch):
        sl = slice(i, i + batch)
        res = edit_sweep(
            model, images[sl].to(_device(model)), labels[sl], targets[sl], ks, num_steps=num_steps, guidance=guidance
        )
        for k in ks:
            edits[k].append(res[k].float().cpu())
    tacc, sacc, mses, sems = [], [], [], []
    for k in ks:
        x = torch.cat(edits[k])
        per = mse(x, images).numpy()
        tacc.append(scorer.accuracy(x, targets))
        sacc.append(scorer.accuracy(x, labels))
        mses.append(float(per.mean()))
        sems.append(float(per.std(ddof=1) / np.sqrt(len(per))))
    return TradeoffResult(
        list(ks),
        tacc,
        sacc,
        mses,
        sems,
        len(labels),
        num_steps,
        guidance,
        examples={k: torch.cat(edits[k])[:8] for k in ks},
        sources=images[:8],
        targets=targets,
    )


# --- RF-Edit ablation grid (issue #13) -------------------------------------------------------------

#: The grid's factors. The first level of each is the spec's configuration (§3.5).
ABLATION_KEYS = ("interval", "eval")
ABLATION_CFG: tuple[tuple[str, str, float | None], ...] = (
    # (name, cfg_halves, guidance; None = the edit's guidance)
    ("V into both CFG halves", "both", None),
    ("V into the conditional half only", "cond", None),
    ("guidance 1 (no CFG)", "both", 1.0),
)
ABLATION_BLOCKS = ("all", "later_half")


@dataclass
class AblationResult:
    """Per cell (keys, cfg, blocks) and k: per-image target hits and MSE to the source; same-label reconstruction."""

    ks: list[int]
    num_steps: int
    guidance: float
    num_images: int
    hits: dict[tuple[str, str, str, int], np.ndarray]
    mses: dict[tuple[str, str, str, int], np.ndarray]
    recon: dict[tuple[str, str, int], np.ndarray]  # (keys, blocks, k) → per-image MSE, same label, guidance 1
    recon_ks: list[int]
    blocks: dict[str, list[int]]
    seconds: float = 0.0

    def cells(self) -> list[tuple[str, str, str]]:
        return [(k, c[0], b) for k in ABLATION_KEYS for c in ABLATION_CFG for b in ABLATION_BLOCKS]

    def cell_rows(self, n_boot: int = 2000) -> list[dict[str, Any]]:
        """Target accuracy (Wilson CI) and MSE to source per cell and k, with paired changes from k = 0."""
        rows = []
        for keys, cfg, blocks in self.cells():
            h0 = self.hits[(keys, cfg, blocks, 0)].astype(float)
            m0 = self.mses[(keys, cfg, blocks, 0)]
            for k in self.ks:
                h, m = self.hits[(keys, cfg, blocks, k)].astype(float), self.mses[(keys, cfg, blocks, k)]
                rows.append(
                    {
                        "keys": keys,
                        "cfg": cfg,
                        "blocks": blocks,
                        "k": k,
                        "target_acc": float(h.mean()),
                        "target_acc_ci": wilson(int(h.sum()), len(h)),
                        "mse": float(m.mean()),
                        "mse_ci": bootstrap_ci(m, n_boot=n_boot).bounds,
                        "d_acc": float((h - h0).mean()),
                        "d_acc_ci": bootstrap_ci(h - h0, n_boot=n_boot).bounds,
                        "d_mse": float((m - m0).mean()),
                        "d_mse_ci": bootstrap_ci(m - m0, n_boot=n_boot).bounds,
                    }
                )
        return rows

    def factor_effects(self, k: int, n_boot: int = 2000) -> list[dict[str, Any]]:
        """Main effect of each factor on the k-vs-0 change, averaged over the other factors, paired per image.

        For each factor level, the per-image change (metric at k − metric at k = 0) is averaged over
        the cells of the other factors; the effect is that average at each non-default level minus the
        default level's, with a paired bootstrap CI over images.
        """
        out = []
        levels = {
            "keys": list(ABLATION_KEYS),
            "cfg": [c[0] for c in ABLATION_CFG],
            "blocks": list(ABLATION_BLOCKS),
        }
        for pos, (factor, lv) in enumerate(levels.items()):

            def change(level: str, metric: str, pos: int = pos) -> np.ndarray:
                store = self.hits if metric == "acc" else self.mses
                per = [
                    store[(*c, k)].astype(float) - store[(*c, 0)].astype(float) for c in self.cells() if c[pos] == level
                ]
                return np.mean(per, axis=0)

            for level in lv[1:]:
                for metric in ("acc", "mse"):
                    diff = change(level, metric) - change(lv[0], metric)
                    out.append(
                        {
                            "factor": factor,
                            "level": level,
                            "vs": lv[0],
                            "metric": metric,
                            "effect": float(diff.mean()),
                            "ci": bootstrap_ci(diff, n_boot=n_boot).bounds,
                        }
                    )
        return out


def edit_ablation(
    model: EditableModel,
    images: torch.Tensor,
    labels: torch.Tensor,
    ks: Sequence[int] = (0, 2, 15),
    num_steps: int = 15,
    guidance: float = 2.0,
    seed: int = 0,
    batch: int = 50,
    recon_steps: int = 10,
    progress: Any = None,
) -> AblationResult:
    """The RF-Edit grid {keys} × {CFG handling} × {blocks}, every image edited to a random other digit.

    Same targets as :func:`edit_tradeoff` for the same ``seed``. For each (keys, blocks) one
    inversion per batch serves every k and CFG variant; the same-label reconstruction (§7.6,
    guidance 1, k ∈ {0, N}) is measured per (keys, blocks) on the same images.
    """
    if 0 not in ks:
        raise ValueError("ks must include 0 (the no-injection reference)")
    t_start = time.perf_counter()
    g = torch.Generator().manual_seed(seed)
    targets = (labels + torch.randint(1, 10, labels.shape, generator=g)) % 10
    scorer = digit_scorer()
    from methods.rf_solver.edit import resolve_blocks

    variants = [(half, guidance if gv is None else gv) for _, half, gv in ABLATION_CFG]
    hits: dict[tuple[str, str, str, int], list[np.ndarray]] = {}
    mses: dict[tuple[str, str, str, int], list[np.ndarray]] = {}
    recon: dict[tuple[str, str, int], list[np.ndarray]] = {}
    pairs = [(kk, b) for kk in ABLATION_KEYS for b in ABLATION_BLOCKS]
    starts = list(range(0, len(labels), batch))
    injected = [k for k in ks if k > 0]
    total, done = len(starts) * (len(pairs) + 1), 0
    for i in starts:
        sl = slice(i, i + batch)
        x, y, tgt = images[sl], labels[sl], targets[sl]
        x_dev = x.to(_device(model))

        def score(
            out: torch.Tensor, keys: str, name: str, blocks: str, k: int, x=x, tgt=tgt
        ) -> None:  # bound per batch
            out = out.float().cpu()
            hits.setdefault((keys, name, blocks, k), []).append(scorer.predict(out) == tgt.numpy())
            mses.setdefault((keys, name, blocks, k), []).append(mse(out, x).numpy())

        # k = 0 injects nothing: one sample per guidance, shared by every (keys, blocks) cell
        if progress is not None:
            progress(done / total, "ablation: k = 0")
        base = edit_sweep(model, x_dev, y, tgt, (0,), num_steps=num_steps, variants=variants)
        rec0 = mse(
            rf_edit(model, x_dev, y, y, num_steps=recon_steps, inject_k=0, guidance=1.0).edited.float().cpu(), x
        ).numpy()
        done += 1
        for keys, blocks in pairs:
            if progress is not None:
                progress(done / total, f"ablation: V keys {keys}, blocks {blocks}")
            res = edit_sweep(
                model, x_dev, y, tgt, injected, num_steps=num_steps, blocks=blocks, keying=keys, variants=variants
            )
            for (name, _, _), (half, gv) in zip(ABLATION_CFG, variants, strict=True):
                score(base[(0, half, gv)], keys, name, blocks, 0)
                for k in injected:
                    score(res[(k, half, gv)], keys, name, blocks, k)
            r = rf_edit(
                model,
                x_dev,
                y,
                y,
                num_steps=recon_steps,
                inject_k=recon_steps,
                guidance=1.0,
                blocks=blocks,
                keying=keys,
            )
            recon.setdefault((keys, blocks, 0), []).append(rec0)
            recon.setdefault((keys, blocks, recon_steps), []).append(mse(r.edited.float().cpu(), x).numpy())
            done += 1
    cat = lambda d: {key: np.concatenate(v) for key, v in d.items()}  # noqa: E731
    return AblationResult(
        ks=list(ks),
        num_steps=num_steps,
        guidance=guidance,
        num_images=len(labels),
        hits=cat(hits),
        mses=cat(mses),
        recon=cat(recon),
        recon_ks=[0, recon_steps],
        blocks={b: list(resolve_blocks(model, b)) for b in ABLATION_BLOCKS},
        seconds=time.perf_counter() - t_start,
    )
