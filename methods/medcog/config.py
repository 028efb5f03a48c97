"""Presets of ``paperworks reproduce medcog`` (spec §6): the sizes shrink, the protocol does not."""

from __future__ import annotations

from methods.medcog.cases import DISEASES

LOCAL_MODELS = ["local/smollm2-135m-instruct", "local/qwen2.5-coder-1.5b-instruct"]

PRESETS: dict[str, dict] = {
    # the results run (~5 min per model on 2 idle cores with the 135M model): 1 MedQA item x 4 tasks x 5
    # repeats (35 few-shot generations of ~1.6k prompt tokens) + 2 diseases x 1 synthetic case
    "quick": {
        "datasets": ["medqa"],
        "n_items": 1,
        "repeats": 5,
        "diseases": list(DISEASES[:2]),
        "cases_per_disease": 1,
        "seeds": [2024],
        "max_turns": 30,
    },
    # the spec's CPU scale (§6): 100 MedQA items x 4 tasks x 5 repeats, 10 diseases x 5 cases (hours)
    "spec": {
        "datasets": ["medqa", "medmcqa"],
        "n_items": 100,
        "repeats": 5,
        "diseases": list(DISEASES),
        "cases_per_disease": 5,
        "seeds": [2024],
        "max_turns": 30,
    },
    # tests: scripted models only
    "tiny": {
        "datasets": ["medqa"],
        "n_items": 1,
        "repeats": 2,
        "diseases": list(DISEASES[:1]),
        "cases_per_disease": 1,
        "seeds": [2024],
        "max_turns": 8,
    },
}
