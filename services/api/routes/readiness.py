"""``POST /v1/readiness``: will this job first train (or build) a model, and for about how long?

The UI asks before the click and shows the answer as a notice ("The first RF-Edit job trains its
model: about 160 s on this machine's 2 CPU cores; later jobs load it from the cache."). Each check
reads the cache folder the job itself would read (the same function computes the path), so the
answer is the job's own: a folder with weights means "loads", none means "trains first".

The durations are wall times measured on this project's 2-core CPU machine (see each entry's
``measured``); where only a related model was timed, the entry says it is an estimate.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel, Field

from core.jobs.registry import InvalidParams, UnknownMethod, get_method
from services.api.deps import ApiKeyDep

log = logging.getLogger(__name__)
router = APIRouter(tags=["methods"])


@dataclass(frozen=True)
class Warmup:
    """A model a job builds on first use: where its cache entry lives and how long building it takes."""

    what: str  # "the digits RF model"
    folder: Path  # the cache entry the job reads
    marker: str  # the file that exists once the model is cached
    seconds: int | None  # wall time of the build on this machine's 2 CPU cores (None: not measured)
    measured: str  # where that number comes from

    @property
    def cached(self) -> bool:
        return (self.folder / self.marker).is_file()


# wall times of first builds, measured on this project's machine (2 shared CPU cores)
_RF_SECONDS = {
    "digits": (160, "the first RF-Edit job from the web UI (issue #47)"),
    "photo": (120, "estimated from the digits model's 160 s (600 vs 800 training steps)"),
    "digits_long": (640, "estimated from the digits model's 160 s (3200 vs 800 training steps)"),
    "tiny": (26, "train.json of a cached tiny model"),
}
_CLIP_SECONDS = {
    "default": (105, "the first VLM zero-shot job from the web UI (issue #47)"),
    "test": (1, "train.json of a cached test CLIP"),
}
_FM_SECONDS = {
    "cpu": (222, "docs/results/fourier_mamba.md (zigzag, shared 2-core CPU)"),
    "spec": (600, "spec §6: 5-10 min on 2 idle cores"),
}
_VLP_SECONDS = {"default": (406, "docs/results/double_filter.md (ITC + ITM pretraining)")}


def _rf(params: Any) -> Warmup:
    from methods.rf_solver.checkpoints import model_dir
    from methods.rf_solver.config import PRESETS
    from methods.rf_solver.experiment import preset_for_labels

    labels = [params.source_label, params.target_label] if hasattr(params, "target_label") else [params.label]
    name = preset_for_labels(params.model, *labels)
    secs, src = _RF_SECONDS.get(name, (None, "not measured"))
    return Warmup(f"the {name} RF model", model_dir(PRESETS[name]), "model.safetensors", secs, src)


def _clip(attr: str) -> Callable[[Any], Warmup]:
    def check(params: Any) -> Warmup:
        from methods.vlm.cache import has_wordnet, model_dir
        from methods.vlm.config import get_preset

        preset = get_preset(getattr(params, attr))
        wordnet = preset.model.wordnet and has_wordnet()
        folder = model_dir(preset, wordnet=wordnet or not preset.model.wordnet)
        secs, src = _CLIP_SECONDS.get(preset.name, (None, "not measured"))
        return Warmup(f"the {preset.name} tiny CLIP", folder, "model.safetensors", secs, src)

    return check


def _fourier_mamba(params: Any) -> Warmup:
    from methods.fourier_mamba.experiment import checkpoint_path

    path = checkpoint_path(params.preset, params.scan_order)
    secs, src = _FM_SECONDS.get(params.preset, (None, "not measured"))
    return Warmup(f"the {params.preset}/{params.scan_order} FourierMamba model", path.parent, path.name, secs, src)


def _vlp(params: Any) -> Warmup | None:
    if getattr(params, "checkpoint", None):
        return None  # a local checkpoint: loaded, never trained
    from methods.double_filter.config import BACKBONES
    from methods.double_filter.pretrain import cache_dir

    secs, src = _VLP_SECONDS.get(params.backbone, (None, "not measured"))
    return Warmup(f"the {params.backbone} two-stream VLP", cache_dir(BACKBONES[params.backbone]), "model.pt", secs, src)


CHECKS: dict[str, Callable[[Any], Warmup | None]] = {
    "rf.edit": _rf,
    "rf.reconstruct": _rf,
    "vlm.zeroshot": _clip("preset"),
    "vlm.train": _clip("preset"),
    "dor.tune": _clip("backbone"),
    "lada.xtail": _clip("backbone"),
    "gmail.align": _clip("backbone"),
    "fourier_mamba.derain": _fourier_mamba,
    "double_filter.patches": _vlp,
    "double_filter.experiment": _vlp,
}
"""Jobs that build a model on first use, and how to find that model's cache entry from their params."""


class ReadinessRequest(BaseModel):
    method: str = Field(..., max_length=100, description="A registered job type.")
    params: dict[str, Any] = Field(default_factory=dict, description="The params the job would be submitted with.")


class Readiness(BaseModel):
    method: str
    ready: bool = Field(description="False when the job will first train or build a model.")
    phase: str | None = Field(None, description="'train' when a model is built first, else None.")
    model: str | None = Field(None, description="Which model.")
    seconds: int | None = Field(None, description="About how long building it takes here (None: not measured).")
    measured: str | None = Field(None, description="Where that duration comes from.")
    notice: str | None = Field(None, description="One sentence for the user, shown before the click.")


def notice(method: str, w: Warmup) -> str:
    """The sentence the UI shows before a job that first builds ``w``."""
    took = f"about {w.seconds} s on this machine's 2 CPU cores" if w.seconds else "several minutes on a CPU"
    return (
        f"This {method} job first trains {w.what} ({took}); its progress shows that phase, "
        "and later jobs load the model from the cache."
    )


@router.post("/readiness", response_model=Readiness)
def readiness(body: ReadinessRequest, _: ApiKeyDep) -> Readiness:
    """Whether ``method`` with ``params`` will first train a model (and about how long that takes), or is ready.

    Params that do not validate are answered as ready (the submission itself will say what is wrong)."""
    try:
        spec = get_method(body.method)
    except UnknownMethod as exc:
        from fastapi import HTTPException

        raise HTTPException(404, str(exc)) from None
    check = CHECKS.get(spec.name)
    if check is None:
        return Readiness(method=spec.name, ready=True)
    try:
        w = check(spec.validate(body.params))
    except (InvalidParams, ValueError, KeyError):
        return Readiness(method=spec.name, ready=True)
    if w is None or w.cached:
        return Readiness(method=spec.name, ready=True, model=None if w is None else w.what)
    return Readiness(
        method=spec.name,
        ready=False,
        phase="train",
        model=w.what,
        seconds=w.seconds,
        measured=w.measured,
        notice=notice(spec.name, w),
    )
