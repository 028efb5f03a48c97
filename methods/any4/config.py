"""Quantization settings (spec §3, §6.2) and the named format presets.

A format name is a family plus a bit width: ``int4``/``int3``/``int2`` (asymmetric
min–max, §3.5), ``nf4`` and ``fp4`` (bitsandbytes grids, absmax per block, §3.5),
``any4``/``any3``/``any2`` (per-row learned LUT, §3.2–3.4).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

# the formats `paperworks reproduce any4` compares by default (format[:calibration])
DEFAULT_VARIANTS = ("int4", "fp4", "nf4", "any4:none", "any4:offline", "any4:online", "any3:offline", "any2:offline")

Calibration = Literal["none", "offline", "online"]
Init = Literal["kmeans++", "random", "int", "nf4"]

FORMATS = ("int4", "int3", "int2", "nf4", "fp4", "any4", "any3", "any2")
_FORMAT_RE = re.compile(r"^(int|any)([234])$|^(nf4|fp4)$")


def parse_format(fmt: str) -> tuple[str, int]:
    """``"any3"`` → ``("any", 3)``; ``"nf4"`` → ``("nf4", 4)``."""
    m = _FORMAT_RE.match(fmt)
    if not m:
        raise ValueError(f"unknown format {fmt!r}; known: {', '.join(FORMATS)}")
    if m.group(3):
        return m.group(3), 4
    return m.group(1), int(m.group(2))


@dataclass(frozen=True)
class QuantConfig:
    """How to quantize every ``nn.Linear`` of a model.

    Attributes:
        fmt: format name (see :data:`FORMATS`).
        group_size: g, along K (the reduction dim). The paper uses 128; SmolLM2's
            K = 576 forces g = 64 on this machine (§6.1).
        calibration: sample weights of the any-formats' k-means: ``none`` (all 1,
            plain k-means), ``offline`` (one fp forward pass, hooks on every layer)
            or ``online`` (before each layer, a pass through the partly quantized
            model, the reference flow of §3.3). Ignored by int/nf4/fp4.
        scale_sample_weight: multiply |x̄_k| by the group scale s_ij (§3.2 default).
        init: k-means initialization (§3.2 ablation); ``kmeans++`` is the default.
        max_iter, tol: Lloyd stops when every centroid moved less than
            ``tol·(2^b − 1)`` or after ``max_iter`` iterations (§6.2).
        skip_modules: linear layers left in full precision (matched by name or name suffix).
        seed: base seed; layer ℓ's k-means++ uses ``seed + ℓ``.
    """

    fmt: str = "any4"
    group_size: int = 64
    calibration: Calibration = "offline"
    scale_sample_weight: bool = True
    init: Init = "kmeans++"
    max_iter: int = 100
    tol: float = 1e-4
    skip_modules: tuple[str, ...] = ("lm_head",)
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        parse_format(self.fmt)
        if self.group_size < 2 or self.group_size % 2:
            raise ValueError("group_size must be an even number ≥ 2")
        if self.init == "nf4" and self.bits != 4:
            raise ValueError("the nf4 init needs 4 bits")

    @property
    def family(self) -> str:
        return parse_format(self.fmt)[0]

    @property
    def bits(self) -> int:
        return parse_format(self.fmt)[1]

    @property
    def uses_calibration(self) -> bool:
        return self.family == "any" and self.calibration != "none"

    def label(self) -> str:
        """Short human label, e.g. ``any4 (cal. online)``."""
        if self.family != "any":
            return self.fmt
        cal = {"none": "uncal.", "offline": "cal. offline", "online": "cal. online"}[self.calibration]
        return f"{self.fmt} ({cal})"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["skip_modules"] = list(self.skip_modules)
        d.pop("extra")
        return d
