"""Presets of ``paperworks reproduce ecolevels``."""

from __future__ import annotations

LOCAL_MODELS = ["local/smollm2-135m-instruct", "local/qwen2.5-coder-1.5b-instruct"]

PRESETS: dict[str, dict] = {
    # the results run: 4 probes (one per level) × 2 paraphrases × 3 seeds, 20 units each (≈ 600 short generations
    # per local model; WinoBias up to 60 distinct pairs, 40 distinct statements, the 38 résumé occupations)
    "quick": {"seeds": [0, 1, 2], "paraphrases": 2, "n_units": 20},
    # larger: 3 seeds × 2 paraphrases × 40 units
    "spec": {"seeds": [0, 1, 2], "paraphrases": 2, "n_units": 40},
    # tests
    "tiny": {"seeds": [0, 1], "paraphrases": 1, "n_units": 3},
}
