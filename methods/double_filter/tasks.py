"""Synthetic VQA, NLVR and retrieval tasks on the renderer's scenes (``methods.vlm.render``), and the tokenizer.

No VQAv2 / NLVR2 / Flickr30k offline, so (spec §6) the three task shapes are rebuilt on procedural scenes
with ground-truth boxes:

* ``vqa`` — one question per image, answer classification over 25 answers: the object's colour, shape,
  texture, the number of objects, or the **background colour** (the question IPF must keep background for);
* ``nlvr`` — a true/false statement about an image pair (balanced 50/50): background, colour, count and
  shape relations between the left and right image;
* ``retrieval`` — image ↔ caption (the most specific caption: attributes, position, background);
  items with the same caption text count as matches.

Scene i of a split depends only on (split, i); the splits use seeds disjoint from the pretraining scenes.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from core.lazy import locked_cache
from methods.vlm.render import (
    BACKGROUNDS,
    COLOURS,
    COUNTS,
    PLURAL,
    SHAPES,
    TEXTURES,
    Scene,
    attribute_phrase,
    caption_words,
    captions,
    position_name,
    render,
    sample_scene,
)
from methods.vlm.tokenizer import WordTokenizer

CACHE_VERSION = 1

TASKS = ("vqa", "nlvr", "retrieval")
SPLIT_SEEDS = {"pretrain": 7000, "train": 7001, "val": 7002, "test": 7003}
ANSWERS: tuple[str, ...] = (*COLOURS, *SHAPES, *COUNTS.values(), *BACKGROUNDS, *TEXTURES)
QTYPES = ("colour", "shape", "count", "background", "texture")


@dataclass
class TaskData:
    """A task split: images (n, 3, H, W) — (n, 2, 3, H, W) for NLVR — texts, labels and boxes."""

    task: str
    split: str
    images: torch.Tensor
    boxes: list  # per image (k, 4); NLVR: per pair [left, right]
    texts: list[str]
    labels: torch.Tensor
    kinds: list[str] = field(default_factory=list)  # question / statement type per item

    def __len__(self) -> int:
        return len(self.texts)


def _scene(split: str, i: int) -> Scene:
    return sample_scene(np.random.default_rng([SPLIT_SEEDS[split], i]))


@locked_cache(maxsize=8)
def scenes(split: str, n: int) -> tuple[list[Scene], torch.Tensor, list[np.ndarray]]:
    """The first ``n`` scenes of ``split`` with their rendered images and boxes (rendered images cached on disk)."""
    from core.config import get_settings

    out = [_scene(split, i) for i in range(n)]  # cheap: no pixels
    path = Path(get_settings().cache_dir) / "double_filter" / "scenes" / f"{split}-{n}-v{CACHE_VERSION}.pt"
    if path.is_file():
        blob = torch.load(path, weights_only=False)
        return out, blob["images"], blob["boxes"]
    imgs, boxes = [], []
    for s in out:
        img, box = render(s)
        imgs.append(img)
        boxes.append(box)
    images = torch.from_numpy(np.stack(imgs)).permute(0, 3, 1, 2).contiguous()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    torch.save({"images": images, "boxes": boxes}, tmp)
    tmp.replace(path)
    return out, images, boxes


def retrieval_caption(s: Scene) -> str:
    pos = f" at the {position_name(s.objects[0], s.size)}" if len(s.objects) == 1 else ""
    return f"{attribute_phrase(s)}{pos} on a {s.background} background."


def vqa_item(s: Scene, rng: np.random.Generator) -> tuple[str, str, str]:
    """(question, answer, type) for one scene."""
    qtype = str(rng.choice(QTYPES))
    shape, colour, texture = s.kind
    n = len(s.objects)
    noun = shape if n == 1 else PLURAL[shape]
    be = "is" if n == 1 else "are"
    q, a = {
        "colour": (f"what colour {be} the {noun}?", colour),
        "shape": ("what shape are the objects?" if n > 1 else "what shape is the object?", shape),
        "count": ("how many objects are there?", COUNTS[n]),
        "background": ("what colour is the background?", s.background),
        "texture": (f"what texture {be} the {noun}?", texture),
    }[qtype]
    return q, a, qtype


def nlvr_statements(a: Scene, b: Scene) -> list[tuple[str, bool, str]]:
    """Every candidate statement about (left a, right b) with its truth and type."""
    out: list[tuple[str, bool, str]] = []
    for bg in BACKGROUNDS:
        out.append((f"both images have a {bg} background.", a.background == bg == b.background, "background"))
    out.append(("the two images have the same background.", a.background == b.background, "background"))
    for side, s in (("left", a), ("right", b)):
        for c in COLOURS:
            out.append((f"the {side} image shows {c} objects.", s.kind[1] == c, "colour"))
        for sh in SHAPES:
            out.append((f"the {side} image shows a {sh}.", s.kind[0] == sh, "shape"))
    out.append(("the two images show the same shape.", a.kind[0] == b.kind[0], "shape"))
    out.append(("the left image has more objects than the right image.", len(a.objects) > len(b.objects), "count"))
    out.append(("the right image has more objects than the left image.", len(b.objects) > len(a.objects), "count"))
    return out


def build(task: str, split: str, n: int) -> TaskData:
    """``n`` items of ``task`` on ``split`` (NLVR uses 2n scenes)."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; known: {', '.join(TASKS)}")
    rng = np.random.default_rng([SPLIT_SEEDS[split], 99, TASKS.index(task)])
    if task == "nlvr":
        sc, imgs, boxes = scenes(split, 2 * n)
        texts, labels, kinds = [], [], []
        for i in range(n):
            cands = nlvr_statements(sc[2 * i], sc[2 * i + 1])
            want = bool(rng.random() < 0.5)
            pool = [c for c in cands if c[1] == want] or cands
            stmt, truth, kind = pool[int(rng.integers(len(pool)))]
            texts.append(stmt)
            labels.append(int(truth))
            kinds.append(kind)
        pairs = imgs.view(n, 2, *imgs.shape[1:])
        return TaskData(task, split, pairs, [[boxes[2 * i], boxes[2 * i + 1]] for i in range(n)], texts,
                        torch.tensor(labels), kinds)  # fmt: skip
    sc, imgs, boxes = scenes(split, n)
    if task == "vqa":
        items = [vqa_item(s, rng) for s in sc]
        labels = torch.tensor([ANSWERS.index(a) for _, a, _ in items])
        return TaskData(task, split, imgs, boxes, [q for q, _, _ in items], labels, [t for _, _, t in items])
    caps = [retrieval_caption(s) for s in sc]
    ids = {c: i for i, c in enumerate(dict.fromkeys(caps))}
    return TaskData(task, split, imgs, boxes, caps, torch.tensor([ids[c] for c in caps]), ["caption"] * n)


def vocabulary() -> list[str]:
    """Every text the tokenizer must cover: caption grammar, questions, statements, answers."""
    texts = sorted(caption_words()) + list(ANSWERS)
    texts += [
        "what colour is are the object objects shape how many there texture background?",
        "both images have a the same left right image shows two show more than objects.",
    ]
    return texts


@functools.lru_cache(maxsize=2)
def tokenizer(context_length: int = 24) -> WordTokenizer:
    return WordTokenizer.build(vocabulary(), context_length)


def pretrain_pairs(n: int) -> tuple[torch.Tensor, list[list[str]]]:
    """Pretraining scenes (their own seeds) with every true caption of each."""
    sc, imgs, _ = scenes("pretrain", n)
    return imgs, [captions(s) + [retrieval_caption(s)] for s in sc]
