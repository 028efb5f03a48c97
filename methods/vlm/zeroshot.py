"""Zero-shot classification and retrieval with any :class:`~methods.vlm.backbone.VLBackbone`.

A zero-shot classifier is the class names written into prompt templates, encoded and
L2-normalised (averaged over templates, renormalised — CLIP's prompt ensembling); an image's
logits are ``logit_scale · cos(image, class)``, so the softmax is CLIP's own probability.
Everything runs where the backbone is: images, tokens and labels on the CPU are moved there;
features and logits stay there (only accuracies and recalls come back as floats).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

#: Prompt templates of the CoOp family (spec dor.md §5); the first is the default.
TEMPLATES = (
    "a photo of a {}.",
    "a photo of a {}, a type of pet.",
    "a photo of a {}, a type of flower.",
    "a photo of a {}, a type of aircraft.",
    "{} texture.",
    "a centered satellite photo of {}.",
    "a photo of a {}, a type of food.",
    "a photo of a person doing {}.",
)


@torch.no_grad()
def image_features(backbone, images: torch.Tensor, *, batch_size: int = 256) -> torch.Tensor:
    """(n, d) L2-normalised image features, computed in batches."""
    return torch.cat([backbone.encode_image(images[i : i + batch_size]) for i in range(0, len(images), batch_size)])


@torch.no_grad()
def text_features(backbone, texts: Sequence[str], *, batch_size: int = 512) -> torch.Tensor:
    """(n, d) L2-normalised text features, computed in batches of similar length (less padding), in input order."""
    texts = list(texts)
    if not texts:
        return torch.empty(0)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i].split()))
    chunks = [
        backbone.encode_text(backbone.tokenize([texts[j] for j in order[i : i + batch_size]]))
        for i in range(0, len(order), batch_size)
    ]
    feats = torch.cat(chunks)
    where = torch.empty(len(order), dtype=torch.long)
    where[torch.as_tensor(order)] = torch.arange(len(order))  # row of text j in the length-sorted batches
    return feats[where.to(feats.device)]


def prompts(classnames: Sequence[str], template: str = TEMPLATES[0]) -> list[str]:
    """``template`` filled with each class name (``_`` read as a space)."""
    return [template.format(c.replace("_", " ")) for c in classnames]


@torch.no_grad()
def text_classifier(backbone, classnames: Sequence[str], templates: Sequence[str] = TEMPLATES[:1]) -> torch.Tensor:
    """(C, d) zero-shot class weights: template features averaged per class, L2-normalised."""
    per_template = torch.stack([text_features(backbone, prompts(classnames, t)) for t in templates])
    return F.normalize(per_template.mean(0), dim=-1)


def classify(image_feats: torch.Tensor, class_weights: torch.Tensor, logit_scale: float) -> torch.Tensor:
    """(n, C) logits ``logit_scale · cos``; softmax gives CLIP's class probabilities."""
    return logit_scale * image_feats @ class_weights.t()


@torch.no_grad()
def zero_shot_accuracy(backbone, dataset, templates: Sequence[str] = TEMPLATES[:1]) -> float:
    """Top-1 accuracy of zero-shot classification of ``dataset`` over its class names."""
    logits = classify(
        image_features(backbone, dataset.images), text_classifier(backbone, dataset.classnames, templates), 1.0
    )
    return float((logits.argmax(1) == dataset.labels.to(logits.device)).float().mean())


@torch.no_grad()
def zero_shot_hits(backbone, dataset, templates: Sequence[str] = TEMPLATES[:1]) -> list[int]:
    """Per image, 1 when its zero-shot top-1 class is right (the mean is :func:`zero_shot_accuracy`)."""
    logits = classify(
        image_features(backbone, dataset.images), text_classifier(backbone, dataset.classnames, templates), 1.0
    )
    return (logits.argmax(1) == dataset.labels.to(logits.device)).int().cpu().tolist()


def retrieval_hits(image_feats: torch.Tensor, text_feats: torch.Tensor) -> dict[str, list[int]]:
    """Per query, 1 when its pair is ranked first (no candidate scores strictly higher; the mean is R@1)."""
    sim = image_feats @ text_feats.t()
    target = torch.arange(len(sim), device=sim.device)
    return {
        d: ((s > s[target, target][:, None]).sum(1) < 1).int().cpu().tolist()
        for d, s in (("i2t", sim), ("t2i", sim.t()))
    }


def retrieval_recall(
    image_feats: torch.Tensor, text_feats: torch.Tensor, ks: Sequence[int] = (1, 5)
) -> dict[str, float]:
    """Recall@k for paired rows (text i describes image i): image→text and text→image."""
    if image_feats.shape != text_feats.shape:
        raise ValueError("image and text features must be paired row by row")
    sim = image_feats @ text_feats.t()
    target = torch.arange(len(sim), device=sim.device)
    out: dict[str, float] = {}
    for direction, s in (("i2t", sim), ("t2i", sim.t())):
        # rank of the true pair = number of candidates scoring strictly higher
        rank = (s > s[target, target][:, None]).sum(1)
        for k in ks:
            out[f"{direction}_r@{k}"] = float((rank < k).float().mean())
    return out
