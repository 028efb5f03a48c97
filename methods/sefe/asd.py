"""ASD — Answer Style Diversification (spec §3.2), by rule-based templates.

A fraction ``X`` of a task's training samples is rewritten into the four styles that are *not*
the task's native one, split equally (X/4 % each); the rest stay native. YN candidates are the
ground truth for half of the YN samples (→ "Yes") and another class name otherwise (→ "No");
MCQ options are the ground truth plus three distractors (other class names, then the task's
extra distractor names), with the correct letter cycled uniformly over A–D; the brief (BE, one
feature, ~20 words) and detailed (DE, three features, ~50 words) explanations are templates
citing the sample's most discriminative features (largest |z-score|). Test sets are never
transformed (:func:`eval_examples`).

The paper asks an MLLM to fill the prompts copied to ``shared/data/sefe_coin_asd_prompts``;
SmolLM2-135M cannot reliably follow those JSON prompts, so the rules above stand in (spec §5/§6
allow either). Results are deterministic in ``(task, seed, X, n_train)`` and cached in-process.
"""

from __future__ import annotations

import functools

import numpy as np

from methods.sefe.tasks import STYLES, Example, TaskData, load_task, native_example, render


def style_counts(n: int, x_percent: float, native: str) -> dict[str, int]:
    """How many of ``n`` samples get each style: ``round(n·X/100)`` split equally over the 4 non-native
    styles (the remainder goes one each to the first styles), the rest native."""
    n_asd = int(round(n * x_percent / 100.0))
    others = [s for s in STYLES if s != native]
    base, rem = divmod(n_asd, len(others))
    counts = {s: base + (1 if k < rem else 0) for k, s in enumerate(others)}
    counts[native] = n - n_asd
    return counts


def subsample(data: TaskData, n: int, seed: int) -> np.ndarray:
    """``n`` training indices drawn without replacement (all of them when ``n`` ≥ the split)."""
    rng = np.random.default_rng(seed)
    idx = data.train_idx.copy()
    rng.shuffle(idx)
    return idx[: min(n, len(idx))]


@functools.lru_cache(maxsize=64)
def _train_examples(name: str, n_train: int, seed: int, x_percent: float) -> tuple[Example, ...]:
    data = load_task(name)
    idx = subsample(data, n_train, seed)
    rng = np.random.default_rng([seed, 7919, int(x_percent * 100)])
    counts = style_counts(len(idx), x_percent, data.defn.native)
    styles = [s for s in STYLES for _ in range(counts[s])]
    rng.shuffle(styles)
    out: list[Example] = []
    n_yn = counts["YN"] if data.defn.native != "YN" else 0
    yn_truth = list(rng.permutation([True] * ((n_yn + 1) // 2) + [False] * (n_yn // 2)))
    n_mcq = counts["MCQ"] if data.defn.native != "MCQ" else 0
    letters = list(rng.permutation([k % 4 for k in range(n_mcq)]))
    for i, style in zip(idx, styles):
        if style == data.defn.native:
            out.append(native_example(data, int(i)))
        elif style == "YN":
            out.append(render(data, int(i), "YN", rng, transformed=True, yn_truth=bool(yn_truth.pop())))
        elif style == "MCQ":
            out.append(render(data, int(i), "MCQ", rng, transformed=True, mcq_letter=int(letters.pop())))
        else:
            out.append(render(data, int(i), style, rng, transformed=True))
    return tuple(out)


def train_examples(name: str, *, n_train: int, seed: int, x_percent: float) -> list[Example]:
    """Task ``name``'s training examples: ``n_train`` samples, ``x_percent`` % of them ASD-rewritten.

    ``x_percent = 0`` gives the plain native training set (sequential-LoRA and RegLoRA-only arms).
    """
    if not 0 <= x_percent <= 100:
        raise ValueError(f"x_percent must be in [0, 100], got {x_percent}")
    return list(_train_examples(name, int(n_train), int(seed), float(x_percent)))


@functools.lru_cache(maxsize=16)
def _test_examples(name: str, n_test: int) -> tuple[Example, ...]:
    data = load_task(name)
    idx = np.random.default_rng(12345).permutation(data.test_idx)[: min(n_test, len(data.test_idx))]
    return tuple(native_example(data, int(i)) for i in idx)


def eval_examples(name: str, *, n_test: int) -> list[Example]:
    """``n_test`` test samples (a fixed random subset of the fixed split, the same for every seed and arm),
    always in the native style."""
    return list(_test_examples(name, int(n_test)))
