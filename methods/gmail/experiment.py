"""One GMAIL experiment: the pairs at one artifact strength, stage 1 (with and without L_align), the
stage-2 arms, the captioning demo and the gap, evaluated on held-out real renders.

:func:`prepare` does the seed-independent part once (pairs, frozen f_r features, frozen caption
embeddings) on a device (``cpu``, ``cuda``, ...): the backbone and the pairs move there once;
:func:`run_seed` trains and evaluates every arm for one seed there (``amp``: bf16 autocast for the
training steps) and brings back only numbers and the embeddings of the map (on the CPU).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from methods.gmail.caption import bleu_of, constant_bleu, train_captioner
from methods.gmail.config import GmailConfig
from methods.gmail.data import PairSet, load_pairs
from methods.gmail.evaluate import (
    attribute_accuracy,
    attribute_chance,
    domain_separability,
    paired_cosine,
    plane_separability,
    retrieval,
    retrieval_chance,
)
from methods.gmail.model import GmailEncoders, batched
from methods.gmail.train import caption_embeddings, stage1, stage2

log = logging.getLogger(__name__)


@dataclass
class Prepared:
    """What every seed at one strength shares."""

    backbone: object
    train: PairSet
    test: PairSet
    pooled: dict[str, torch.Tensor] = field(default_factory=dict)  # f_r tower features: real/gen × train/test
    real_emb_train: torch.Tensor | None = None
    text_emb_train: torch.Tensor | None = None
    seconds: float = 0.0
    device: Any = None  # torch.device the backbone, pairs and features live on


def get_backbone(preset: str, progress=None):
    from methods.vlm.cache import get_tiny_clip

    backbone, _folder = get_tiny_clip(preset, progress=progress)
    return backbone.eval().requires_grad_(False)


def prepare(cfg: GmailConfig, backbone=None, progress=None, *, device: Any = "cpu") -> Prepared:
    """Pairs at ``cfg.artifact_strength`` and the frozen f_r / h features they need, on ``device``.

    The backbone is moved to ``device`` (in place: callers share one backbone across strengths).
    """
    from core.device import resolve_device

    start = time.perf_counter()
    dev = resolve_device(device)
    backbone = backbone if backbone is not None else get_backbone(cfg.backbone)
    backbone.to(dev)
    with torch.no_grad():
        return _prepare(cfg, backbone, start, progress, dev)


def _on(pairs: PairSet, dev) -> PairSet:
    """The images and labels the experiment reads, moved to ``dev`` (the clean renders stay where they are)."""
    pairs.real, pairs.gen = pairs.real.to(dev), pairs.gen.to(dev)
    pairs.attributes = {k: v.to(dev) for k, v in pairs.attributes.items()}
    return pairs


def _prepare(cfg: GmailConfig, backbone, start: float, progress, dev) -> Prepared:
    train = _on(load_pairs("train", cfg.n_train, cfg.artifact_strength, generator=cfg.generator), dev)
    test = _on(load_pairs("test", cfg.n_test, cfg.artifact_strength, generator=cfg.generator), dev)
    if progress is not None:
        progress(0.5, "encoding the pairs with the frozen real encoder")
    probe = GmailEncoders.__new__(GmailEncoders)  # only f_r's tower is used here; no copy needed
    torch.nn.Module.__init__(probe)
    probe.backbone = backbone
    prep = Prepared(backbone, train, test, device=dev)
    for name, images in (("real_train", train.real), ("gen_train", train.gen), ("real_test", test.real),
                         ("gen_test", test.gen)):  # fmt: skip
        prep.pooled[name] = batched(probe.real_tower, images)
    proj = backbone.model.visual_projection
    prep.real_emb_train = torch.nn.functional.normalize(proj(prep.pooled["real_train"]), dim=-1)
    prep.text_emb_train = caption_embeddings(backbone, train.captions)
    prep.seconds = time.perf_counter() - start
    return prep


def _emb(proj, pooled: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return torch.nn.functional.normalize(proj(pooled), dim=-1)


def _downstream(model_text_fn, real_test_emb: torch.Tensor, test: PairSet) -> dict[str, float]:
    caps = test.specific_captions()
    out = retrieval(real_test_emb, model_text_fn(caps), caps)
    out.update({f"attr_{k}": v for k, v in attribute_accuracy(real_test_emb, model_text_fn, test.attributes).items()})
    return out


def run_seed(prep: Prepared, cfg: GmailConfig, progress=None, *, amp: str = "off") -> dict:
    """Every arm for ``cfg.seed`` on ``prep.device``: gap metrics, stage-2 retrieval/attributes, captioning BLEU-4, losses."""
    from methods.vlm.zeroshot import text_features

    sub = (lambda lo, hi: progress.sub(lo, hi)) if progress is not None else (lambda lo, hi: None)
    bb, train, test, pooled = prep.backbone, prep.train, prep.test, prep.pooled
    dev = prep.device if prep.device is not None else next(bb.parameters()).device
    start = time.perf_counter()
    encoders, losses = {}, {}
    for i, (arm, align) in enumerate((("gmail", True), ("dual-noalign", False))):
        torch.manual_seed(cfg.seed)
        enc = GmailEncoders(bb, rank=cfg.rank, alpha=cfg.lora_alpha)
        losses[f"stage1_{arm}"] = stage1(enc, train.gen, prep.real_emb_train, prep.text_emb_train, cfg,
                                         align=align, device=dev, amp=amp,
                                         progress=sub(0.3 * i, 0.3 * (i + 1)))  # fmt: skip
        encoders[arm] = enc
    stage1_s = time.perf_counter() - start

    # gap on the held-out pairs: real through f_r; generated through f_r (before) or each f_g (after)
    proj_real = bb.model.visual_projection
    real_test = _emb(proj_real, pooled["real_test"])
    gen_embs = {"naive": _emb(proj_real, pooled["gen_test"])}
    gen_pooled_train = {"naive": pooled["gen_train"], "real-only": pooled["real_train"]}
    for arm, enc in encoders.items():
        gen_embs[arm] = batched(enc.f_g, test.gen)
        gen_pooled_train[arm] = batched(enc.gen_tower, train.gen)
    gap = {arm: {"paired_cosine": paired_cosine(real_test, g), "separability": domain_separability(real_test, g, cfg.seed),
                 "plane_separability": plane_separability(real_test, g, cfg.seed)}
           for arm, g in gen_embs.items()}  # fmt: skip

    # real test images through the router (f_r unless real_inference_encoder == "lora")
    def real_pooled_for(arm: str) -> torch.Tensor:
        if cfg.real_inference_encoder == "lora" and arm in encoders:
            return batched(lambda x: encoders[arm].real_pooled(x, "lora"), test.real)
        return pooled["real_test"]

    down: dict[str, dict] = {"zero-shot": _downstream(lambda t: text_features(bb, t), real_test, test)}
    specs = {"real-only": ("real", proj_real), "naive": ("real", proj_real),
             "dual-noalign": ("generated", encoders["dual-noalign"].gen_proj),
             "gmail": ("generated", encoders["gmail"].gen_proj)}  # fmt: skip
    for i, (arm, (modality, proj_gen)) in enumerate(specs.items()):
        model, losses[f"stage2_{arm}"] = stage2(bb, proj_gen, gen_pooled_train[arm], modality, train.captions, cfg,
                                                device=dev, amp=amp,
                                                progress=sub(0.6 + 0.07 * i, 0.6 + 0.07 * (i + 1)))  # fmt: skip
        real_emb = model.image(real_pooled_for(arm), "real").detach()
        down[arm] = _downstream(model.text_features, real_emb, test)

    caps_out: dict[str, dict] = {}
    if cfg.caption_steps > 0:
        cap_train = {"real-only": _emb(proj_real, pooled["real_train"]), "naive": _emb(proj_real, pooled["gen_train"])}
        for arm, enc in encoders.items():
            cap_train[arm] = batched(enc.f_g, train.gen)
        for i, (arm, emb) in enumerate(cap_train.items()):
            if progress is not None:
                progress(0.88 + 0.03 * i, f"captioner for {arm}")
            model, vocab, closs = train_captioner(emb, train.captions, steps=cfg.caption_steps, seed=cfg.seed, amp=amp)
            real_emb = real_test if cfg.real_inference_encoder == "original" or arm not in encoders else \
                batched(lambda x, a=arm: encoders[a].encode(x, "real", "lora"), test.real)  # fmt: skip
            bleu, hyps = bleu_of(model, vocab, real_emb, test.captions)
            caps_out[arm] = {"bleu4": bleu, "examples": hyps[:6]}
            losses[f"caption_{arm}"] = closs
        const, common = constant_bleu(train.captions, test.captions)
        caps_out["constant"] = {"bleu4": const, "examples": [common]}

    return {
        "seed": cfg.seed,
        "strength": cfg.artifact_strength,
        "gap": gap,
        "downstream": down,
        "captioning": caps_out,
        "losses": losses,
        "chance": {
            **{f"retrieval_{k}": v for k, v in retrieval_chance(test.specific_captions()).items()},
            **{f"attr_{k}": v for k, v in attribute_chance(test.attributes).items()},
        },  # fmt: skip
        "seconds": {"stage1": stage1_s, "total": time.perf_counter() - start},
        "lora_trainable": sum(p.numel() for p in encoders["gmail"].trainable_parameters()),
        "embeddings": {k: v.cpu() for k, v in {"real": real_test, **gen_embs}.items()},
    }


def config_of(params: Any, **over: Any) -> GmailConfig:
    """The :class:`GmailConfig` fields of ``params`` (a job's params or the reproducer's options), with ``over``."""
    fields = {k: getattr(params, k) for k in GmailConfig.model_fields if hasattr(params, k)}
    return GmailConfig(**{**fields, **over})


def align_one(params: Any, progress) -> Any:
    """The job ``gmail.align``: one strength and seed — stage 1, the stage-2 arms, captioning, the embedding map."""
    from core.device import device_provenance, resolve_device
    from core.train import pin_threads
    from methods.gmail.report import align_report

    dev = resolve_device(params.device)
    cfg = config_of(params)
    with pin_threads(params.threads):
        backbone = get_backbone(cfg.backbone, progress=progress.sub(0.0, 0.2))
        progress(0.2, "rendering the real/generated pairs")
        prep = prepare(cfg, backbone, progress=progress.sub(0.2, 0.3), device=dev)
        result = run_seed(prep, cfg, progress=progress.sub(0.3, 0.98), amp=params.amp)
    report = align_report(params.model_dump(), result)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


def reproduce(options: Any, progress) -> Any:
    """``paperworks reproduce gmail``: every arm at each strength over the seeds, the checks, the headline claims."""
    import time

    from core.device import resolve_device
    from core.provenance import provenance_line
    from core.train import pin_threads
    from methods.gmail.checks import check_align_loss, check_asymmetry, check_lora_identity, check_router
    from methods.gmail.plots import pair_grid
    from methods.gmail.report import aggregate, directional_checks, evidence, reproduction_report, scalars
    from methods.gmail.text import reading, shrunk

    start = time.perf_counter()
    dev = resolve_device(options.device)
    strengths = list(options.strengths)
    runs: list[list[dict]] = []
    with pin_threads(options.threads):
        backbone = get_backbone(options.backbone, progress=progress.sub(0.0, 0.05))
        n_jobs = len(strengths) * options.seeds
        for si, s in enumerate(strengths):
            cfg0 = config_of(options, artifact_strength=s, seed=0, rank=4)
            prep = prepare(cfg0, backbone, device=dev)
            if si == 0:
                x = prep.test.gen[:32]
                mech = [
                    ("§7.1 L_align = log|B| for equal similarities, → 0 for one-to-one matches", *check_align_loss()),
                    ("§7.2 asymmetry: only f_g's LoRA / Proj for Gen receive gradients; f_r bit-identical",
                     *check_asymmetry(backbone, x, prep.real_emb_train[:32])),
                    ("§7.3 LoRA: zero B ⇒ f_g ≡ f_r at step 0; count = Σ r·(d_in+d_out)", *check_lora_identity(backbone, x)),
                    ("§7.4 router: real images never pass through f_g with real_inference_encoder='original'",
                     *check_router(backbone, prep.test.real[:8])),
                ]  # fmt: skip
            per_seed = []
            for seed in range(options.seeds):
                k = si * options.seeds + seed
                sub = progress.sub(0.05 + 0.93 * k / n_jobs, 0.05 + 0.93 * (k + 1) / n_jobs)
                per_seed.append(
                    run_seed(prep, config_of(options, artifact_strength=s, seed=seed), progress=sub, amp=options.amp)
                )
            runs.append(per_seed)
    vc = backbone.model.config.vision_config
    info = {
        "backbone": f"tiny CLIP '{options.backbone}'",
        "arch": f"ViT {vc.num_hidden_layers} layers × {vc.hidden_size} wide, {vc.image_size} px, patch {vc.patch_size}, "
        f"{backbone.model.config.projection_dim}-d embedding",
        "seconds": round(time.perf_counter() - start, 1),
        "machine": provenance_line(dev, options.amp, threads=options.threads),
        "command": f"paperworks reproduce gmail{options.cli_options()}",
    }
    report = reproduction_report(options.model_dump(), strengths, runs, mech, info)
    test = load_pairs("test", options.n_test, strengths[0], generator=options.generator)
    gens = [(f"gen s={s}", load_pairs("test", options.n_test, s, generator=options.generator).gen) for s in strengths]
    report.add_figure("pairs.png", pair_grid(test.real, gens, test.specific_captions()),
                      caption="Held-out pairs: the real render (top) and the generator's image at each strength")  # fmt: skip
    aggs = [aggregate(r) for r in runs]
    per_run = [[{"seed": r["seed"], "metrics": scalars(r)} for r in rs] for rs in runs]
    ev = evidence(strengths, per_run)
    report.add_section("Reading", reading(strengths, aggs, mech + directional_checks(strengths, aggs), ev))
    report.add_section("Command", f"`{info['command']}` — {info['seconds']} s. {info['machine']}")
    report.add_section("What was shrunk", shrunk(options.model_dump(), info))
    return report
