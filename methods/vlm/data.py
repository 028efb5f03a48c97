"""Named image–text datasets with fixed splits, shared by every VLM method.

| name | what | classes | splits |
|---|---|---|---|
| ``scenes`` | procedural captioned scenes (:mod:`methods.vlm.render`) with boxes | the 6 shapes | train 12000 / val 500 / test 1000 |
| ``objects`` | one lexicon object per image, labelled by its noun | the 48 :data:`LEXICON` nouns | train 24 / test 30 per class |
| ``objects20`` | the same for 20 nouns, pixel noise σ = 0.12 instead of 0.03–0.05 (a domain shift from the pretraining renders, as downstream datasets have from CLIP's web data; DOR's base-to-new task: ids 0–9 base, 10–19 new) | 20 nouns | train 32 / test 50 per class |
| ``digits`` | scikit-learn's 8×8 digits upsampled ×4 to 32×32 (real, handwritten) | zero … nine | train 1500 / test 297 |
| ``photos`` | 64–128 px crops of scikit-learn's two sample photos resized to 32×32 (real) | temple, flower | train 200 / test 50 per class, from disjoint regions |
| ``examples`` | the repo's example photos (``rf_edit_examples``) when the data folder exists | boy, hiker, horse | test 3 |

Every split is generated from its own fixed seed, so it is identical on every machine; rendered
splits are cached under ``<cache_dir>/vlm/data``. Images are (n, 3, 32, 32) float32 in [0, 1].
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from core.lazy import locked_cache
from methods.vlm.render import LEXICON, SHAPES, article, captions, render, sample_scene

log = logging.getLogger(__name__)

DIGIT_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
OBJECTS20 = (
    # base (ids 0-9)
    "tomato", "brick", "tent", "starfish", "bagel", "melon", "towel", "badge", "clover", "cone",
    # new (ids 10-19)
    "lime", "box", "sail", "medal", "bracelet", "ladybug", "tablecloth", "pyramid", "propeller", "donut",
)  # fmt: skip
PHOTO_CLASSES = ("temple", "flower")
EXAMPLE_CLASSES = {"boy.jpg": "boy", "hiking.jpg": "hiker", "horse.jpg": "horse"}
SPLIT_SEEDS = {"train": 0, "val": 1, "test": 2}
CACHE_VERSION = 4


@dataclass
class VLDataset:
    """Images with labels and captions (``boxes``: per image (k, 4) x0, y0, x1, y1 pixels, where known)."""

    name: str
    split: str
    images: torch.Tensor
    labels: torch.Tensor
    classnames: tuple[str, ...]
    captions: list[list[str]]
    boxes: list[np.ndarray] | None = None
    meta: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.labels)

    def subset(self, idx) -> VLDataset:
        idx = torch.as_tensor(idx, dtype=torch.long)
        il = idx.tolist()
        return VLDataset(
            self.name,
            self.split,
            self.images[idx],
            self.labels[idx],
            self.classnames,
            [self.captions[i] for i in il],
            None if self.boxes is None else [self.boxes[i] for i in il],
            dict(self.meta),
        )

    def few_shot(self, shots: int, seed: int, classes: tuple[int, ...] | None = None) -> VLDataset:
        """``shots`` images per class (of ``classes``; default all), drawn with ``seed``."""
        g = np.random.default_rng(seed)
        labels = self.labels.numpy()
        keep: list[int] = []
        for c in classes if classes is not None else range(len(self.classnames)):
            pool = np.flatnonzero(labels == c)
            if len(pool) < shots:
                raise ValueError(f"class {self.classnames[c]!r} has {len(pool)} images, fewer than {shots} shots")
            keep += sorted(g.choice(pool, shots, replace=False).tolist())
        return self.subset(keep)


def _scene_dataset(name: str, split: str, kinds, per_class: int, noise: float, seed: int) -> VLDataset:
    rng = np.random.default_rng(seed)
    images, labels, caps, boxes = [], [], [], []
    for _ in range(per_class):
        for label, kind in enumerate(kinds):
            scene = sample_scene(rng, kind=kind, count=1, noise=noise)
            img, box = render(scene)
            images.append(img)
            labels.append(label)
            caps.append(captions(scene))
            boxes.append(box)
    return VLDataset(name, split, _to_tensor(images), torch.tensor(labels), (), caps, boxes)


def _to_tensor(images: list[np.ndarray]) -> torch.Tensor:
    return torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous()


SCENE_SPLIT_SIZES = {"train": 12000, "val": 500, "test": 1000}


def scene_split(split: str, n: int | None = None) -> VLDataset:
    """The first ``n`` scenes of a ``scenes`` split (scene i depends only on the split and i, so prefixes agree)."""
    n = SCENE_SPLIT_SIZES[split] if n is None else min(n, SCENE_SPLIT_SIZES[split])
    images, labels, caps, boxes = [], [], [], []
    for i in range(n):
        scene = sample_scene(np.random.default_rng([1000 + SPLIT_SEEDS[split], i]))
        img, box = render(scene)
        images.append(img)
        labels.append(SHAPES.index(scene.kind[0]))
        caps.append(captions(scene))
        boxes.append(box)
    return VLDataset("scenes", split, _to_tensor(images), torch.tensor(labels), SHAPES, caps, boxes)


def _scenes(split: str) -> VLDataset:
    return scene_split(split)


def _objects(
    nouns: tuple[str, ...], name: str, per_class: dict[str, int], salt: int, noise: float
) -> Callable[[str], VLDataset]:
    def load(split: str) -> VLDataset:
        kinds = [LEXICON[n] for n in nouns]
        ds = _scene_dataset(name, split, kinds, per_class[split], noise, salt + SPLIT_SEEDS[split])
        ds.classnames = nouns
        return ds

    return load


@functools.lru_cache(maxsize=1)
def _sk_digits() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    return d.images.astype(np.float32) / 16.0, d.target.astype(np.int64)


def _digits(split: str) -> VLDataset:
    x, y = _sk_digits()
    perm = np.random.default_rng(0).permutation(len(y))
    idx = perm[297:] if split == "train" else perm[:297]
    img = torch.from_numpy(x[idx]).repeat_interleave(4, 1).repeat_interleave(4, 2)  # 8×8 → 32×32, nearest
    img = img.unsqueeze(1).expand(-1, 3, -1, -1).contiguous()
    caps = [
        [f"a photo of the number {DIGIT_WORDS[c]}.", f"the digit {DIGIT_WORDS[c]}.", f"a handwritten {DIGIT_WORDS[c]}."]
        for c in y[idx]
    ]
    return VLDataset("digits", split, img, torch.from_numpy(y[idx]), DIGIT_WORDS, caps)


def _photos(split: str) -> VLDataset:
    from sklearn.datasets import load_sample_images

    photos = load_sample_images().images  # china.jpg (a temple), flower.jpg
    rng = np.random.default_rng(2000 + SPLIT_SEEDS[split])
    n = {"train": 200, "test": 50}[split]
    images, labels, caps = [], [], []
    for label, photo in enumerate(photos):
        h, w = photo.shape[:2]
        lo, hi = (0, int(w * 0.7)) if split == "train" else (int(w * 0.7), w)  # disjoint column ranges
        for _ in range(n):
            s = int(rng.integers(64, 129))
            x0 = int(rng.integers(lo, max(lo + 1, hi - s)))
            y0 = int(rng.integers(0, h - s))
            crop = torch.from_numpy(photo[y0 : y0 + s, x0 : x0 + s].astype(np.float32) / 255.0).permute(2, 0, 1)
            images.append(torch.nn.functional.interpolate(crop[None], size=(32, 32), mode="area")[0])
            labels.append(label)
            name = PHOTO_CLASSES[label]
            caps.append([f"a photo of a {name}.", f"a crop of a photo of a {name}."])
    return VLDataset("photos", split, torch.stack(images), torch.tensor(labels), PHOTO_CLASSES, caps)


def _examples(split: str) -> VLDataset:
    from PIL import Image

    from core.config import get_settings

    folder = Path(get_settings().data_dir) / "rf_edit_examples" / "source"
    if not folder.is_dir():
        raise FileNotFoundError(f"the example photos are not at {folder} (the shared data folder is absent)")
    names = tuple(EXAMPLE_CLASSES.values())
    images, labels, caps = [], [], []
    for i, (fname, cls) in enumerate(EXAMPLE_CLASSES.items()):
        with Image.open(folder / fname) as im:
            im = im.convert("RGB")
            side = min(im.size)
            left, top = (im.width - side) // 2, (im.height - side) // 2
            im = im.crop((left, top, left + side, top + side)).resize((32, 32), Image.BICUBIC)
            images.append(np.asarray(im, dtype=np.float32) / 255.0)
        labels.append(i)
        caps.append([f"a photo of {article(cls)} {cls}."])
    return VLDataset("examples", split, _to_tensor(images), torch.tensor(labels), names, caps)


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    description: str
    splits: tuple[str, ...]
    loader: Callable[[str], VLDataset]
    cached: bool = False


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in (
        DatasetInfo(
            "scenes", "Procedural captioned scenes with boxes (shape labels).", ("train", "val", "test"), _scenes, True
        ),
        DatasetInfo(
            "objects",
            "One lexicon object per image, labelled by its noun (48 classes).",
            ("train", "test"),
            _objects(tuple(LEXICON), "objects", {"train": 24, "test": 30}, 3000, 0.05),
            True,
        ),
        DatasetInfo(
            "objects20",
            "20 noun classes for base-to-new tuning (ids 0-9 base, 10-19 new), rendered with heavy pixel noise.",
            ("train", "test"),
            _objects(OBJECTS20, "objects20", {"train": 32, "test": 50}, 4000, 0.12),
            True,
        ),
        DatasetInfo("digits", "scikit-learn digits upsampled to 32×32 (real).", ("train", "test"), _digits),
        DatasetInfo("photos", "Crops of scikit-learn's sample photos (real).", ("train", "test"), _photos),
        DatasetInfo("examples", "The repo's example photos (shared data).", ("test",), _examples),
    )
}


def _cache_file(name: str, split: str) -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "vlm" / "data" / f"{name}-{split}-v{CACHE_VERSION}.pt"


@locked_cache(maxsize=16)
def load_dataset(name: str, split: str) -> VLDataset:
    """The named dataset's split (cached in memory, and on disk for rendered ones)."""
    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    info = DATASETS[name]
    if split not in info.splits:
        raise ValueError(f"dataset {name!r} has splits {info.splits}, not {split!r}")
    if not info.cached:
        return info.loader(split)
    path = _cache_file(name, split)
    if path.is_file():
        blob = torch.load(path, weights_only=False)
        return VLDataset(**blob)
    ds = info.loader(split)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".tmp{os.getpid()}")  # per process: concurrent workers never share a temporary file
    torch.save(
        {k: getattr(ds, k) for k in ("name", "split", "images", "labels", "classnames", "captions", "boxes", "meta")},
        tmp,
    )
    tmp.replace(path)
    return ds


def wordnet_lemmas(pos: tuple[str, ...] = ("noun",), data_dir: Path | None = None) -> list[str]:
    """Unique lower-cased WordNet lemmas of ``shared/data/dor_wordnet_vocab`` (nouns by default), file order."""
    if data_dir is None:
        from core.config import get_settings

        data_dir = Path(get_settings().data_dir)
    folder = Path(data_dir) / "dor_wordnet_vocab"
    files = sorted(p for p in folder.glob("*.txt") if p.name.split(".")[0] in pos)
    if not files:
        raise FileNotFoundError(f"no WordNet word lists for {pos} in {folder}")
    seen: dict[str, None] = {}
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            w = line.strip().lower().replace("_", " ")
            if w:
                seen.setdefault(w, None)
    return list(seen)


def vocabulary_texts(*, wordnet: bool = True) -> list[str]:
    """Every text the tiny CLIP's tokenizer must cover: caption grammar, class names, templates, WordNet."""
    from methods.vlm.render import caption_words
    from methods.vlm.zeroshot import TEMPLATES

    texts = sorted(caption_words()) + list(DIGIT_WORDS) + list(PHOTO_CLASSES) + list(EXAMPLE_CLASSES.values())
    texts += ["the number", "the digit", "a handwritten", "a crop of a photo of a"] + [t.format("") for t in TEMPLATES]
    if wordnet:
        texts += wordnet_lemmas(("noun", "adj"))
    return texts
