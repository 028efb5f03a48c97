"""Reports: the study / reproduction (variants × seeds, §7 checks, reading), one training run, one retrieval."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from core.jobs import JobContext, Report
from core.stats import mean_sd
from methods.m3_jepa.config import PAPER_CLAIMS, VARIANTS

ABLATIONS = ("mlp", "k1", "k6", "no_cl", "no_reg", "summed")


def run_all(params: Any, progress: JobContext, device: Any = None) -> list[dict[str, Any]]:
    """One result per (variant, seed): sub-jobs when a worker is configured (each with the study's ``device`` and
    ``amp``, so it is routed to the same queue), else in this process on ``device`` (default: ``params.device``);
    :func:`core.jobs.dispatch.map_jobs`."""
    from core.jobs.dispatch import map_jobs
    from methods.m3_jepa.service import train_variant

    where = {"device": getattr(params, "device", "cpu"), "amp": getattr(params, "amp", "off")}
    runs = [
        {"variant": v, "seed": s, "epochs": params.epochs, "patience": params.patience, **where}
        for v in params.variants
        for s in range(params.seeds)
    ]

    def here(p: Any, sub: JobContext) -> dict[str, Any]:
        return train_variant(
            p.variant, p.seed, p.epochs, p.patience, progress=sub,
            device=where["device"] if device is None else device, amp=where["amp"],
        )  # fmt: skip

    return map_jobs(
        "m3_jepa.train",
        runs,
        inline=here,
        result=lambda data: data["result"],
        dispatch=params.dispatch,
        progress=progress,
        key="m3_jepa",
        timeout=12 * 3600,
        steal_after=60.0,
        label=lambda p: f"{p.variant} seed {p.seed}",
    )


def _fmt(xs: list[float], pct: bool = True) -> str:
    """Mean ± sample sd over seeds (:func:`core.stats.mean_sd`): ``"12.3 ± 0.4"`` in %, else 3 significant digits."""
    ms = mean_sd(xs)
    return ms.format(1, scale=100.0) if pct else ms.format(3, sd_digits=2, spec="g")


def aggregate(results: list[dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    by: dict[str, dict[str, list[float]]] = {}
    for r in results:
        cell = by.setdefault(r["variant"], {})
        for k, v in r["metrics"].items():
            cell.setdefault(k, []).append(v)
        cell.setdefault("imbalance", []).append(abs(r["metrics"]["i2t_r1"] - r["metrics"]["t2i_r1"]))
        cell.setdefault("train_s", []).append(r["train_s"])
        cell.setdefault("params", []).append(r["params"])
        cell.setdefault("best_epoch", []).append(r.get("best_epoch") or 0)
    return by


def _paired(results: list[dict[str, Any]], a: str, b: str, key: str = "mean_r1") -> tuple[float, float, int] | None:
    """Mean ± std of (a − b) over the seeds both have."""
    va = {r["config"]["seed"]: r["metrics"][key] for r in results if r["variant"] == a}
    vb = {r["config"]["seed"]: r["metrics"][key] for r in results if r["variant"] == b}
    seeds = sorted(set(va) & set(vb))
    if not seeds:
        return None
    d = mean_sd([va[x] - vb[x] for x in seeds])
    return d.mean, d.sd, len(seeds)


def direction_checks(
    results: list[dict[str, Any]], agg: dict[str, dict[str, list[float]]], n_test: int
) -> list[tuple[str, bool | None, str]]:
    """The §7 'expected directions' on the measured numbers (None = variant not run)."""
    out: list[tuple[str, bool | None, str]] = []
    mean = {v: float(np.mean(c["mean_r1"])) for v, c in agg.items()}

    def pd(a: str, b: str) -> str:
        d = _paired(results, a, b)
        return f"{a} − {b} = {100 * d[0]:+.1f} ± {100 * d[1]:.1f} pts mean R@1 (n={d[2]})" if d else "n/a"

    if {"m3_jepa", "mlp"} <= set(mean):
        out.append(("MoE ≥ MLP on R@1", mean["m3_jepa"] >= mean["mlp"], pd("m3_jepa", "mlp")))
    else:
        out.append(("MoE ≥ MLP on R@1", None, "variant not run"))
    drops = {v: mean["m3_jepa"] - mean[v] for v in ABLATIONS if v in mean and "m3_jepa" in mean}
    if "no_cl" in drops:
        largest = max(drops, key=drops.get)
        out.append(
            (
                "Removing L_cl collapses retrieval (largest drop)",
                largest == "no_cl",
                "drops (pts mean R@1): "
                + ", ".join(f"{v} {100 * d:+.1f}" for v, d in sorted(drops.items(), key=lambda x: -x[1])),
            )
        )
    else:
        out.append(("Removing L_cl collapses retrieval (largest drop)", None, "variant not run"))
    if "no_reg" in drops:
        out.append(("Removing L_reg costs a little (no_reg ≤ M3-JEPA)", drops["no_reg"] >= 0, pd("m3_jepa", "no_reg")))
    else:
        out.append(("Removing L_reg costs a little", None, "variant not run"))
    if {"m3_jepa", "summed"} <= set(mean):
        d = _paired(results, "m3_jepa", "summed")
        imb_a, imb_s = float(np.mean(agg["m3_jepa"]["imbalance"])), float(np.mean(agg["summed"]["imbalance"]))
        tie = d is not None and abs(d[0]) <= max(d[1], 0.005)
        ok = mean["m3_jepa"] >= mean["summed"] or (tie and imb_a <= imb_s)
        out.append(
            (
                "AGD ≥ summed loss, or equal with less direction imbalance",
                ok,
                f"{pd('m3_jepa', 'summed')}; |i→t − t→i| R@1: AGD {100 * imb_a:.1f} vs summed {100 * imb_s:.1f} pts",
            )
        )
    else:
        out.append(("AGD ≥ summed loss", None, "variant not run"))
    if "random_captions" in agg:
        c = agg["random_captions"]
        r1 = float(np.mean(c["mean_r1"]))
        cls = float(np.mean(c["i2t_class_r1"] + c["t2i_class_r1"]))
        ok = r1 < 3.0 / n_test and 0.04 <= cls <= 0.2
        out.append(
            (
                "Random-caption control ≈ chance (R@1 ≈ 1/597, class R@1 ≈ 10 %)",
                ok,
                f"exact-pair R@1 {100 * r1:.2f} % (chance {100 / n_test:.2f} %), class-level R@1 {100 * cls:.1f} %",
            )
        )
    else:
        out.append(("Random-caption control ≈ chance", None, "variant not run"))
    return out


def _main_table(report: Report, agg: dict[str, dict[str, list[float]]], n_test: int, oracle: dict[int, float]) -> None:
    cols = [
        "variant", "i→t R@1", "i→t R@5", "i→t R@10", "t→i R@1", "t→i R@5", "t→i R@10",
        "class R@1 i→t", "class R@1 t→i", "zero-shot i→t", "zero-shot t→i", "pred-space R@1 i→t / t→i", "params", "best epoch", "s/run",
    ]  # fmt: skip
    rows = []
    for v, c in agg.items():
        pred = f"{_fmt(c['pred_i2t_r1'])} / {_fmt(c['pred_t2i_r1'])}" if "pred_i2t_r1" in c else "—"
        rows.append(
            [v]
            + [_fmt(c[f"{d}_r{k}"]) for d in ("i2t", "t2i") for k in (1, 5, 10)]
            + [_fmt(c["i2t_class_r1"]), _fmt(c["t2i_class_r1"]), _fmt(c["zs_i2t"]), _fmt(c["zs_t2i"]), pred]
            + [int(c["params"][0]), "/".join(str(int(e)) for e in c["best_epoch"]), f"{np.mean(c['train_s']):.0f}"]
        )
    chance = [f"{100 * k / n_test:.2f}" for k in (1, 5, 10)]
    rows.append(["chance"] + chance + chance + ["≈10", "≈10", "≈10", "≈10", "", "", "", ""])
    orc = [f"{100 * oracle[k]:.1f}" for k in (1, 5, 10)]
    rows.append(["oracle: perfect class+ink+slant match"] + orc + orc + ["100", "100", "", "", "", "", "", ""])
    report.add_table(
        "Test retrieval and zero-shot classification, % (mean ± std over seeds)",
        cols,
        rows,
        note="Exact-pair R@K over the 597 test pairs (ties between identical captions counted by their expectation); "
        "class R@1: the top item has the query's class; zero-shot: class-name prompts (3 per class, no attributes). "
        "The oracle row is the ceiling set by the captions: items of one (class, ink, slant) group are indistinguishable. "
        "Best epoch: the epoch of the best validation recall per seed (the state evaluated); equal to the last epoch "
        "means the run was still improving when it stopped.",
    )


def build_report(params: Any, progress: JobContext) -> Report:
    """The study: features once, every (variant, seed), aggregation, plots, §7 checks, paper claims, reading."""
    from core.device import device_provenance, resolve_device
    from methods.m3_jepa import plots
    from methods.m3_jepa.checks import all_checks
    from methods.m3_jepa.data import oracle_recall, split
    from methods.m3_jepa.features import describe, encoder_digest, llm_digest, load_features

    t0 = time.perf_counter()
    dev = resolve_device(getattr(params, "device", "cpu"))  # a cuda study on a worker without CUDA fails here, at once
    amp = getattr(params, "amp", "off")
    feats = load_features(progress=progress.sub(0.0, 0.1))
    llm_before, enc_before = llm_digest(), encoder_digest()
    results = run_all(params, progress.sub(0.1, 0.97), device=dev)
    llm_after, enc_after = llm_digest(), encoder_digest()
    test = split()["test"]
    n_test = len(test.labels)
    oracle = {k: oracle_recall(test, k) for k in (1, 5, 10)}
    agg = aggregate(results)
    info = describe(feats)

    best = agg.get("m3_jepa")
    summary = (
        f"M3-JEPA on digits ↔ captions ({params.seeds} seeds): mean R@1 "
        + (f"{_fmt(best['mean_r1'])} % (i→t {_fmt(best['i2t_r1'])}, t→i {_fmt(best['t2i_r1'])})" if best else "n/a")
        + f"; chance {100 / n_test:.2f} %, caption-limited oracle {100 * oracle[1]:.1f} %."
    )
    report = Report(title="M3-JEPA: MoE predictor + AGD on digits ↔ captions", summary=summary)
    _main_table(report, agg, n_test, oracle)

    rows = [
        (v, float(np.mean(c["i2t_r1"])), mean_sd(c["i2t_r1"]).sd, float(np.mean(c["t2i_r1"])), mean_sd(c["t2i_r1"]).sd)
        for v, c in agg.items()
    ]
    report.add_figure("recall.png", plots.recall_bars(rows, 1 / n_test, oracle[1]), caption="R@1 per variant")
    m3_usage = [r["usage"] for r in results if r["variant"] == "m3_jepa" and r["usage"]]
    if m3_usage:
        usage = {
            k: {f: np.mean([u[k][f] for u in m3_usage], axis=0).tolist() for f in ("weight", "selected")}
            for k in m3_usage[0]
        }
        report.add_figure(
            "expert_usage.png",
            plots.expert_usage(usage, f"M3-JEPA expert usage on the test split (mean over {len(m3_usage)} seeds)"),
            caption="Expert usage per (direction, branch)",
        )
        report.data["expert_usage"] = usage
    sampled = next((r for r in results if r["variant"] == "m3_jepa_sampled"), None)
    if sampled:
        report.add_figure(
            "sampling.png", plots.sampling_curve(sampled["p_t2i"], sampled["val"]), caption="AGD task sampling"
        )

    mech = all_checks()
    rr = [r for r in results if r["config"]["schedule"] == "round_robin" and r["config"]["model"] == "m3"]
    mech.append(
        (
            "AGD: round-robin task sequence alternates t2i/i2t every step (one direction per step)",
            bool(rr) and all(r["alternates"] and r["task_counts"]["both"] == 0 for r in rr),
            f"{len(rr)} round-robin runs; task counts of the first: {rr[0]['task_counts'] if rr else 'n/a'}",
        )
    )
    frozen_ok = (
        llm_before == llm_after and enc_before == enc_after and all(r.get("encoder_unchanged", True) for r in results)
    )
    mech.append(
        (
            "Frozen encoders bitwise unchanged after training (SHA-256 of all weights)",
            frozen_ok,
            f"CNN {enc_before[:12]} → {enc_after[:12]}; SmolLM2 {llm_before[:12]} → {llm_after[:12]}",
        )
    )
    dirs = direction_checks(results, agg, n_test)
    check_rows = [[n, "pass" if ok else "FAIL", d] for n, ok, d in mech]
    check_rows += [[n, "n/a" if ok is None else ("pass" if ok else "FAIL"), d] for n, ok, d in dirs]
    report.add_table("§7 checks", ["check", "result", "measured"], check_rows)

    _paper(report, agg, results)
    report.add_section("What was shrunk", _shrunk(info, params))
    report.add_section("Reading", _reading(agg, results, dirs, oracle, n_test, params.epochs))
    report.add_json("runs.json", [{k: v for k, v in r.items() if k != "loss"} for r in results], caption="Every run")
    n_pass = sum(r[1] == "pass" for r in check_rows)
    report.metrics.update(
        {
            "m3_mean_r1": float(np.mean(best["mean_r1"])) if best else None,
            "checks_passed": n_pass,
            "checks_total": sum(r[1] != "n/a" for r in check_rows),
            "runs": len(results),
            "wall_s": round(time.perf_counter() - t0, 1),
            **device_provenance(dev, amp),
        }
    )
    report.data.update({"results": results, "features": info, "oracle": oracle, "params": params.model_dump()})
    return report


def _paper(report: Report, agg: dict[str, dict[str, list[float]]], results: list[dict[str, Any]]) -> None:
    mean = {v: float(np.mean(c["mean_r1"])) for v, c in agg.items()}

    def diff(a: str, b: str) -> str:
        d = _paired(results, a, b)
        return f"{a} − {b}: {100 * d[0]:+.1f} ± {100 * d[1]:.1f} pts mean R@1" if d else "not run"

    ours = {
        0: (
            f"digits↔captions (not comparable): M3-JEPA mean R@1 {100 * mean['m3_jepa']:.1f} % vs CLIP-style linear "
            f"{100 * mean['clip_linear']:.1f} %"
            if {"m3_jepa", "clip_linear"} <= set(mean)
            else "not run"
        ),
        1: diff("m3_jepa", "mlp"),
        2: f"{diff('m3_jepa', 'no_cl')}; {diff('m3_jepa', 'no_reg')}",
        3: diff("m3_jepa", "summed"),
        4: "not reproduced (no audio data offline)",
        5: (
            f"class-name prompts on digits: zero-shot i→t {_fmt(agg['m3_jepa']['zs_i2t'])} % (chance 10 %)"
            if "m3_jepa" in agg
            else "not run"
        ),
    }
    rows = [[what, claim, ours[i]] for i, (what, claim) in enumerate(PAPER_CLAIMS)]
    report.add_table(
        "The paper's claims beside ours",
        ["paper (arXiv 2409.05929v6)", "paper's result", "ours (this run)"],
        rows,
        note="The paper's exact table values could not be retrieved offline (spec §4 forbids quoting them from memory); "
        "its claims are listed as claims. Its scale (DINOv2-L + Llama-3-8B with LoRA, COCO/Flickr30K, 140M trainable) "
        "is not comparable to 8×8 digits with a 135M text encoder.",
    )


def _shrunk(info: dict[str, Any], params: Any) -> str:
    return "\n".join(
        [
            "| | paper (§3) | here (§6) |",
            "|---|---|---|",
            "| image encoder | DINOv2-large (1024-d), LoRA on last 3 layers | 3-layer CNN pretrained once with CE on 500 fit images, frozen: 16 tokens × 64 |",
            "| text encoder | Llama-3-8B (4096-d), LoRA on last 3 layers | SmolLM2-135M-Instruct, frozen, mean of last two hidden layers (576-d), fixed per-token LayerNorm |",
            "| predictor | h = 2048, E = 12, k = 4 | h = 128, E = 6, k = 2 (same structure) |",
            f"| data | COCO / Flickr30K | sklearn digits: {info['fit']} fit / {info['val']} val / {info['test']} test; "
            f"{info['unique_captions']} distinct template captions ({info['test_unique_captions']} among the test items) |",
            f"| training | batch 120, ≤ 500 epochs, early stop 10, AMP, lr peak 1.5e-3 | batch 120, {params.epochs} epochs, "
            f"early stop {params.patience or 'off'}, fp32, lr peak 1e-3 (paper's start/final ratios kept) |",
            f"| seeds | — | {params.seeds} per variant |",
            "",
            "Captions are synthetic: six paraphrase templates with synonyms, each carrying the class and two attributes "
            "measured on the image (ink mass tertile within the class; slant tertile from the ink's second moments), "
            "so captions tell images apart only up to (class, ink, slant) — the oracle row of the table. "
            "LoRA (optional in §6) is not used: both encoders are fully frozen and their features precomputed.",
        ]
    )


def _reading(
    agg: dict[str, dict[str, list[float]]],
    results: list[dict[str, Any]],
    dirs: list[tuple[str, bool | None, str]],
    oracle: dict[int, float],
    n_test: int,
    epochs: int,
) -> str:
    mean = {v: float(np.mean(c["mean_r1"])) for v, c in agg.items()}
    parts = []
    if "m3_jepa" in mean:
        c = agg["m3_jepa"]
        m = mean["m3_jepa"]
        parts.append(
            f"M3-JEPA reaches {100 * m:.1f} % exact-pair R@1 (mean of both directions), {m * n_test:.0f}× chance and "
            f"{100 * m / oracle[1]:.0f} % of the {100 * oracle[1]:.1f} % ceiling the captions allow; class-level R@1 is "
            f"{_fmt(c['i2t_class_r1'])} % image→text and {_fmt(c['t2i_class_r1'])} % text→image, zero-shot class-name "
            f"accuracy {_fmt(c['zs_i2t'])} % (chance 10 %)."
        )
        still = sum(int(e) >= epochs for e in c["best_epoch"])
        if still:
            parts.append(
                f"In {still} of {len(c['best_epoch'])} seeds its best validation epoch is the last one ({epochs}): the "
                "predictor was still improving, so its numbers are a lower bound for this budget."
            )
    held = [n for n, ok, _ in dirs if ok]
    failed = [n for n, ok, _ in dirs if ok is False]
    if held:
        parts.append("Expected directions that hold here: " + "; ".join(held) + ".")
    if failed:
        parts.append("Expected directions that do not hold here: " + "; ".join(failed) + ".")
    if "clip_linear" in mean and "m3_jepa" in mean:
        d = _paired(results, "m3_jepa", "clip_linear")
        if d:
            ahead = "ahead of" if d[0] > 0 else "behind"
            parts.append(
                f"The JEPA predictor is {ahead} the CLIP-style linear projector by {100 * abs(d[0]):.1f} ± {100 * d[1]:.1f} pts "
                f"mean R@1 (paired over seeds); the linear baseline trains both directions in every step at a small fraction of the "
                "cost, while AGD gives each direction half the steps."
            )
    n_seeds = len({r["config"]["seed"] for r in results})
    parts.append(
        f"What would change the conclusion: differences within the seed std are not resolved by {n_seeds} seeds; "
        f"longer training (the spec preset's 50 epochs, the paper's up to 500) could reorder variants that are still "
        "improving; a richer caption set would raise the ceiling; and the paper's MoE and AGD effects are claimed at "
        "140M trainable parameters with LoRA-tuned 8B/300M encoders on COCO/Flickr30K, which this CPU version does not test."
    )
    return " ".join(parts)


def train_report(result: dict[str, Any]) -> Report:
    from methods.m3_jepa import plots

    m = result["metrics"]
    report = Report(
        title=f"M3-JEPA {result['variant']} seed {result['config']['seed']}",
        summary=f"test R@1 i→t {100 * m['i2t_r1']:.1f} %, t→i {100 * m['t2i_r1']:.1f} %; zero-shot {100 * m['zs_i2t']:.1f} % "
        f"(best epoch {result.get('best_epoch')}, {result['train_s']:.0f} s)",
    )
    report.add_table(
        "Test metrics, %",
        ["metric", "value"],
        [[k, round(100 * v, 2)] for k, v in m.items()],
    )
    if result.get("usage"):
        report.add_figure("expert_usage.png", plots.expert_usage(result["usage"]), caption="Expert usage")
    report.metrics.update({k: float(v) for k, v in m.items()})
    report.data = {"result": result}
    return report


def retrieve_report(r: dict[str, Any]) -> Report:
    from methods.m3_jepa import plots
    from methods.m3_jepa.data import INK, SLANT

    hits = r["hits"]
    report = Report(
        title=f"Nearest digits to “{r['caption']}”",
        summary=", ".join(f"{h['label']} ({h['similarity']:.2f})" for h in hits),
    )
    labels = [f"{h['label']} {INK[h['ink']]}\n{SLANT[h['slant']]} {h['similarity']:.2f}" for h in hits]
    report.add_figure("digits.png", plots.digit_grid(r["images"], labels), caption="Nearest test digits (t→i)")
    if r["routing"]:
        report.add_figure(
            "routing.png", plots.token_routing(r["tokens"], r["routing"]), caption="Expert routing per token"
        )
    report.add_table(
        "Nearest test digits",
        ["rank", "digit", "ink", "slant", "its caption", "cosine"],
        [
            [h["rank"], h["label"], INK[h["ink"]], SLANT[h["slant"]], h["caption"], round(h["similarity"], 4)]
            for h in hits
        ],
    )
    report.data = {k: v for k, v in r.items() if k != "images"}
    report.metrics["top1_label"] = hits[0]["label"]
    return report


def variants_table() -> list[dict[str, str]]:
    return [{"variant": v, "description": d} for v, (_, d) in VARIANTS.items()]
