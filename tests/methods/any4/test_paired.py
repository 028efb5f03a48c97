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
    assert rows["any4 < any3 (cal. offline)"][3] == "fails"
    assert rows["any4 (cal. online) < nf4"][3] == "holds"
    assert rows["int4 g=32 < g=64"][3] == "holds"
    # online and offline are equal up to noise → unresolved against each other is not asked; vs uncal. it holds
    assert rows["any4 (cal. offline) < any4 (uncal.)"][3] == "holds"
    tie = {k: 0.0 for k in shift}
    verdicts = {r[3] for r in paired_rows(_suite(tie), [64, 32], "math") if "g=32" not in r[0]}
    assert verdicts == {"not resolved"}


def test_reading_counts_verdicts():
    from methods.any4.report import _reading

    clean = {"notes": {"train_log": {"val_ppl_math_16x256": 56.7, "config": {"steps": 300}}}}
    rows = [["nf4 < int4", 0.99, "[0.98, 0.995]", "holds"], ["any4 < any3", 1.0, "[0.99, 1.01]", "not resolved"]]
    text = _reading(clean, None, {"math": rows})
    assert "1 of 2 expected orderings hold" in text and "1 are not resolved" in text and "300 steps" in text
    assert "clean_steps=2000" in text


def test_reading_flags_quantized_beating_full_precision():
    from methods.any4.report import _reading

    clean = {"notes": {"train_log": {"val_ppl_math_16x256": 60.0, "config": {"steps": 300}}}}
    rows = [["fp < any4 (cal. offline)", 1.001, "[1.0003, 1.0012]", "fails"]]
    assert "under-trained" in _reading(clean, None, {"math": rows})
    rows = [["fp < any4 (cal. offline)", 0.99, "[0.98, 0.995]", "holds"]]
    assert "under-trained" not in _reading(clean, None, {"math": rows})


def _res(shift: dict[str, float], layer_err: dict[str, float], n_layers: int = 6) -> dict:
    """A whole reproduction result around :func:`_suite` (clean model only), as build_report reads it."""
    from dataclasses import asdict

    from methods.any4.clean_model import CleanModelConfig

    suite = _suite(shift)
    wiki = _suite(shift)  # the out-of-domain text: same construction
    suite["eval_sets"]["wikitext2"] = wiki["eval_sets"]["math"]
    suite["fp_ppl"]["wikitext2"] = wiki["fp_ppl"]["math"]
    suite["fp_window_nll"]["wikitext2"] = wiki["fp_window_nll"]["math"]
    suite["notes"]["tokens_per_window"]["wikitext2"] = 100
    for r, w in zip(suite["rows"], wiki["rows"]):
        r["ppl"]["wikitext2"] = w["ppl"]["math"]
        r["window_nll"]["wikitext2"] = w["window_nll"]["math"]
        r.update(calibration="offline", fmt=r["variant"].split(":")[0], bits_per_weight=4.5, weight_mse=1e-5,
                 output_mse=layer_err.get(r["variant"], 1e-3), quantize_s=0.1)  # fmt: skip
    rng = np.random.default_rng(2)
    names = [f"model.layers.{i}.mlp.down_proj" for i in range(n_layers)]
    base = rng.uniform(1e-4, 1e-2, n_layers)
    suite["layer_mse"] = {
        f"{r['variant']}@{r['group_size']}": {
            n: float(b * layer_err.get(r["variant"], 1.0) * rng.uniform(0.98, 1.02)) for n, b in zip(names, base)
        }
        for r in suite["rows"]
    }
    suite["lut_example"] = {"layer": names[0], "row": 0, "weights": list(rng.standard_normal(64)), "levels": {}}
    suite["notes"].update({"train_log": {"config": {"steps": 2000}, "val_ppl_math_16x256": 20.0}, "calib_tokens": 157})
    return {
        "options": {"group_sizes": [64, 32], "seed": 0, "smol_seqlen": 512, "clean": asdict(CleanModelConfig())},
        "suites": [suite],
        "seconds": 60.0,
        "machine": {"cuda": False},
    }


SHIFT = {
    "int4": 0.05, "nf4": 0.03, "fp4": 0.08, "any4:none": 0.025, "any4:offline": 0.02, "any4:online": 0.02,
    "any3:offline": 0.06, "any2:offline": 0.3,
}  # fmt: skip


def test_evidence_verdicts_follow_the_per_window_values():
    from methods.any4.report import evidence

    res = _res(SHIFT, {"any4:none": 0.5, "int4": 1.0, "nf4": 1.2})
    v = {
        h.claim.split(": ", 1)[1].split(" [")[0].split(" (g=")[0]: h.result["verdict"] for h in evidence(res).headlines
    }
    assert v["fp < any4 (cal. offline)"] == "holds"
    assert v["nf4 < int4"] == "holds" and v["int4 < fp4 (fp4 worst)"] == "holds"
    assert v["any4 < any3 (cal. offline)"] == "holds" and v["any3 < any2 (cal. offline)"] == "holds"
    assert v["any4 (cal. offline): smaller g is better"] == "holds"  # _suite: g=64 costs 1.1× the shift
    assert v["any4 (uncal.) layer-output MSE below int4"] == "holds"
    # reversed on purpose: any3 better than any4, nf4 worse than int4, any4's layer error above nf4's
    bad = _res(dict(SHIFT, **{"any3:offline": 0.01, "nf4": 0.07}), {"any4:none": 2.0, "int4": 1.0, "nf4": 1.0})
    v = {h.claim.split(": ", 1)[1].split(" [")[0]: h.result["verdict"] for h in evidence(bad).headlines}
    assert v["any4 < any3 (cal. offline)"] == "fails" and v["nf4 < int4"] == "fails"
    assert v["any4 (uncal.) layer-output MSE below nf4"] == "fails"
    tie = _res({k: 0.0 for k in SHIFT}, {})
    verdicts = {h.result["verdict"] for h in evidence(tie).headlines if "g=" not in h.claim.split("[")[0]}
    assert verdicts <= {"not resolved"}


def test_report_opens_with_the_headlines_and_results_json_recomputes():
    import json

    from core.evidence import Evidence
    from methods.any4.report import build_report

    rep = build_report(_res(SHIFT, {"any4:none": 0.5}), "paperworks reproduce any4 -o smollm2=false")
    assert rep.sections[0].markdown.startswith("<!-- headlines") and rep.title.endswith("(clean from-scratch llama)")
    assert "**holds**" in rep.summary and "Expected directions" not in rep.to_markdown()
    files = rep.pending_files()
    ev = Evidence.from_json(json.loads(files["results.json"]))
    assert ev.recompute() == [] and ev.table() == rep.sections[0].markdown
    assert json.loads(files["raw.json"])["suites"][0]["fp_window_nll"]["math"]
