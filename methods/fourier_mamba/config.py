"""FourierMamba configurations (spec fourier_mamba §3.4, §6) and the reproducer's presets."""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any, Literal

ScanOrder = Literal["zigzag", "chebyshev", "raster"]


@dataclass(frozen=True)
class ModelConfig:
    """Shape of the U-Net. The paper's network: C = 32 or 48, 4 levels [2, 3, 3, 4], d_state 16."""

    channels: int = 16
    blocks: tuple[int, ...] = (1, 1, 2)  # encoder levels …, latent (decoder mirrors the encoder)
    refinement: int = 0
    d_state: int = 8
    expand: int = 2
    channel_d: int = 8  # width of the channel branch's tokens after the 2 → d lift
    ffn_expansion: float = 2.0
    scan_order: ScanOrder = "zigzag"
    spectrum: Literal["amp_phase", "real_imag"] = "amp_phase"
    scan_impl: Literal["auto", "reference", "chunked", "triton"] = "auto"

    @property
    def multiple(self) -> int:
        """Input sides must be multiples of this (one pixel-unshuffle per level)."""
        return 2 ** (len(self.blocks) - 1)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ModelConfig:
        d = dict(d)
        d["blocks"] = tuple(d["blocks"])
        return cls(**d)


@dataclass(frozen=True)
class TrainConfig:
    """Restormer-style recipe (§3.5): AdamW (0.9, 0.999, wd 1e-4), lr 3e-4 cosine to ~1e-6, L1 + λ·L1(|FFT|)."""

    steps: int = 600
    batch_size: int = 8
    crop: int = 64
    lr: float = 3e-4
    min_lr_ratio: float = 1e-6 / 3e-4
    weight_decay: float = 1e-4
    warmup: int = 20
    freq_weight: float = 0.1
    rain: Literal["L", "H"] = "L"
    variants: int = 4  # rainy versions of each background
    rain100l_targets: bool = True  # use the 3 Rain100L ground truths as clean backgrounds too
    seed: int = 0
    threads: int = 0
    device: Literal["auto", "cpu", "cuda"] = "auto"  # auto: CUDA when present (a gpu-queue worker)
    amp: Literal["off", "bf16"] = "off"  # bf16 autocast (core.device)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Preset:
    name: str
    model: ModelConfig
    train: TrainConfig

    def with_model(self, **kw: Any) -> Preset:
        return replace(self, model=replace(self.model, **kw))

    def with_train(self, **kw: Any) -> Preset:
        return replace(self, train=replace(self.train, **kw))


PRESETS: dict[str, Preset] = {
    # §6 as written: FourierMamba-Tiny, 64×64 crops, batch 8, ~2,000 crops (250 steps), 5–10 min on 2 idle cores.
    # lr 2e-3 instead of Restormer's 3e-4: the schedule is ~1000× shorter than the paper's
    "spec": Preset("spec", ModelConfig(), TrainConfig(steps=250, crop=64, lr=2e-3, warmup=10)),
    # the reproducer's default on a shared 2-core CPU: same network, 32×32 crops (4× cheaper), 150 steps
    "cpu": Preset("cpu", ModelConfig(), TrainConfig(steps=150, crop=32, lr=2e-3, warmup=10)),
    # tests: seconds
    "tiny": Preset(
        "tiny",
        ModelConfig(channels=8, blocks=(1, 1), d_state=4, channel_d=4),
        TrainConfig(steps=8, crop=16, batch_size=4, lr=2e-3, warmup=2, variants=1),
    ),
}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None
