"""The VLM jobs' bodies: train (or load) the tiny CLIP and report it, classify one image, and the reproduction.

:func:`train_one` is ``vlm.train``, :func:`zeroshot_one` is ``vlm.zeroshot``, :func:`reproduce` is
``paperworks reproduce vlm``: the training report plus every test item's zero-shot and retrieval hit, from which
the page's headline claims (accuracy above chance, Wilson intervals over the test items) are computed.
"""

from __future__ import annotations

import io
import time
from typing import Any

from core.jobs import JobContext, Report
from methods.vlm.report import reproduction_report, training_report, zero_shot_report

MAX_IMAGE_BYTES = 20 * 1024 * 1024


def train_one(params: Any, progress: JobContext) -> Report:
    """Train (or load from the cache) the tiny CLIP of ``params.preset``; the training report."""
    return _train(params, progress)[0]


def _train(params: Any, progress: JobContext) -> tuple[Report, Any, Any]:
    """(training report, backbone, preset) of ``params`` (preset, steps, retrain, threads, device, amp)."""
    from core.device import device_provenance, resolve_device
    from methods.vlm.cache import get_tiny_clip, has_wordnet, model_dir, train_info
    from methods.vlm.config import get_preset

    dev = resolve_device(params.device)  # a cuda job on a worker without CUDA fails here, at once
    overrides = {"threads": params.threads} if params.threads != 1 else {}
    if params.steps is not None:
        overrides["steps"] = params.steps
    preset = get_preset(params.preset, **overrides)
    wordnet = has_wordnet() or not preset.model.wordnet
    cached = (model_dir(preset, wordnet=wordnet) / "model.safetensors").is_file() and not params.retrain
    backbone, folder = get_tiny_clip(
        preset,
        retrain=params.retrain,
        progress=None if cached else progress.sub(0.0, 0.9),
        device=dev,
        amp=params.amp,
    )
    info = train_info(folder)
    if cached:  # evaluate on today's datasets, not the numbers stored when it was trained
        from methods.vlm.train import evaluate

        progress(0.92, "evaluating zero-shot accuracy and retrieval")
        info["eval"] = evaluate(backbone, include=preset.eval_sets, retrieval_n=preset.retrieval_n)
    progress(0.97, "writing the report")
    report = training_report(
        folder, info, preset.to_dict(), trained_now=not cached, provenance=device_provenance(dev, params.amp)
    )
    return report, backbone, preset


def _load_image(params: Any):
    import numpy as np
    import torch
    from PIL import Image

    if params.image_sha256 is not None:
        from core.artifacts import get_artifact_store

        data = get_artifact_store().read(params.image_sha256)
        if len(data) > MAX_IMAGE_BYTES:
            raise ValueError("image too large")
        with Image.open(io.BytesIO(data)) as im:
            im = im.convert("RGB")
            side = min(im.size)
            left, top = (im.width - side) // 2, (im.height - side) // 2
            im = im.crop((left, top, left + side, top + side)).resize((64, 64), Image.BICUBIC)
            return torch.from_numpy(np.asarray(im, dtype=np.float32) / 255.0).permute(2, 0, 1), None
    from methods.vlm.data import load_dataset

    ds = load_dataset(params.dataset, params.split)
    if params.index >= len(ds):
        raise ValueError(f"{params.dataset}/{params.split} has {len(ds)} images; index {params.index} is out of range")
    return ds.images[params.index], ds


def zeroshot_one(params: Any, progress: JobContext) -> Report:
    """Classify an uploaded or dataset image among class names (softmax of logit_scale · cosine)."""
    from core.device import device_provenance, resolve_device
    from methods.vlm.cache import get_tiny_clip
    from methods.vlm.data import load_dataset
    from methods.vlm.tokenizer import words
    from methods.vlm.zeroshot import classify, image_features, text_classifier

    dev = resolve_device(params.device)
    image, ds = _load_image(params)
    classnames = params.classnames or list((ds or load_dataset(params.dataset, "test")).classnames)
    backbone, _ = get_tiny_clip(params.preset, progress=progress.sub(0.0, 0.9), device=dev, amp=params.amp)
    weights = text_classifier(backbone, classnames, (params.template,))
    logits = classify(image_features(backbone, image[None]), weights, backbone.logit_scale)
    probs = logits.softmax(-1)[0].cpu().tolist()
    tok = backbone._tokenizer
    unknown = sorted({w for c in classnames for w in words(c) if hasattr(tok, "index") and w not in tok.index})
    truth = None if ds is None else ds.classnames[int(ds.labels[params.index])]  # a dataset image's true class
    report = zero_shot_report(image, classnames, probs, params.template, unknown, truth=truth)
    report.metrics.update(device_provenance(dev, params.amp))
    return report


def item_hits(backbone: Any, preset: Any) -> dict[str, Any]:
    """Every test item's hit: zero-shot top-1 per image of each evaluation set (with its chance), and R@1 per query
    of the held-out scene retrieval in both directions (with its chance)."""
    from methods.vlm.data import load_dataset, scene_split
    from methods.vlm.train import retrieval_captions
    from methods.vlm.zeroshot import image_features, retrieval_hits, text_features, zero_shot_hits

    raw: dict[str, Any] = {"zeroshot": {}, "chance": {}}
    for name, split in preset.eval_sets:
        try:
            ds = load_dataset(name, split)
        except FileNotFoundError:
            continue
        raw["zeroshot"][name] = zero_shot_hits(backbone, ds)
        raw["chance"][name] = 1.0 / len(ds.classnames)
    test = load_dataset("scenes", "test") if preset.retrieval_n is None else scene_split("test", preset.retrieval_n)
    raw["retrieval"] = retrieval_hits(
        image_features(backbone, test.images), text_features(backbone, retrieval_captions(test))
    )
    raw["chance"]["retrieval"] = 1.0 / len(test)
    return raw


def reproduce(options: Any, progress: JobContext) -> Report:
    """``paperworks reproduce vlm``: the training report of the preset, then every test item's hit and the claims."""
    from types import SimpleNamespace

    from core.train import pin_threads

    t0 = time.perf_counter()
    params = SimpleNamespace(preset=options.preset, steps=None, retrain=options.retrain, threads=options.threads,
                             device=options.device, amp=options.amp)  # fmt: skip
    report, backbone, preset = _train(params, progress.sub(0.0, 0.9))
    progress(0.92, "every test item's zero-shot and retrieval hit")
    with pin_threads(options.threads):
        raw = item_hits(backbone, preset)
    return reproduction_report(report, raw, options.model_dump(mode="json"), command=f"paperworks reproduce vlm"
                               f"{options.cli_options()}", seconds=time.perf_counter() - t0)  # fmt: skip
