"""Configuration of LMS3 (spec ``lms3.md`` §3) and the CPU experiment presets (§6).

Notation follows the spec: a pool ``D`` of demonstrations ``X``, a query ``q``,
representations ``x``, the last decoder layer's projections ``W_Q``, ``W_K``
(GQA-expanded to ``W̃_K``) and ``W_V``, and ``P`` the LLM-oriented projection.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

RepresentationMode = Literal["reference", "last_token", "eos_appended"]
RepresentationLayer = Literal["final_norm_output", "last_layer_attn_input"]
Orientation = Literal["reference", "attention"]
DatasetName = Literal["gsm8k", "mawps", "math"]

MODES: tuple[RepresentationMode, ...] = ("reference", "last_token", "eos_appended")
LAYERS: tuple[RepresentationLayer, ...] = ("final_norm_output", "last_layer_attn_input")
ORIENTATIONS: tuple[Orientation, ...] = ("reference", "attention")
DATASETS: tuple[DatasetName, ...] = ("gsm8k", "mawps", "math")


@dataclass(frozen=True)
class RepresentationConfig:
    """How a problem becomes the vector ``x`` (spec §3.1) and which ``P`` is used (§3.3).

    Attributes:
        mode: ``"reference"`` (default; right-padded to ``max_length`` with EOS and the
            state at the last position), ``"last_token"`` (last real token, no padding) or
            ``"eos_appended"`` (one EOS appended, its state).
        layer: ``"final_norm_output"`` (default, ``hidden_states[-1]``) or
            ``"last_layer_attn_input"`` (``input_layernorm`` of the last layer applied to
            ``hidden_states[-2]``, the input the projections actually see).
        orientation: ``"reference"`` uses ``P = W̃_K W_Q`` (the code); ``"attention"``
            uses ``P = W̃_Kᵀ W_Q`` (the attention logit).
        max_length: truncation length in tokens (128 in the reference).
    """

    mode: RepresentationMode = "reference"
    layer: RepresentationLayer = "final_norm_output"
    orientation: Orientation = "reference"
    max_length: int = 128

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown representation mode {self.mode!r}; one of {MODES}")
        if self.layer not in LAYERS:
            raise ValueError(f"unknown representation layer {self.layer!r}; one of {LAYERS}")
        if self.orientation not in ORIENTATIONS:
            raise ValueError(f"unknown projection orientation {self.orientation!r}; one of {ORIENTATIONS}")
        if not 2 <= self.max_length <= 4096:
            raise ValueError("max_length must be in [2, 4096]")


@dataclass(frozen=True)
class SelectionConfig:
    """Algorithm 1 of the paper (spec §3.4).

    Attributes:
        k: demonstrations picked by lowest Score.
        l: rejection fraction; ``λ = max(int(l·|D|), min_lambda)``.
        min_lambda: lower bound on λ (0 = reference behaviour, which rejects every
            query when ``l·|D| < 1``; set 1 for small pools).
    """

    k: int = 1
    l: float = 0.01  # noqa: E741 - the paper's symbol
    min_lambda: int = 0

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError("k must be >= 1")
        if not 0.0 <= self.l <= 1.0:
            raise ValueError("l must be in [0, 1]")
        if self.min_lambda < 0:
            raise ValueError("min_lambda must be >= 0")


@dataclass(frozen=True)
class DatasetSizes:
    """Pool and query sizes of one dataset in the experiment (spec §6.1 item 2).

    ``pool`` is the pool size (per subject for MATH; ``None`` = the full train split),
    ``queries`` the queries used for selection statistics (per subject for MATH),
    ``nll_queries`` the first queries scored by gold NLL, ``acc_queries`` the first
    queries decoded for accuracy, ``theory_queries × theory_demos`` the theory check.
    ``all_modes`` indexes every representation mode and layer for the query-dependence
    table (else the reference one only); ``min_lambda`` overrides the experiment's.
    """

    pool: int | None
    queries: int
    nll_queries: int
    acc_queries: int
    theory_queries: int
    theory_demos: int
    max_new_tokens: int
    all_modes: bool = True
    min_lambda: int | None = None


@dataclass(frozen=True)
class ExperimentConfig:
    """The §6 experiment: sizes per dataset, seeds and the selection settings."""

    name: str
    sizes: dict[str, DatasetSizes]
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    seed: int = 0
    bootstrap: int = 2000
    batch_size: int = 8
    datasets: tuple[str, ...] = DATASETS

    def with_datasets(self, names: tuple[str, ...]) -> ExperimentConfig:
        unknown = set(names) - set(DATASETS)
        if unknown:
            raise ValueError(f"unknown datasets {sorted(unknown)}")
        return replace(self, datasets=tuple(names))

    def with_limits(
        self,
        *,
        accuracy: bool = True,
        all_modes: bool = True,
        nll_queries: int | None = None,
        theory_queries: int | None = None,
    ) -> ExperimentConfig:
        """The same preset with accuracy decoding off, reference-only indexing, or fewer NLL / theory queries.

        Returns ``self`` unchanged when nothing is limited, so the preset stays the default.
        """
        if accuracy and all_modes and nll_queries is None and theory_queries is None:
            return self
        sizes = {
            k: replace(
                v,
                acc_queries=v.acc_queries if accuracy else 0,
                all_modes=v.all_modes and all_modes,
                nll_queries=v.nll_queries if nll_queries is None else min(v.nll_queries, nll_queries),
                theory_queries=v.theory_queries if theory_queries is None else min(v.theory_queries, theory_queries),
            )
            for k, v in self.sizes.items()
        }
        return replace(self, sizes=sizes)

    @property
    def limited(self) -> list[str]:
        """How this config departs from its named preset (empty = the preset as written)."""
        base = PRESETS.get(self.name)
        if base is None:
            return []
        out = []
        for k in self.datasets:
            a, b = self.sizes[k], base.sizes[k]
            if a.acc_queries != b.acc_queries:
                out.append(f"{k}: accuracy decoding skipped")
            if a.all_modes != b.all_modes:
                out.append(f"{k}: reference representation only in the query-dependence table")
            if a.nll_queries != b.nll_queries:
                out.append(f"{k}: {a.nll_queries} of {b.nll_queries} NLL queries")
            if a.theory_queries != b.theory_queries:
                out.append(f"{k}: {a.theory_queries} of {b.theory_queries} theory-check queries")
        if tuple(self.datasets) != tuple(base.datasets):
            out.append("datasets: " + ", ".join(self.datasets) + " of " + ", ".join(base.datasets))
        return out


PRESETS: dict[str, ExperimentConfig] = {
    # The spec's CPU default sizes (§6.1 item 2): hours on 2 shared cores.
    "spec_cpu": ExperimentConfig(
        name="spec_cpu",
        sizes={
            "gsm8k": DatasetSizes(
                pool=2000,
                queries=100,
                nll_queries=100,
                acc_queries=50,
                theory_queries=30,
                theory_demos=20,
                max_new_tokens=192,
            ),
            "mawps": DatasetSizes(
                pool=None,
                queries=100,
                nll_queries=100,
                acc_queries=100,
                theory_queries=30,
                theory_demos=20,
                max_new_tokens=24,
            ),
            "math": DatasetSizes(
                pool=300,
                queries=20,
                nll_queries=20,
                acc_queries=0,
                theory_queries=30,
                theory_demos=20,
                max_new_tokens=0,
            ),
        },
    ),
    # What `paperworks reproduce lms3` runs by default: the same protocol shrunk to
    # ~130k forward tokens (~10 min on 2 otherwise idle cores; MAWPS prompts are 3-4x
    # cheaper than GSM8K/MATH ones, so MAWPS gets most of the NLL budget). MATH pools
    # of 10 per subject give λ = int(0.1) = 0, which rejects everything: min_lambda = 1.
    "cpu_small": ExperimentConfig(
        name="cpu_small",
        sizes={
            "gsm8k": DatasetSizes(
                pool=100, queries=30, nll_queries=6, acc_queries=0, theory_queries=4, theory_demos=4, max_new_tokens=192
            ),
            "mawps": DatasetSizes(
                pool=200,
                queries=60,
                nll_queries=24,
                acc_queries=10,
                theory_queries=8,
                theory_demos=5,
                max_new_tokens=24,
            ),
            "math": DatasetSizes(
                pool=10,
                queries=1,
                nll_queries=1,
                acc_queries=0,
                theory_queries=4,
                theory_demos=3,
                max_new_tokens=0,
                all_modes=False,
                min_lambda=1,
            ),
        },
        selection=SelectionConfig(k=1, l=0.01, min_lambda=0),
    ),
    # A seconds-long run for tests.
    "tiny": ExperimentConfig(
        name="tiny",
        sizes={
            "gsm8k": DatasetSizes(
                pool=20, queries=3, nll_queries=2, acc_queries=1, theory_queries=2, theory_demos=3, max_new_tokens=8
            ),
            "mawps": DatasetSizes(
                pool=20, queries=3, nll_queries=2, acc_queries=2, theory_queries=2, theory_demos=3, max_new_tokens=8
            ),
            "math": DatasetSizes(
                pool=4,
                queries=1,
                nll_queries=1,
                acc_queries=0,
                theory_queries=2,
                theory_demos=3,
                max_new_tokens=0,
                all_modes=False,
                min_lambda=1,
            ),
        },
        bootstrap=200,
    ),
}
