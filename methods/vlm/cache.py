"""The trained tiny CLIP as an artifact: ``<cache_dir>/vlm/tiny_clip/<preset>-<hash>/``.

The folder is a regular CLIP checkpoint folder (``CLIPModel.save_pretrained``: ``config.json`` +
``model.safetensors``) plus ``word_vocab.json`` (the tokenizer), ``preset.json`` (the architecture
and training configs it was trained with) and ``train.json`` (loss curve, seconds, evaluation),
so :func:`methods.vlm.backbone.load_backbone` loads it like any CLIP checkpoint. It is written
under a temporary name and renamed, so a crash never leaves half a model. The folder does not
depend on the device it was trained on: weights are saved from the CPU and loaded onto any device.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from pathlib import Path

from methods.vlm.backbone import WORD_VOCAB, CLIPBackbone, load_backbone
from methods.vlm.config import Preset, get_preset

log = logging.getLogger(__name__)


def has_wordnet() -> bool:
    from core.config import get_settings

    return (Path(get_settings().data_dir) / "dor_wordnet_vocab").is_dir()


def model_dir(preset: Preset, cache_dir: Path | None = None, *, wordnet: bool = True) -> Path:
    if cache_dir is None:
        from core.config import get_settings

        cache_dir = Path(get_settings().cache_dir)
    suffix = "" if wordnet else "-nowordnet"
    return Path(cache_dir) / "vlm" / "tiny_clip" / f"{preset.name}-{preset.hash()}{suffix}"


def save(backbone: CLIPBackbone, preset: Preset, folder: Path, info: dict) -> Path:
    """Write the model (its weights copied to the CPU), tokenizer, configs and training info into ``folder`` atomically."""
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}-"))
    cpu_state = {k: v.detach().cpu() for k, v in backbone.model.state_dict().items()}  # the model stays where it is
    backbone.model.save_pretrained(tmp, state_dict=cpu_state)
    backbone._tokenizer.save(tmp / WORD_VOCAB)
    (tmp / "preset.json").write_text(json.dumps(preset.to_dict(), indent=2))
    (tmp / "train.json").write_text(json.dumps(info, indent=2))
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(tmp, folder)
    return folder


def train_info(folder: Path) -> dict:
    return json.loads((Path(folder) / "train.json").read_text())


def get_tiny_clip(
    preset: Preset | str = "default",
    *,
    cache_dir: Path | None = None,
    train_if_missing: bool = True,
    retrain: bool = False,
    progress=None,
    device=None,
    amp: str = "off",
) -> tuple[CLIPBackbone, Path]:
    """The trained tiny CLIP of ``preset`` and its folder: loaded from the cache, or trained now and cached.

    The model comes back on ``device`` (``None``: the CPU); training (when the cache misses) runs
    there too, in ``amp``. The cache entry is the same whichever device trained or loads it.
    """
    from core.device import device_provenance
    from methods.vlm.train import evaluate, train

    preset = get_preset(preset) if isinstance(preset, str) else preset
    wordnet = preset.model.wordnet and has_wordnet()
    folder = model_dir(preset, cache_dir, wordnet=wordnet or not preset.model.wordnet)
    where = "cpu" if device is None else device
    if (folder / "model.safetensors").is_file() and not retrain:
        return load_backbone(folder, device=where), folder
    if not train_if_missing:
        raise FileNotFoundError(f"no trained tiny CLIP {preset.name!r} at {folder}; run `paperworks run vlm.train`")
    log.info("training the %s tiny CLIP (%d steps) into %s", preset.name, preset.train.steps, folder)
    result = train(preset, wordnet=wordnet, progress=progress, device=device, amp=amp)
    metrics = evaluate(result.backbone, include=preset.eval_sets, retrieval_n=preset.retrieval_n)
    info = {
        "losses": result.losses,
        "seconds": result.seconds,
        "vocab_size": len(result.backbone._tokenizer),
        "wordnet": wordnet,
        "eval": metrics,
        **device_provenance(result.backbone.device, amp),  # where it was trained (not part of the cache key)
    }
    save(result.backbone, preset, folder, info)
    return load_backbone(folder, device=where), folder
