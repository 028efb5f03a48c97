"""Spec §7: the demo sampler never includes the test item, mixes variants 3:2 / 2:3, and shrinks to fit."""

import random

from methods.llm_eval.tokens import words_counter
from methods.medcog.data import load_task, variants
from methods.medcog.prompts import build_prompt, sample_demos


def test_demos_exclude_the_test_idx_and_mix_variants(data_dir):
    pool = load_task("medqa", "SV")
    for seed in range(40):
        test_idx = pool[seed][0]
        d = sample_demos(pool, test_idx, 5, "SV", random.Random(seed))
        assert test_idx not in d.idx and len(d.idx) == 5
        assert sorted(d.variant) in ([0, 0, 0, 1, 1], [0, 0, 1, 1, 1])
        assert d.text.count("\nAnswer: true\n\n") == d.variant.count(0)


def test_mcq_prompt_format_and_the_budget_rule(data_dir):
    pool = load_task("medqa", "MCQ")
    item = pool[3]
    test = variants("MCQ", item)[0].prompt
    fp = build_prompt(pool, item[0], test, "MCQ", rng=random.Random(0), count=words_counter)
    assert fp.text.endswith(test + "\nAnswer:") and fp.text.count("\nAnswer: ") == 5
    tight = build_prompt(pool, item[0], test, "MCQ", rng=random.Random(0), count=words_counter, budget=900)
    assert len(tight.demos.idx) < 5 and tight.n_tokens < 900
