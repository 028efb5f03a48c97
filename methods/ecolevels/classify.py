"""The level classifier (spec §3.2): a decision list over probe metadata — the rules decide, never an LLM.

1. observes representations / token probabilities with no generated decision → L1 (Representation);
2. else the model is asked directly about a group or its own beliefs → L3 (Explicit attitude);
3. else it produces an outcome or content for a specific individual in a task → L4 (Behaviour);
4. else (indirect pairing of group and attribute cues) → L2 (Association).

:func:`extract_metadata` optionally asks a model to fill the metadata fields from a free-text probe
description (JSON-constrained); the result then goes through the same rules.
"""

from __future__ import annotations

from typing import Literal

from methods.ecolevels.registry import ProbeMetadata

Level = Literal["L1", "L2", "L3", "L4"]
LEVEL_NAMES = {"L1": "Representation", "L2": "Association", "L3": "Explicit attitude", "L4": "Behaviour"}
LEVEL_RANK = {"L1": 1, "L2": 2, "L3": 3, "L4": 4}


def classify(meta: ProbeMetadata) -> Level:
    """The probe's level by the §3.2 decision list (``likelihood`` comparisons of sentences are L2)."""
    if meta.observes == "representation":
        return "L1"
    if meta.asks_about_group:
        return "L3"
    if meta.individual_target:
        return "L4"
    return "L2"


def rule_fired(meta: ProbeMetadata) -> str:
    """Which rule decided (for the report)."""
    if meta.observes == "representation":
        return "1: observes representations, no generated decision"
    if meta.asks_about_group:
        return "2: asks directly about a group"
    if meta.individual_target:
        return "3: outcome for a specific individual in a task"
    return "4: indirect group–attribute pairing"


EXTRACT_PROMPT = (
    "Read this description of a test for social bias in language models and fill in its fields as JSON.\n"
    "observes: representation (embeddings/hidden states), likelihood (compares token probabilities) or "
    "generation (reads generated text).\nasks_about_group: true if the model is asked directly about a social "
    "group or its own beliefs.\nindividual_target: true if the model decides about or writes about one specific "
    "person inside a task.\ngroup_signal: explicit (group named), name (a person's name) or implicit "
    "(pronouns/context).\noutput_format: forced_choice, score or free_text.\n\nDescription: {description}"
)


def extract_metadata(description: str, *, model: str | None = None) -> ProbeMetadata:
    """Ask ``model`` for the §3.2 fields of a free-text probe description (JSON schema constrained)."""
    import json

    from core.llm import complete

    schema = {
        "type": "object",
        "properties": {
            "observes": {"enum": ["representation", "likelihood", "generation"]},
            "asks_about_group": {"type": "boolean"},
            "individual_target": {"type": "boolean"},
            "group_signal": {"enum": ["explicit", "name", "implicit"]},
            "output_format": {"enum": ["forced_choice", "score", "free_text"]},
        },
        "required": ["observes", "asks_about_group", "individual_target", "group_signal", "output_format"],
    }
    out = complete(
        EXTRACT_PROMPT.format(description=description[:2000]),
        model=model,
        max_tokens=120,
        response_format={"type": "json_schema", "json_schema": {"name": "probe", "schema": schema}},
        tag="ecolevels.classify",
    )
    text = out.text.strip()
    start, end = text.find("{"), text.rfind("}")
    data = json.loads(text[start : end + 1])
    return ProbeMetadata(task_context=description[:300], **{k: data[k] for k in schema["required"]})
