"""Turn the raw reproduction results into the any4 Report (docs/results/any4.md).

The Report opens with the headline claims of spec §7 as :mod:`core.evidence` headlines over the
per-window NLLs of the clean model's in-domain (math) text: each expected ordering "ppl(a) <
ppl(b)" is the paired difference of per-token NLL, window by window, with a percentile bootstrap
over windows (100·Δ ln ppl ≈ the percent change in perplexity); the layer-output error claims pair
the layers. ``results.json`` holds those values and the headline specs, ``raw.json`` everything the
run measured.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.evidence import Evidence
from core.jobs import Report, Table
from core.provenance import format_provenance
from core.stats import verdict
from methods.any4 import plots

#: Llama-3.2-1B, WikiText-2, seqlen 2048, g = 128 (spec §4, repo README) — for the ratio column only.
PAPER_WIKI2 = {"fp": 9.76, "int4": 11.89, "fp4": 13.01, "nf4": 10.99, "any4": 10.63}


def _ppl(suite: dict, variant: str, g: int, eval_set: str) -> float:
    for r in suite["rows"]:
        if r["variant"] == variant and r["group_size"] == g:
            return r["ppl"][eval_set]
    return float("nan")


def _add(report: Report, section: str, table: Table, text: str = "") -> None:
    """A table inside a titled section, so the document reads in order (raw numbers are in ``report.data``)."""
    report.add_section(section, (text + "\n\n" if text else "") + table.to_markdown())


def _ppl_table(report: Report, suite: dict, sizes: list[int], title: str, note: str) -> None:
    sets = list(suite["fp_ppl"])
    cols = ["format"] + [f"{e} g={g}" for g in sizes for e in sets] + [f"bits/w g={g}" for g in sizes]
    rows = [["fp32"] + [suite["fp_ppl"][e] for _ in sizes for e in sets] + [32.0 for _ in sizes]]
    for variant in dict.fromkeys(r["variant"] for r in suite["rows"]):
        label = next(r["label"] for r in suite["rows"] if r["variant"] == variant)
        bits = [
            next(
                (r["bits_per_weight"] for r in suite["rows"] if r["variant"] == variant and r["group_size"] == g),
                float("nan"),
            )
            for g in sizes
        ]
        rows.append([label] + [_ppl(suite, variant, g, e) for g in sizes for e in sets] + bits)
    _add(report, title, Table(title=title, columns=cols, rows=rows, note=note))


def _error_table(report: Report, suite: dict, sizes: list[int], title: str) -> None:
    cols = (
        ["format"]
        + [f"weight MSE g={g}" for g in sizes]
        + [f"layer output MSE g={g}" for g in sizes]
        + [f"quantize s g={g}" for g in sizes]
    )
    rows = []
    for variant in dict.fromkeys(r["variant"] for r in suite["rows"]):
        by_g = {r["group_size"]: r for r in suite["rows"] if r["variant"] == variant}
        label = next(iter(by_g.values()))["label"]
        rows.append(
            [label]
            + [by_g[g]["weight_mse"] if g in by_g else float("nan") for g in sizes]
            + [by_g[g]["output_mse"] if g in by_g else float("nan") for g in sizes]
            + [round(by_g[g]["quantize_s"], 1) if g in by_g else float("nan") for g in sizes]
        )
    _add(
        report,
        title,
        Table(
            title=title,
            columns=cols,
            rows=rows,
            note="Weight MSE over all quantized weights; layer output MSE = mean over layers of "
            "mean((XWᵀ − XŴᵀ)²) with X the layer's fp inputs on the calibration prompt.",
        ),
    )


def _nll(suite: dict, variant: str, g: int, eval_set: str) -> list[float] | None:
    if variant == "fp":
        return suite.get("fp_window_nll", {}).get(eval_set)
    for r in suite["rows"]:
        if r["variant"] == variant and r["group_size"] == g:
            return r.get("window_nll", {}).get(eval_set)
    return None


def _verdict(lo: float, hi: float) -> str:
    """core.stats.verdict of "ppl(a) < ppl(b)": a ratio interval below 1 holds, above 1 fails, else not resolved."""
    return verdict((lo, hi), null=1.0, direction="less")


#: Pairwise orderings of spec §7 as (a, b, g_a, g_b): "ppl(a) < ppl(b)" is expected; g None = the first size.
def _pairs(suite: dict, sizes: list[int]) -> list[tuple[str, str, str, int, int]]:
    g = sizes[0]
    have = {r["variant"] for r in suite["rows"]}
    out = [
        ("fp < any4 (cal. offline)", "fp", "any4:offline", g, g),
        ("any4 (cal. offline) < any4 (uncal.)", "any4:offline", "any4:none", g, g),
        ("any4 (cal. online) < any4 (uncal.)", "any4:online", "any4:none", g, g),
        ("any4 (cal. online) < nf4", "any4:online", "nf4", g, g),
        ("any4 (cal. offline) < nf4", "any4:offline", "nf4", g, g),
        ("nf4 < int4", "nf4", "int4", g, g),
        ("int4 < fp4", "int4", "fp4", g, g),
        ("nf4 < fp4", "nf4", "fp4", g, g),
        ("any4 < any3 (cal. offline)", "any4:offline", "any3:offline", g, g),
        ("any3 < any2 (cal. offline)", "any3:offline", "any2:offline", g, g),
    ]
    if len(sizes) > 1:
        small, big = min(sizes), max(sizes)
        out += [(f"{v} g={small} < g={big}", v, v, small, big) for v in ("int4", "nf4", "fp4", "any4:offline")]
    return [p for p in out if all(x == "fp" or x in have for x in p[1:3])]


def paired_rows(suite: dict, sizes: list[int], eval_set: str, n_boot: int = 2000) -> list[list]:
    """Each expected ordering as ppl(a)/ppl(b) with a paired bootstrap CI over the evaluation windows."""
    from methods.any4.evaluate import paired_ppl_ratio

    tokens = suite.get("notes", {}).get("tokens_per_window", {}).get(eval_set)
    rows = []
    for name, a, b, ga, gb in _pairs(suite, sizes):
        na, nb = _nll(suite, a, ga, eval_set), _nll(suite, b, gb, eval_set)
        if not na or not nb or not tokens:
            continue
        ratio, lo, hi = paired_ppl_ratio(na, nb, tokens, n_boot)
        rows.append([name, ratio, f"[{lo:.4f}, {hi:.4f}]", _verdict(lo, hi)])
    return rows


def _paired_section(rep: Report, suite: dict, sizes: list[int], eval_set: str) -> list[list]:
    rows = paired_rows(suite, sizes, eval_set)
    if not rows:
        return rows
    n = len(suite.get("fp_window_nll", {}).get(eval_set, []))
    _add(
        rep,
        f"Paired bootstrap over windows: {suite['model']}, {eval_set}",
        Table(
            title=f"Expected orderings as perplexity ratios, {n} windows ({suite['eval_sets'][eval_set]})",
            columns=["expected ordering a < b", "ppl(a) / ppl(b)", "95% CI", "verdict"],
            rows=rows,
            note="Both sides are scored on the same windows; 2,000 bootstrap resamples draw window indices once "
            "for both (paired). 'holds' = CI below 1, 'fails' = CI above 1 (the ordering is reversed), 'not "
            "resolved' = CI touches or spans 1: the windows evaluated cannot tell the two formats apart.",
        ),
    )
    return rows


def _reading(clean: dict, smol: dict | None, paired: dict[str, list[list]]) -> str:
    """What holds, what does not, and what would change the conclusion, in plain words, from the measurements."""
    tl = clean["notes"].get("train_log", {})
    steps = clean.get("notes", {}).get("train_log", {}).get("config", {}).get("steps", "?")
    parts = []
    for key, rows in paired.items():
        if not rows:
            continue
        v = [r[3] for r in rows]
        held = [r[0] for r in rows if r[3] == "holds"]
        rev = [r[0] for r in rows if r[3] == "fails"]
        parts.append(
            f"On {key}, {v.count('holds')} of {len(rows)} expected orderings hold with a CI that excludes a tie, "
            f"{v.count('fails')} fail (reversed) and {v.count('not resolved')} are not resolved"
            + (f" (holding: {', '.join(held)}" + (f"; reversed: {', '.join(rev)})" if rev else ")") if held else "")
            + "."
        )
    beaten = [k for k, rows in paired.items() for r in rows if r[0].startswith("fp <") and r[3] == "fails"]
    if beaten:
        parts.append(
            f"A quantized model scores better than full precision on {', '.join(beaten)}: quantization noise that "
            "improves perplexity marks an under-trained model, so orderings measured on it do not transfer to a "
            "converged one, however tight their CIs."
        )
    parts.append(_sensitivity(clean, steps, tl.get("val_ppl_math_16x256", float("nan"))))
    if smol is not None:
        parts.append(
            "SmolLM2's rows are flagged: its weights were already 4-bit (Q4_1) before we quantized them, so g=32 "
            "min–max formats reproduce them almost exactly and its ordering is not evidence about the formats."
        )
    trained = isinstance(steps, int) and steps >= 2000
    parts.append(
        "What would change the conclusion: "
        + (
            "a larger full-precision model whose perplexity reacts to 4-bit rounding (the paper's Llama-3.2-1B "
            "loses 9–33 % at 4 bits; this one loses well under 1 %)"
            if trained
            else "a clean model trained to convergence (the spec's 2–5k steps: "
            "`paperworks reproduce any4 -o clean_steps=2000`) or a full-precision pretrained model"
        )
        + ", and more evaluation windows, which narrow the CIs; an ordering that stays 'not resolved' there is a "
        "real tie."
    )
    return " ".join(parts)


def _sensitivity(clean: dict, steps: Any, val_ppl: float) -> str:
    """How much the clean model's math perplexity moves under each bit width, and what that allows to conclude."""
    fp = clean.get("fp_ppl", {}).get("math")
    rows = [r for r in clean.get("rows", []) if fp and "math" in r.get("ppl", {})]
    change = {}
    for r in rows:
        fmt = r["variant"].split(":")[0]
        bits = "4" if fmt in ("int4", "nf4", "fp4", "any4") else fmt
        change.setdefault(bits, []).append(r["ppl"]["math"] / fp - 1)
    out_err = {}
    for r in clean.get("rows", []):
        if r["variant"].split(":")[0] in ("int4", "nf4", "fp4", "any4") and "output_mse" in r:
            out_err.setdefault(r["label"], []).append(r["output_mse"])
    best = min(out_err, key=lambda k: sum(out_err[k]) / len(out_err[k])) if out_err else None
    errors = (
        f"The weight and layer-output errors do rank the formats ({best} lowest at 4 bits), and that ranking needs "
        "no perplexity to be read."
        if best
        else "The weight and layer-output errors rank the formats without perplexity."
    )
    if not isinstance(steps, int) or steps < 2000 or "4" not in change:
        return (
            f"The clean model was trained for {steps} steps (held-out math perplexity {val_ppl:.1f}); where the "
            "format differences are a fraction of a percent and the CIs span 1, its weights are too close to their "
            "random initialization for 4-bit rounding to matter, so these rows do not rank the formats. " + errors
        )
    spread = max(abs(c) for c in change["4"])
    low = "; ".join(f"{b} up to {max(change[b]):+.1%}" for b in ("any3", "any2") if b in change)
    return (
        f"The clean model was trained for {steps} steps, inside the spec's 2–5k (held-out math perplexity "
        f"{val_ppl:.1f}), and still every 4-bit format stays within {spread:.1%} of full precision on math text"
        + (f" ({low})" if low else "")
        + ": this 5.5M-parameter model barely reacts to weight rounding, so perplexity separates bit widths but "
        "not the 4-bit formats from one another, and their orderings flip between the two texts. Training longer "
        "was not what the earlier run lacked. " + errors
    )


def _line(suite: dict, g: int, eval_set: str, cal: str) -> str:
    return f"fp {suite['fp_ppl'][eval_set]:.2f}, " + ", ".join(
        f"{lab} {_ppl(suite, v, g, eval_set):.2f}"
        for v, lab in (
            ("int4", "int4"),
            ("nf4", "nf4"),
            ("fp4", "fp4"),
            ("any4:none", "any4 uncal."),
            (cal, "any4 cal."),
        )
    )


def _setup(res: dict, command: str, suites: list[dict]) -> str:
    opts, clean = res["options"], suites[0]
    tl, ccfg, notes = clean["notes"].get("train_log", {}), opts["clean"], clean["notes"]
    lines = [
        f"- Command: `{command}` (seed {opts['seed']}); CUDA available: {res['machine']['cuda']}. "
        f"{format_provenance(res['machine'])}",
        f"- Wall time {res['seconds'] / 60:.1f} min on the shared 2-core machine, other jobs running; "
        + (
            "this includes training the clean model."
            if notes.get("trained_now")
            else "the clean model was loaded from the cache (its training time is given below)."
        ),
        f"- **Clean model** (spec §6.1 mitigation 3): llama, {ccfg['num_layers']} layers, d={ccfg['hidden_size']}, "
        f"{ccfg['num_heads']} heads, FFN {ccfg['intermediate_size']}, tied embeddings, {tl.get('n_params', '?')} "
        f"parameters, trained from scratch in fp32 on GSM8K+MATH train text: {ccfg['steps']} AdamW steps of "
        f"{ccfg['batch_size']}×{ccfg['seq_len']} tokens from {tl.get('train_tokens', '?')} tokens of text "
        f"({tl.get('train_seconds', 0) / 60:.1f} min when trained, then cached); final train loss "
        f"{tl.get('final_loss_avg20', float('nan')):.2f}, held-out math perplexity "
        f"{tl.get('val_ppl_math_16x256', float('nan')):.1f}. CPU shrinks: {ccfg['steps']} steps (the spec suggests "
        f"2–5k) and a compact output vocabulary — the {ccfg['vocab_size'] - 1} most frequent SmolLM2 token ids of "
        "the training text plus one shared 'rare' id — so its perplexities are over that vocabulary (rare tokens: "
        f"{notes.get('rare_fraction_math', 0):.1%} of the math windows, {notes.get('rare_fraction_wikitext', 0):.1%} "
        "of the WikiText-2 windows). It never saw WikiText: its in-domain score is the math text.",
        f"- Evaluation (§6.4): fixed windows, exp(mean NLL). Clean model: the first {clean['eval_sets']['math']} of "
        "held-out math text (GSM8K test and MATH test interleaved; reported as math-text perplexity, not C4) and "
        f"the first {clean['eval_sets']['wikitext2']} of WikiText-2 test.",
        "- Calibration: the byte-exact single prompt (`any4_calibration/default_prompt.txt`, "
        f"{notes.get('calib_tokens')} tokens for the clean model); ω = |x̄|·s (§3.2). Offline = one fp pass; online "
        "= before each layer, a pass through the partly quantized model (§3.3, computed by re-running only the "
        "enclosing block). any3/any2 use offline calibration.",
        "- Every `nn.Linear` but `lm_head` (tied to the embedding) is quantized; k-means++ seeded per layer; "
        "Lloyd until the largest centroid shift < 1e-4·(2^b−1) or 100 iterations.",
    ]
    if len(suites) > 1:
        smol = suites[1]
        lines.append(
            f"- **SmolLM2-135M-Instruct**, flagged: its linear weights are {smol['notes']['gguf_linear_types']} "
            f"in the GGUF (pre-quantized); scored on the first {smol['eval_sets']['wikitext2']} of "
            "WikiText-2 (the spec's 64×512 shrunk to fit the time budget)."
        )
    return "\n".join(lines)


#: Spec §7's expected orderings on the clean model's math text, as (claim, a, b, g_a, g_b, paper): "ppl(a) <
#: ppl(b)"; g None = the first group size, "small"/"big" = the smaller/larger one. The paper's numbers are
#: Llama-3.2-1B, WikiText-2, seqlen 2048, g = 128 (spec §4).
ORDERINGS = (
    ("fp < any4 (cal. offline)", "fp", "any4:offline", None, None, "9.76 < 10.63"),
    ("any4 (cal. offline) < any4 (uncal.)", "any4:offline", "any4:none", None, None, "calibrated ≤ uncalibrated"),
    ("any4 (cal. online) < any4 (uncal.)", "any4:online", "any4:none", None, None, "calibrated ≤ uncalibrated"),
    ("any4 (cal. online) < nf4", "any4:online", "nf4", None, None, "10.63 < 10.99"),
    ("nf4 < int4", "nf4", "int4", None, None, "10.99 < 11.89"),
    ("int4 < fp4 (fp4 worst)", "int4", "fp4", None, None, "11.89 < 13.01"),
    ("any4 < any3 (cal. offline)", "any4:offline", "any3:offline", None, None, "any3 > any4 (no number here)"),
    ("any3 < any2 (cal. offline)", "any3:offline", "any2:offline", None, None, "any2 ≫ any3 (no number here)"),
    ("any4 (cal. offline): smaller g is better", "any4:offline", "any4:offline", "small", "big", "larger g hurts"),
    ("int4: smaller g is better", "int4", "int4", "small", "big", "larger g hurts"),
)
UNIT = "% ppl"


def _g(which: str | None, sizes: list[int]) -> int:
    return {None: sizes[0], "small": min(sizes), "big": max(sizes)}[which]


def _key(variant: str, g: int) -> str:
    return "fp" if variant == "fp" else f"{variant}@{g}"


def window_values(suite: dict, eval_set: str) -> dict[str, list[float]]:
    """Per-token NLL of every window, by ``"fp"`` or ``"variant@g"`` (the paired values of the headlines)."""
    tokens = suite["notes"]["tokens_per_window"][eval_set]
    out = {"fp": [v / tokens for v in suite["fp_window_nll"][eval_set]]}
    for r in suite["rows"]:
        if eval_set in r.get("window_nll", {}):
            out[_key(r["variant"], r["group_size"])] = [v / tokens for v in r["window_nll"][eval_set]]
    return out


def _ppl_of(values: list[float]) -> float:
    return math.exp(float(np.mean(values)))


def evidence(res: dict) -> Evidence:
    """Spec §7's expected orderings on the clean model's in-domain math text (paired over windows, bootstrap)
    and its layer-output error claims (paired over layers, on the calibration prompt)."""
    sizes = list(res["options"]["group_sizes"])
    clean = res["suites"][0]
    math_w = window_values(clean, "math")
    raw: dict[str, Any] = {"clean_math": math_w, "windows": len(math_w["fp"])}
    raw["tokens_per_window"] = clean["notes"]["tokens_per_window"]["math"]
    layers = sorted(next(iter(clean["layer_mse"].values()), {}))
    raw["layer_names"] = layers
    raw["clean_layer_ln_mse"] = {
        k: [math.log(max(v[n], 1e-30)) for n in layers] for k, v in clean["layer_mse"].items() if set(v) == set(layers)
    }
    if len(sizes) > 1:
        big, small = max(sizes), min(sizes)
        raw["g_cost"] = {
            v: list(np.subtract(math_w[f"{v}@{big}"], math_w[f"{v}@{small}"]))
            for v in ("any4:offline", "int4", "nf4")
            if f"{v}@{big}" in math_w and f"{v}@{small}" in math_w
        }
    ev = Evidence(raw)
    kw: dict[str, Any] = {"interval": "bootstrap", "scale": 100.0, "digits": 3, "unit": UNIT}
    g0 = sizes[0]
    for claim, a, b, ga, gb, paper in ORDERINGS:
        if (ga or gb) and len(sizes) < 2:
            continue
        ka, kb = _key(a, _g(ga, sizes)), _key(b, _g(gb, sizes))
        if ka not in math_w or kb not in math_w:
            continue
        label = f"{claim} (g={min(sizes)} vs {max(sizes)})" if (ga or gb) else f"{claim} [g={g0}]"
        ev.headline(
            f"clean model, math text: {label}", stat="paired_diff", a=f"clean_math/{ka}", b=f"clean_math/{kb}",
            direction="less", paper=paper + (" (Llama-3.2-1B, WikiText-2, g=128)" if paper[0].isdigit() else ""),
            context=f"ppl {_ppl_of(math_w[ka]):.3f} vs {_ppl_of(math_w[kb]):.3f}", **kw,
        )  # fmt: skip
    gc = raw.get("g_cost", {})
    if {"any4:offline", "int4"} <= set(gc):
        ev.headline(
            f"clean model, math text: larger g costs any4 less than int4 (g={max(sizes)} − g={min(sizes)})",
            stat="paired_diff", a="g_cost/any4:offline", b="g_cost/int4", direction="less",
            paper="larger g hurts every format, any4 least (§3.5 table shape)",
            context=f"cost of the larger g: any4 {100 * np.mean(gc['any4:offline']):+.3f} %, int4 "
            f"{100 * np.mean(gc['int4']):+.3f} %", **kw,
        )  # fmt: skip
    lm = raw["clean_layer_ln_mse"]
    for other in ("int4", "nf4"):
        ka, kb = f"any4:none@{g0}", f"{other}@{g0}"
        if ka in lm and kb in lm and len(layers) >= 2:
            ev.headline(
                f"clean model: any4 (uncal.) layer-output MSE below {other} [g={g0}]", stat="paired_diff",
                a=f"clean_layer_ln_mse/{ka}", b=f"clean_layer_ln_mse/{kb}", direction="less", interval="bootstrap",
                digits=3, unit="Δ ln MSE per layer", paper="any4 has the lowest error of the 4-bit formats",
                context=f"{len(layers)} layers, fp inputs of the calibration prompt; geometric-mean ratio "
                f"{math.exp(np.mean(np.subtract(lm[ka], lm[kb]))):.3f}",
            )  # fmt: skip
    return ev


def _summary_lines(ev: Evidence) -> str:
    """Each headline's verdict, estimate and baseline, one line each."""
    out = []
    for h in ev.headlines:
        r = h.result
        est = f"{r['estimate'] * h.scale:+.{h.digits}f}"
        ci = f" [{r['low'] * h.scale:+.{h.digits}f}, {r['high'] * h.scale:+.{h.digits}f}]" if r["n"] >= 2 else ""
        out.append(
            f"- {h.claim.split(': ', 1)[-1]}: **{r['verdict']}**, {est}{ci} {h.unit} ({h.context}; paper {h.paper})"
        )
    return "\n".join(out)


def _shrunk(res: dict, suites: list[dict]) -> str:
    opts, clean = res["options"], suites[0]
    lines = [
        f"- Models: a {clean['notes'].get('train_log', {}).get('n_params', '?')}-parameter llama trained here "
        f"for {opts['clean']['steps']} steps (spec §6.1: 2–5k)"
        + (" and SmolLM2-135M" if len(suites) > 1 else "")
        + ", not Llama-3.2-1B/3-8B/70B.",
        f"- Group sizes {', '.join(str(g) for g in opts['group_sizes'])} (the paper's g = 128 does not divide "
        "SmolLM2's K = 576); windows of 256 tokens (clean)"
        + (f" and {opts['smol_seqlen']} tokens (SmolLM2)" if len(suites) > 1 else "")
        + ", not 2048.",
        f"- Evaluation: {clean['eval_sets']['math']} of math text and {clean['eval_sets']['wikitext2']} of "
        "WikiText-2 on the clean model (C4, PTB and CodeParrot are not available offline)"
        + (
            f"; {suites[1]['eval_sets']['wikitext2']} of WikiText-2 on SmolLM2 (spec §6.4: 64×512)."
            if len(suites) > 1
            else "; SmolLM2 not run (`smollm2=false`)."
        ),
        f"- One quantization seed ({opts['seed']}) and one trained clean model: the intervals are over evaluation "
        "windows (and layers), not over seeds.",
    ]
    return "\n".join(lines)


def build_report(res: dict, command: str) -> Report:
    """The headline claims first, then setup, what was shrunk, perplexity and error tables, the paired orderings,
    diagnostics and figures; ``results.json`` (headlines + per-window values) and ``raw.json`` (everything)."""
    sizes = list(res["options"]["group_sizes"])
    suites = res["suites"]
    clean = suites[0]
    g = sizes[0]
    cal = "any4:online" if any(r["variant"] == "any4:online" for r in clean["rows"]) else "any4:offline"
    ev = evidence(res)
    counts = ev.counts()
    rep = Report(
        title="any4 — CPU-scale reproduction (clean from-scratch llama"
        + (" + SmolLM2-135M)" if len(suites) > 1 else ")")
    )
    summary = (
        f"Headline claims (spec §7's expected orderings on the clean model's in-domain math text, paired over "
        f"{ev.raw['windows']} windows, percentile bootstrap; Δ in % ppl = 100·Δ ln ppl; table below): "
        f"{counts['holds']} hold, {counts['fails']} fail, "
        f"{counts['not resolved']} not resolved.\n\n{_summary_lines(ev)}\n\n"
        f"Clean fp32 model, held-out math-text perplexity at g={g}: {_line(clean, g, 'math', cal)}."
    )
    if len(suites) > 1:
        summary += (
            f" SmolLM2-135M (weights pre-quantized, so not evidence about the formats), WikiText-2 at g={g}: "
            f"{_line(suites[1], g, 'wikitext2', cal)}."
        )
    rep.summary = summary + f" Measured by `{command}` in {res['seconds'] / 60:.1f} min."
    rep.sections.append(ev.section())
    for v in ("int4", "nf4", "fp4", "any4:none", cal):
        rep.metrics[f"clean_math_{v.replace(':', '_')}_g{g}"] = _ppl(clean, v, g, "math")
    rep.metrics["clean_math_fp"] = clean["fp_ppl"]["math"]
    if len(suites) > 1:
        rep.metrics["smollm2_wikitext2_fp"] = suites[1]["fp_ppl"]["wikitext2"]
        rep.metrics[f"smollm2_wikitext2_any4_cal_g{g}"] = _ppl(suites[1], cal, g, "wikitext2")
    rep.metrics.update({f"headlines_{k.replace(' ', '_')}": v for k, v in counts.items()})
    rep.metrics["wall_minutes"] = round(res["seconds"] / 60, 1)
    rep.add_section("Setup", _setup(res, command, suites))
    rep.add_section("What was shrunk", _shrunk(res, suites))
    _ppl_table(
        rep,
        clean,
        sizes,
        "Clean from-scratch model: perplexity",
        "Bits per weight count a bf16 scale + bf16 offset per group (int, any) or bnb's fp32 absmax (nf4, "
        "fp4), plus a 2^b-entry bf16 table per row for any-b (§3.4). The 'math windows' row calibrates on "
        "dataset windows of math train text instead of the single prompt (§7).",
    )
    _error_table(rep, clean, sizes, "Clean from-scratch model: weight and layer-output error")
    paired = {"the clean model's math text": _paired_section(rep, clean, sizes, "math")}
    paired["the clean model's WikiText-2 windows (out of domain)"] = _paired_section(rep, clean, sizes, "wikitext2")
    ratios = [
        [k, v, v / PAPER_WIKI2["fp"]]
        + [
            (_ppl(clean, {"any4": cal}.get(k, k), g, e) / clean["fp_ppl"][e]) if k != "fp" else 1.0
            for e in ("math", "wikitext2")
        ]
        for k, v in PAPER_WIKI2.items()
    ]
    _add(
        rep,
        "Paper numbers beside ours",
        Table(
            title=f"Paper (Llama-3.2-1B, WikiText-2, g=128) beside ours (clean model, g={g}): perplexity / fp ratio",
            columns=["format", "paper ppl", "paper ratio", "our ratio, math", "our ratio, WikiText-2"],
            rows=ratios,
            note="Different model and scale; only the ordering and rough size of the gaps are comparable. "
            "'any4' is the calibrated variant.",
        ),
    )
    if len(suites) > 1:
        smol = suites[1]
        _ppl_table(
            rep,
            smol,
            sizes,
            "SmolLM2-135M-Instruct (weights pre-quantized, Q4_1): perplexity",
            "Flagged (§6.1): every 32-block of these weights already sits on a 16-level grid, so formats "
            "aligned with it (g=32, min–max) are nearly lossless and the ranking says little.",
        )
        _error_table(rep, smol, sizes, "SmolLM2-135M-Instruct: weight and layer-output error")
        paired["SmolLM2 (pre-quantized)"] = _paired_section(rep, smol, sizes, "wikitext2")
        b = smol["notes"]["blocks"]
        rep.add_section(
            "SmolLM2 weight diagnostics (§6.1)",
            f"- GGUF tensor types: {smol['notes']['gguf_types']}.\n"
            f"- Distinct values per block of 32 along K over the {b['layers']} quantized linear weights "
            f"({b['blocks']} blocks): max {b['max_distinct']}, mean {b['mean_distinct']:.2f}, "
            f"share of blocks with ≤ 16 distinct values {b['share_blocks_le_16']:.1%}.",
        )
    rep.add_figure("perplexity.png", plots.perplexity_bars(suites, "wikitext2"), caption="WikiText-2 perplexity")
    rep.add_figure("perplexity_math.png", plots.perplexity_bars(suites[:1], "math"), caption="math-text perplexity")
    rep.add_figure("lut_levels.png", plots.lut_levels(clean["lut_example"]), caption="levels of one row")
    keys = [f"{v}@{g}" for v in ("int4", "nf4", "fp4", "any4:offline", "any4:online")]
    rep.add_figure(
        "layer_output_mse.png",
        plots.layer_output_mse(clean["layer_mse"], keys, f"clean model, g={g}"),
        caption="per-layer output MSE on the calibration prompt",
    )
    figs = [
        "![Math-text perplexity per format, clean model (log scale)](artifact:perplexity_math.png)",
        "![WikiText-2 perplexity per format, both models, both group sizes (log scale)](artifact:perplexity.png)",
        "![The levels one row's first group can use under each format, over that group's weights]"
        "(artifact:lut_levels.png)",
        "![Per-layer output MSE on the calibration prompt, clean model](artifact:layer_output_mse.png)",
    ]
    if clean["notes"].get("losses"):
        rep.add_figure("clean_model_loss.png", plots.loss_curve(clean["notes"]["losses"]), caption="training loss")
        figs.append("![Training loss of the clean model](artifact:clean_model_loss.png)")
    rep.add_section("Figures", "\n\n".join(figs))
    rep.add_section("Reading", _reading(clean, suites[1] if len(suites) > 1 else None, paired))
    timing = [f"- {su['model']}: {su['notes'].get('seconds', 0) / 60:.1f} min" for su in suites]
    rep.add_section("Timing", "\n".join(timing) + f"\n- total: {res['seconds'] / 60:.1f} min")
    rep.add_json(
        "results.json",
        ev.to_json(options=res["options"], command=command, seconds=res["seconds"], machine=res["machine"]),
        caption="per-window values and headline specs",
    )
    rep.add_json("raw.json", res, caption="everything the run measured")
    rep.data = {"results": res, "verdicts": {h.claim: h.result for h in ev.headlines}}
    return rep
