"""The X-TAIL experiment on the tiny-CLIP substrate: streams per seed, arms, and the §7 checks.

``run_arms`` runs every arm of :data:`methods.lada.config.ARMS` (or a subset) over the same seeds;
each seed draws the 16-shot training subsample, the learners' initialisation and the prototype
noise. Image features are computed once per backbone and device (``substrate``) and shared by all
arms; the learners compute on that device.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import torch

from core.jobs import JobContext, Report, null_context
from core.lazy import locked_cache
from methods.continual.xtail import XTailExperiment, XTailStream, run_xtail_experiment, xtail_metrics
from methods.lada.config import ARMS, LadaConfig
from methods.lada.domains import DOMAIN_ORDER, build_stream, domain_pools, pool_features
from methods.lada.report import build_report

log = logging.getLogger(__name__)


def substrate(preset: str = "default", device="cpu"):
    """(backbone, folder, pools, features) for the cached tiny CLIP ``preset`` (trained on first use) on ``device``.

    The backbone and the frozen features are on ``device``; the rendered pools stay on the CPU.
    """
    return _substrate(preset, str(device))


@locked_cache(maxsize=2)
def _substrate(preset: str, device: str):
    from methods.vlm.cache import get_tiny_clip

    backbone, folder = get_tiny_clip(preset, device=torch.device(device))
    pools = domain_pools()
    return backbone, folder, pools, pool_features(backbone, pools)


def stream_factory(
    preset: str,
    *,
    shots: int,
    domains: Sequence[str] = DOMAIN_ORDER,
    test_per_class: int | None = None,
    device="cpu",
    amp: str = "off",
):
    """``make(seed) -> XTailStream`` on the tiny CLIP ``preset``; its learners compute on ``device`` in ``amp``."""
    backbone, _, pools, feats = substrate(preset, device)

    def make(seed: int) -> XTailStream:
        return build_stream(
            backbone, seed=seed, shots=shots, domains=tuple(domains), test_per_class=test_per_class,
            pools=pools, features=feats, amp=amp,
        )  # fmt: skip

    return make


def run_arms(
    arms: Sequence[tuple[str, str, dict, str]],
    *,
    seeds: Sequence[int],
    make_stream,
    progress: JobContext | None = None,
    threads: int = 1,
) -> dict[str, XTailExperiment]:
    progress = progress or null_context()
    out: dict[str, XTailExperiment] = {}
    for i, (key, method, options, _label) in enumerate(arms):
        log.info("X-TAIL arm %s (%s)", key, method)
        out[key] = run_xtail_experiment(
            method, seeds=seeds, make_stream=make_stream, options=options, threads=threads,
            progress=progress.sub(i / len(arms), (i + 1) / len(arms)),
        )  # fmt: skip
    return out


# --- §7 checks -----------------------------------------------------------------
def _check(name: str, ok: bool, detail: str) -> dict:
    return {"check": name, "pass": bool(ok), "detail": detail}


def instrumented_checks(stream: XTailStream, cfg: LadaConfig) -> list[dict]:
    """Checks 1, 2, 3 and 8 on a real LADA run over ``stream`` (inspected after every task)."""
    from methods.lada.learner import LadaLearner

    learner = LadaLearner(cfg, seed=stream.seed, stream=stream)
    dev = learner.device
    ref = {k: v.clone() for k, v in stream.backbone.state_dict().items()}
    ok1, ok2, ok3, ok8 = True, True, True, True
    lam_sum = 0
    for task in stream:
        before_w = [b.detach().clone() for b in learner.memory.blocks]
        before_t = learner.text[torch.as_tensor(learner.seen, dtype=torch.long, device=dev)].clone()
        learner.learn_task(task, null_context())
        for name, p in learner.backbone.named_parameters():
            if name.startswith("model.vision_model") or name.startswith("model.visual_projection"):
                ok1 &= p.grad is None and torch.equal(p.detach(), ref[name])
            elif not name.startswith("model.logit_scale"):
                ok1 &= torch.equal(p.detach(), ref[name])  # text base weights too (only adapters train)
        ok2 &= all(torch.equal(a, b.detach()) for a, b in zip(before_w, learner.memory.blocks))
        ok2 &= torch.equal(
            before_t, learner.text[torch.as_tensor(learner.seen[: len(before_t)], dtype=torch.long, device=dev)]
        )
        lam_sum += len(task.classes)
        feats = task.test.features[:5]
        if cfg.use_memory:
            ok3 &= learner.memory.phi(feats).shape == (5, cfg.lambda1 * lam_sum)
            ok3 &= learner.lada_logits(feats).shape == (5, len(learner.seen))
        # 8: scoring every domain mixed and shuffled (no task id) gives the per-domain predictions
        mixed = torch.cat([t.test.features for t in stream]).to(dev)
        perm = torch.randperm(len(mixed), generator=torch.Generator().manual_seed(0)).to(dev)
        from methods.continual.xtail import Inputs

        shuffled = learner.scores(Inputs(torch.empty(0), mixed[perm])).argmax(1)
        together = torch.empty_like(shuffled)
        together[perm] = shuffled
        separate = torch.cat([learner.scores(t.test).argmax(1) for t in stream])
        ok8 &= torch.equal(together, separate)
    return [
        _check("1 frozen image encoder", ok1, "every f_I parameter has grad None and is bit-identical after each task"),
        _check("2 old memory and text frozen", ok2, "W^1..W^{k-1} and cached old text features bit-identical"),
        _check("3 dims", ok3, f"dim φ = λ1·Σ M^i = {cfg.lambda1 * lam_sum} after the last task; |LADA logits| = |C_L|"),
        _check(
            "8 no task id", ok8, "union predictions identical for shuffled mixed-domain batches and per-domain ones"
        ),
    ]


def unit_checks(seed: int = 0) -> list[dict]:
    """Checks 4, 5, 6 and 7 on toy inputs (the spec's hand-made cases)."""
    import torch.nn.functional as F

    from methods.lada.memory import augment, fit_prototypes, kmeans_memory, label_scores

    g = torch.Generator().manual_seed(seed)
    d, lam = 16, 4
    means = F.normalize(torch.randn(3, d, generator=g), dim=-1)
    feats = [F.normalize(m + 0.15 * torch.randn(40, d, generator=g), dim=-1) for m in means]
    ok4 = True
    for c, x in enumerate(feats):
        w = kmeans_memory(x, lam, seed)
        ok4 &= w.shape == (lam, d) and torch.allclose(w.norm(dim=-1), torch.ones(lam), atol=1e-5)
        cm = F.normalize(torch.stack([f.mean(0) for f in feats]), dim=-1)
        ok4 &= bool((w @ cm.t()).argmax(1).eq(c).all())
    w = F.normalize(torch.randn(1, lam, d, generator=g), dim=-1)
    s_hit = label_scores(w[0, :1], w, 5.0)
    unit = torch.exp(-5.0 * (1 - w[0, 0] @ w[0, 0]))
    cos = torch.linspace(-1, 1, 9)[:, None]
    mono = torch.exp(-5.0 * (1 - cos))
    ok5 = (
        bool(torch.isclose(unit, torch.tensor(1.0))) and bool((s_hit > 0).all()) and bool((mono.diff(dim=0) > 0).all())
    )
    ok5 &= bool(
        torch.allclose(
            label_scores(F.normalize(torch.randn(7, d, generator=g), dim=-1), w, 1e-9), torch.full((7, 1), float(lam))
        )
    )
    p = fit_prototypes(torch.cat(feats), 2, seed=seed)
    draws = torch.stack([augment(p, g, normalize=False) - p.means for _ in range(4000)])
    emp = draws.var(dim=0).mean(dim=1)
    rel = (emp / p.noise**2 - 1).abs().max().item()
    A = np.array([[0.9, 0.3, 0.2], [0.8, 0.95, 0.4], [0.7, 0.9, 0.85]])
    m = xtail_metrics(A)
    hand = {
        "transfer": (0.3 + (0.2 + 0.4) / 2) / 2,
        "average": (0.8 + 0.7166666666666667 + 0.4833333333333333) / 3,
        "last": 0.8166666666666667,
    }
    ok7 = all(abs(m[k] - v) < 1e-9 for k, v in hand.items())
    return [
        _check(
            "4 k-means init",
            ok4,
            "λ1 unit rows per class; each row closest to its own class mean (3 separable toy classes)",
        ),
        _check(
            "5 h",
            ok5,
            "a unit equal to the feature contributes exp(0) = 1; scores > 0, monotone in cosine; β→0 gives λ1",
        ),
        _check(
            "6 GMM augmentation",
            rel < 0.05,
            f"per-dim variance of p̃ − p vs Tr(Σ)/d over 4000 draws: max rel. error {rel:.3f}",
        ),
        _check(
            "7 metrics",
            ok7,
            f"hand 3×3 matrix: Transfer {m['transfer']:.4f}, Average {m['average']:.4f}, Last {m['last']:.4f}",
        ),
    ]


def direction_checks(exps: dict[str, XTailExperiment], tolerance: float = 0.05) -> list[dict]:
    """Check 9 on the measured experiment (means over seeds)."""

    def mean(key, metric):
        return exps[key].aggregate()[exps[key].heads[0]][metric][0]

    out = []
    if "lada" in exps and "bf" in exps:
        a, b = mean("lada", "last"), mean("bf", "last")
        out.append(_check("9a Last(LADA) > Last(BF)", a > b, f"{a * 100:.1f} vs {b * 100:.1f}"))
    if "lada" in exps and "lada_noproto" in exps:
        a, b = mean("lada", "last"), mean("lada_noproto", "last")
        out.append(_check("9b Last(prototypes) > Last(no old-task loss)", a > b, f"{a * 100:.1f} vs {b * 100:.1f}"))
    if "lada" in exps and "zeroshot" in exps:
        a, b = mean("lada", "transfer"), mean("zeroshot", "transfer")
        out.append(
            _check(
                f"9c Transfer within {tolerance * 100:.0f} points of zero-shot",
                a >= b - tolerance,
                f"{a * 100:.1f} vs zero-shot {b * 100:.1f}",
            )
        )
    return out


ARM_KEYS = tuple(a[0] for a in ARMS)


def run_reproduction(options, progress: JobContext) -> Report:
    """``paperworks reproduce lada``: every arm and the β sweep over the seeds, the §7 checks, the report."""
    import time

    from core.device import device_provenance, resolve_device
    from methods.continual.harness import seed_list
    from methods.lada.config import BETA_SWEEP, CPU_LADA

    t0, cpu0 = time.perf_counter(), time.process_time()
    dev = resolve_device(options.device)
    progress(0.0, "tiny CLIP, domains and frozen features")
    backbone, folder, _, _ = substrate(options.backbone, dev)
    make = stream_factory(options.backbone, shots=options.shots, device=dev, amp=options.amp)
    seeds = seed_list(options.seeds, 0)
    arms = ARMS + BETA_SWEEP
    exps = run_arms(arms, seeds=seeds, make_stream=make, progress=progress.sub(0.02, 0.9), threads=options.threads)
    progress(0.92, "§7 checks")
    from methods.continual.harness import torch_threads

    with torch_threads(options.threads):
        checks = unit_checks() + instrumented_checks(make(seeds[0]), LadaConfig(**CPU_LADA)) + direction_checks(exps)
    checks.sort(key=lambda c: c["check"])  # by check number (1 … 9c)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    labels = {k: lab for k, _, _, lab in arms}
    return build_report(exps, labels, checks, options=options, seeds=seeds, folder=str(folder), elapsed=elapsed, cpu=cpu,
                        logit_scale=float(backbone.logit_scale),
                        provenance=device_provenance(dev, options.amp))  # fmt: skip
