"""Digits ↔ captions: the §6 split, the attribute captions and the frozen image encoder.

* :func:`split` — scikit-learn digits (1797), stratified 1200 train / 597 test (fixed seed 0); the
  train part is cut again into 1000 fit / 200 validation (the validation recalls drive AGD's
  task sampling and early stopping, §3.4).
* :func:`attributes` — ink mass (per-class tertiles of the summed intensity: thin / regular / bold)
  and slant (global tertiles of −cov(x, y)/var(y) of the ink: left / upright / right), both
  thresholds fitted on the training images only.
* :func:`captions` — one caption per image from six paraphrase templates with synonym choices,
  so a caption says the class and both attributes in varying words ("the digit 7, written boldly,
  leaning to the left", "a thin upright seven", ...). Drawn once with a fixed seed: the captions are
  data, not a function of the training seed.
* :class:`PatchEncoder` — the frozen image encoder of §6's second option: a 3-layer CNN whose
  stride-2 layer turns the 8×8 image into 4×4 = 16 tokens of d_img = 64 (each token summarises a
  2×2 patch and its neighbourhood), pretrained ONCE with cross-entropy on the first half of the
  fit split (500 images, never the test split), then frozen and cached.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

log = logging.getLogger(__name__)

WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
INK = ("thin", "regular", "bold")
SLANT = ("left", "upright", "right")
D_IMG = 64
N_TOKENS_IMG = 16

# Paraphrases per attribute value: (adjective, adverbial phrase, noun phrase)
_INK_WORDS = {
    "thin": (("thin", "light", "faint"), ("thinly", "lightly"), ("thin strokes", "a light pen")),
    "regular": (
        ("regular", "ordinary", "medium"),
        ("normally", "with medium pressure"),
        ("medium strokes", "a normal pen"),
    ),
    "bold": (("bold", "thick", "heavy"), ("boldly", "heavily"), ("thick strokes", "a heavy pen")),
}
_SLANT_WORDS = {
    "left": (("left-leaning", "left-slanted"), ("leaning to the left", "slanting left", "tilted left")),
    "upright": (("upright", "straight"), ("standing upright", "written straight", "not slanted")),
    "right": (("right-leaning", "right-slanted"), ("leaning to the right", "slanting right", "tilted right")),
}
_TEMPLATES = (
    "a {ink_adj} handwritten {word}, {slant_phrase}",
    "the digit {num}, written {ink_adv} and {slant_phrase}",
    "a {slant_adj} {word} drawn with {ink_noun}",
    "number {num} in {ink_noun}, {slant_phrase}",
    "an image of a {ink_adj}, {slant_adj} {word}",
    "{Word}: {ink_adj} ink, {slant_phrase}",
)
# Zero-shot class prompts: class only, no attribute (never a training caption).
CLASS_PROMPTS = ("a handwritten {word}", "the digit {num}", "a picture of the number {word}")


@dataclass(frozen=True)
class Split:
    """Images (N, 8, 8) in [0, 1], labels, attribute ids and captions of one part of the split."""

    images: np.ndarray
    labels: np.ndarray
    ink: np.ndarray
    slant: np.ndarray
    captions: tuple[str, ...]
    index: np.ndarray  # row in scikit-learn's digits


@functools.lru_cache(maxsize=1)
def _digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return (d.images / 16.0).astype(np.float32), d.target.astype(np.int64)


def _ink_mass(images: np.ndarray) -> np.ndarray:
    return images.reshape(len(images), -1).sum(1)


def _slant(images: np.ndarray) -> np.ndarray:
    """−cov(x, y)/var(y) of the ink distribution: > 0 when the top of the stroke sits to the right."""
    ys, xs = np.mgrid[0:8, 0:8].astype(np.float64)
    w = images.reshape(len(images), 8, 8).astype(np.float64) + 1e-9
    m = w.sum((1, 2))
    mx = (w * xs).sum((1, 2)) / m
    my = (w * ys).sum((1, 2)) / m
    cxy = (w * (xs - mx[:, None, None]) * (ys - my[:, None, None])).sum((1, 2)) / m
    vy = (w * (ys - my[:, None, None]) ** 2).sum((1, 2)) / m
    return -cxy / vy


def attributes(images: np.ndarray, labels: np.ndarray, fit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ink (0 thin, 1 regular, 2 bold) per class tertile and slant (0 left, 1 upright, 2 right), thresholds from ``fit``."""
    mass, sl = _ink_mass(images), _slant(images)
    ink = np.zeros(len(images), dtype=np.int64)
    for c in range(10):
        cut = np.quantile(mass[fit][labels[fit] == c], [1 / 3, 2 / 3])
        sel = labels == c
        ink[sel] = np.searchsorted(cut, mass[sel])
    slant = np.searchsorted(np.quantile(sl[fit], [1 / 3, 2 / 3]), sl).astype(np.int64)
    return ink, slant


def caption(label: int, ink: int, slant: int, rng: np.random.Generator) -> str:
    """One caption: a random template with random synonyms for the class and both attributes."""
    adj, adv, noun = _INK_WORDS[INK[ink]]
    s_adj, s_phrase = _SLANT_WORDS[SLANT[slant]]
    word = WORDS[label]
    tpl = _TEMPLATES[rng.integers(len(_TEMPLATES))]
    return tpl.format(
        word=word,
        Word=word.capitalize(),
        num=str(label),
        ink_adj=adj[rng.integers(len(adj))],
        ink_adv=adv[rng.integers(len(adv))],
        ink_noun=noun[rng.integers(len(noun))],
        slant_adj=s_adj[rng.integers(len(s_adj))],
        slant_phrase=s_phrase[rng.integers(len(s_phrase))],
    )


def class_prompts(label: int) -> list[str]:
    return [t.format(word=WORDS[label], num=str(label)) for t in CLASS_PROMPTS]


@functools.lru_cache(maxsize=1)
def split() -> dict[str, Split]:
    """``fit`` (1000), ``val`` (200) and ``test`` (597): the §6 1200/597 split, train cut 1000/200."""
    from sklearn.model_selection import train_test_split

    images, labels = _digits()
    idx = np.arange(len(labels))
    train, test = train_test_split(idx, test_size=597, stratify=labels, random_state=0)
    fit, val = train_test_split(train, test_size=200, stratify=labels[train], random_state=0)
    ink, slant = attributes(images, labels, fit)
    rng = np.random.default_rng(0)
    caps = [caption(int(labels[i]), int(ink[i]), int(slant[i]), rng) for i in idx]
    out = {}
    for name, part in (("fit", np.sort(fit)), ("val", np.sort(val)), ("test", np.sort(test))):
        out[name] = Split(images[part], labels[part], ink[part], slant[part], tuple(caps[i] for i in part), part)
    return out


def pair_groups(part: Split) -> np.ndarray:
    """Group id (class, ink, slant) per item: items of one group are indistinguishable from the caption's content."""
    return part.labels * 9 + part.ink * 3 + part.slant


def oracle_r1(part: Split) -> float:
    """Exact-pair R@1 of a perfect (class, ink, slant) matcher with random tie-breaking: mean of 1/|group|."""
    g = pair_groups(part)
    _, inv, counts = np.unique(g, return_inverse=True, return_counts=True)
    return float(np.mean(1.0 / counts[inv]))


def oracle_recall(part: Split, k: int) -> float:
    """Exact-pair R@K of that perfect matcher: mean of min(1, K/|group|)."""
    g = pair_groups(part)
    _, inv, counts = np.unique(g, return_inverse=True, return_counts=True)
    return float(np.mean(np.minimum(1.0, k / counts[inv])))


class PatchEncoder(nn.Module):
    """8×8 image → 16 tokens × 64 (the frozen image encoder); ``head`` only for its pretraining."""

    def __init__(self, d: int = D_IMG) -> None:
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(32, d, 3, stride=2, padding=1),  # 8×8 → 4×4: one token per 2×2 patch
            nn.ReLU(),
            nn.Conv2d(d, d, 3, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Linear(d, 10)

    def tokens(self, x: torch.Tensor) -> torch.Tensor:
        """(B, 8, 8) → (B, 16, d)."""
        return self.body(x[:, None]).flatten(2).transpose(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.tokens(x).mean(1))


ENCODER_VERSION = "v1-cnn3-e40"


def _encoder_path() -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "m3_jepa" / f"patch_encoder-{ENCODER_VERSION}.pt"


def pretrain_encoder(epochs: int = 40, seed: int = 0, *, device: Any = "cpu") -> PatchEncoder:
    """Cross-entropy pretraining on the first half of the fit split (500 images), Adam lr 3e-3, batch 50.

    Runs on ``device`` through :func:`core.train.fit` (constant rate, no clipping; the batch order is
    redrawn every epoch) and returns the encoder on the CPU: its cached weights do not depend on
    where it trained (on the CPU they are the ones of the loop before ``fit``).
    """
    from core.device import resolve_device
    from core.train import constant_lr, fit, pin_threads, seed_everything

    dev = resolve_device(device)
    fit_part = split()["fit"]
    half = len(fit_part.labels) // 2
    x, y = torch.from_numpy(fit_part.images[:half]).to(dev), torch.from_numpy(fit_part.labels[:half]).to(dev)
    per_epoch = -(-half // 50)
    with pin_threads(1):
        seed_everything(seed)
        enc = PatchEncoder()
        gen = torch.Generator().manual_seed(seed)
        order: list[torch.Tensor] = []

        def batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
            i = step % per_epoch
            if i == 0:
                order[:] = [torch.randperm(half, generator=gen).to(dev)]
            b = order[0][i * 50 : (i + 1) * 50]
            return x[b], y[b]

        fit(
            enc,
            batch,
            lambda m, b: nn.functional.cross_entropy(m(b[0]), b[1]),
            steps=epochs * per_epoch,
            lr=3e-3,
            clip=None,
            schedule=constant_lr,
            optimizer=lambda groups: torch.optim.Adam(groups, lr=3e-3),
            device=dev,
            sync_every=per_epoch,
            message="patch encoder",
        )
    enc.eval()
    return enc.cpu()


def frozen_encoder() -> PatchEncoder:
    """The cached pretrained encoder (trained once per machine), every parameter ``requires_grad=False``."""
    path = _encoder_path()
    enc = PatchEncoder()
    if path.exists():
        enc.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    else:
        enc = pretrain_encoder()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        torch.save(enc.state_dict(), tmp)
        tmp.replace(path)
    enc.eval()
    for p in enc.parameters():
        p.requires_grad_(False)
    return enc


def state_digest(module: nn.Module) -> str:
    """SHA-256 of every parameter and buffer's bytes (the bitwise frozen-encoder check)."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        h.update(name.encode())
        h.update(t.detach().contiguous().cpu().numpy().tobytes())
    return h.hexdigest()


@torch.no_grad()
def image_tokens(enc: PatchEncoder, images: np.ndarray) -> torch.Tensor:
    """(N, 16, 64) frozen image tokens."""
    x = torch.from_numpy(np.asarray(images, dtype=np.float32))
    return torch.cat([enc.tokens(x[i : i + 256]) for i in range(0, len(x), 256)])
