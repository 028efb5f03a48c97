"""Issue #13: per-window NLL, paired bootstrap CIs over evaluation windows, and the Reading paragraph."""

import math

import numpy as np
import pytest
import torch

from methods.any4.evaluate import paired_ppl_ratio, perplexity, ppl_from_nll, window_nll


def test_window_nll_reproduces_perplexity(tiny_llama):
    windows = torch.randint(0, 96, (5, 16), generator=torch.Generator().manual_seed(0))
    nll = window_nll(tiny_llama, windows)
    assert len(nll) == 5 and all(v > 0 for v in nll)
    assert ppl_from_nll(nll, 15) == pytest.approx(perplexity(tiny_llama, windows), rel=1e-5)


def test_paired_ratio_and_its_interval():
    rng = np.random.default_rng(0)
    base = rng.uniform(500, 900, 32)  # windows differ a lot in difficulty...
    a = base + 255 * 0.01 + rng.normal(0, 0.3, 32)  # ...but a costs +0.01 nats/token on every window
    ratio, lo, hi = paired_ppl_ratio(list(a), list(base), 255)
    assert ratio == pytest.approx(math.exp(0.01), rel=1e-3)
    assert 1 < lo < ratio < hi  # resolved: pairing removes the window-to-window spread
    same = base + rng.normal(0, 0.5, 32)
    _, lo, hi = paired_ppl_ratio(list(same), list(base), 255)
    assert lo < 1 < hi  # a tie stays unresolved
    with pytest.raises(ValueError):
        paired_ppl_ratio([1.0, 2.0], [1.0], 10)


def _suite(shift: dict[str, float], n: int = 24, tokens: int = 100) -> dict:
    """Synthetic suite: each variant adds ``shift[v]`` nats/token to fp's per-window NLL (plus small noise)."""
    rng = np.random.default_rng(1)
    fp = rng.uniform(300, 500, n)
    rows = []
    for g in (64, 32):
        for v, d in shift.items():
            nll = fp + tokens * d * (1.1 if g == 64 else 1.0) + rng.normal(0, 0.05, n)
            rows.append(
                {
                    "variant": v,
                    "label": v,
                    "group_size": g,
                    "ppl": {"math": math.exp(nll.sum() / (n * tokens))},
                    "window_nll": {"math": list(nll)},
                }
            )
    return {
        "model": "synthetic",
        "eval_sets": {"math": f"{n}×{tokens + 1} tokens"},
        "fp_ppl": {"math": math.exp(fp.sum() / (n * tokens))},
        "fp_window_nll": {"math": list(fp)},
        "rows": rows,
        "notes": {"tokens_per_window": {"math": tokens}},
    }


def test_paired_rows_give_verdicts():
    from methods.any4.report import paired_rows

    shift = {
        "int4": 0.05,
        "nf4": 0.03,
        "fp4": 0.08,
        "any4:none": 0.025,
        "any4:offline": 0.02,
        "any4:online": 0.02,
        "any3:offline": 0.01,  # reversed on purpose: any3 better than any4
        "any2:offline": 0.3,
    }
    rows = {r[0]: r for r in paired_rows(_suite(shift), [64, 32], "math")}
    assert rows["nf4 < int4"][3] == "holds"
    assert rows["any4 < any3 (cal. offline)"][3] == "reversed"
    assert rows["any4 (cal. online) < nf4"][3] == "holds"
    assert rows["int4 g=32 < g=64"][3] == "holds"
    # online and offline are equal up to noise → unresolved against each other is not asked; vs uncal. it holds
    assert rows["any4 (cal. offline) < any4 (uncal.)"][3] == "holds"
    tie = {k: 0.0 for k in shift}
    verdicts = {r[3] for r in paired_rows(_suite(tie), [64, 32], "math") if "g=32" not in r[0]}
    assert verdicts == {"unresolved"}


def test_reading_counts_verdicts():
    from methods.any4.report import _reading

    clean = {"notes": {"train_log": {"val_ppl_math_16x256": 56.7, "config": {"steps": 300}}}}
    rows = [["nf4 < int4", 0.99, "[0.98, 0.995]", "holds"], ["any4 < any3", 1.0, "[0.99, 1.01]", "unresolved"]]
    text = _reading(clean, None, {"math": rows})
    assert "1 of 2 expected orderings hold" in text and "1 are unresolved" in text and "300 steps" in text
    assert "clean_steps=2000" in text


def test_reading_flags_quantized_beating_full_precision():
    from methods.any4.report import _reading

    clean = {"notes": {"train_log": {"val_ppl_math_16x256": 60.0, "config": {"steps": 300}}}}
    rows = [["fp < any4 (cal. offline)", 1.001, "[1.0003, 1.0012]", "reversed"]]
    assert "under-trained" in _reading(clean, None, {"math": rows})
    rows = [["fp < any4 (cal. offline)", 0.99, "[0.98, 0.995]", "holds"]]
    assert "under-trained" not in _reading(clean, None, {"math": rows})
