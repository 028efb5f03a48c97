"""Verdict labels and per-benchmark settings (spec §3.5).

Each benchmark fixes the labels the judge may output in a *final* judgement,
how they map to the dataset's own strings, the class definitions shown to the
judge, extra planning/judging rules and the allowed actions. In a non-final
judgement "not enough information" is always offered so that the model can ask
for another round (spec §3.2).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field


class Label(str, enum.Enum):
    """The exact label strings the verdict parser matches (spec §3.5)."""

    SUPPORTED = "supported"
    NEI = "not enough information"
    REFUTED = "refuted"
    CONFLICTING = "conflicting evidence"
    CHERRY_PICKING = "cherry-picking"
    OUT_OF_CONTEXT = "out of context"
    MISCAPTIONED = "miscaptioned"
    REFUSED = "error: refused to answer"


DEFAULT_DEFINITIONS: dict[Label, str] = {
    Label.SUPPORTED: "The knowledge from the fact-check supports or at least strongly implies the Claim. "
    "Mere plausibility is not enough for this decision.",
    Label.NEI: "The fact-check does not contain sufficient information to come to a conclusion. In particular, "
    "there is substantial lack of both supporting and refuting evidence.",
    Label.REFUTED: "The knowledge from the fact-check explicitly and clearly refutes at least substantial parts "
    "if not even the whole Claim.",
    Label.CONFLICTING: "The Claim has both supporting and refuting evidence from multiple sources.",
    Label.CHERRY_PICKING: "The Claim is technically true but misleads by excluding important context. Including "
    "that context would create a significantly different impression.",
    Label.OUT_OF_CONTEXT: "The image is used out of context: it is real, but the caption or claim misrepresents "
    "where, when or what it shows.",
    Label.MISCAPTIONED: "The caption does not describe what the image actually shows.",
}


@dataclass(frozen=True)
class Benchmark:
    """What a benchmark fixes for the fact-checker."""

    name: str
    labels: tuple[Label, ...]
    to_dataset: dict[Label, str]
    from_dataset: dict[str, Label]
    allowed_actions: tuple[str, ...] | None = None  # None: every available action
    limit_per_search: int = 3
    definitions: dict[Label, str] = field(default_factory=dict)
    extra_plan_rules: str = ""
    extra_judge_rules: str = ""

    def definition(self, label: Label) -> str:
        return self.definitions.get(label) or DEFAULT_DEFINITIONS.get(label, "")

    def allowed_labels(self, *, is_final: bool) -> list[Label]:
        """Labels offered to the judge: NEI is added to a non-final judgement (spec §3.2, check 4)."""
        labels = list(self.labels)
        if not is_final and Label.NEI not in labels:
            labels.append(Label.NEI)
        return labels

    def dataset_label(self, label: Label | str) -> str:
        """The dataset string for a predicted label (refusals stay as the refusal string)."""
        label = Label(label)
        return self.to_dataset.get(label, label.value)

    def gold_label(self, raw: str) -> Label:
        """The model-side label for a gold dataset string."""
        key = raw.strip()
        if key in self.from_dataset:
            return self.from_dataset[key]
        low = {k.lower(): v for k, v in self.from_dataset.items()}
        if key.lower() in low:
            return low[key.lower()]
        raise KeyError(f"{self.name}: unknown gold label {raw!r}")


_AVERITEC_CONFLICT = "Conflicting Evidence/Cherrypicking"

BENCHMARKS: dict[str, Benchmark] = {
    "default": Benchmark(
        name="default",
        labels=(Label.SUPPORTED, Label.NEI, Label.REFUTED),
        to_dataset={},
        from_dataset={"supported": Label.SUPPORTED, "not enough information": Label.NEI, "refuted": Label.REFUTED},
    ),
    "averitec": Benchmark(
        name="averitec",
        labels=(Label.SUPPORTED, Label.REFUTED, Label.NEI, Label.CONFLICTING),
        to_dataset={
            Label.SUPPORTED: "Supported",
            Label.REFUTED: "Refuted",
            Label.NEI: "Not Enough Evidence",
            Label.CONFLICTING: _AVERITEC_CONFLICT,
            Label.CHERRY_PICKING: _AVERITEC_CONFLICT,
        },
        from_dataset={
            "Supported": Label.SUPPORTED,
            "Refuted": Label.REFUTED,
            "Not Enough Evidence": Label.NEI,
            _AVERITEC_CONFLICT: Label.CONFLICTING,
        },
        allowed_actions=("web_search",),
        limit_per_search=5,
        definitions={
            Label.CONFLICTING: "The Claim has both supporting and refuting evidence, or it is "
            "technically true but misleads by leaving out important context "
            "(cherry-picking)."
        },
        extra_judge_rules="The absence of evidence can itself be evidence: if coverage would be expected for a "
        "true claim but none is found, the claim is likely refuted.",
    ),
    "mocheg": Benchmark(
        name="mocheg",
        labels=(Label.SUPPORTED, Label.REFUTED, Label.NEI),
        to_dataset={Label.SUPPORTED: "supported", Label.REFUTED: "refuted", Label.NEI: "NEI"},
        from_dataset={"supported": Label.SUPPORTED, "refuted": Label.REFUTED, "NEI": Label.NEI},
        extra_judge_rules="Do not argue from ignorance: if evidence is missing, the answer is not enough "
        "information, not refuted.",
    ),
    "verite": Benchmark(
        name="verite",
        labels=(Label.SUPPORTED, Label.OUT_OF_CONTEXT),
        to_dataset={Label.SUPPORTED: "true", Label.OUT_OF_CONTEXT: "out-of-context"},
        from_dataset={
            "true": Label.SUPPORTED,
            "miscaptioned": Label.OUT_OF_CONTEXT,
            "out-of-context": Label.OUT_OF_CONTEXT,
        },
        extra_plan_rules="Weigh both modalities: compare the image with its caption and run one image_search.",
        extra_judge_rules="Judge the caption first, then whether image and text belong together.",
    ),
    "claimreview": Benchmark(
        name="claimreview",
        labels=(Label.SUPPORTED, Label.REFUTED, Label.CHERRY_PICKING, Label.NEI),
        to_dataset={
            Label.SUPPORTED: "supported",
            Label.REFUTED: "refuted",
            Label.CHERRY_PICKING: "misleading",
            Label.NEI: "not enough information",
        },
        from_dataset={
            "supported": Label.SUPPORTED,
            "refuted": Label.REFUTED,
            "misleading": Label.CHERRY_PICKING,
            "not enough information": Label.NEI,
        },
        extra_plan_rules="Always suggest the use of geolocation!",
    ),
}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ValueError(f"unknown benchmark {name!r}; choose one of {sorted(BENCHMARKS)}") from None


def normalize(text: str) -> str:
    """Lower-case and drop non-word characters (keeps spaces), as the judge parser does."""
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def match_label(text: str, allowed: list[Label]) -> Label | None:
    """The allowed label whose normalized value equals the normalized ``text``."""
    norm = normalize(text)
    for label in allowed:
        if normalize(label.value) == norm:
            return label
    return None
