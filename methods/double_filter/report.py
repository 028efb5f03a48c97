"""The Double-Filter experiment report: arms × tasks × seeds, baselines, GA curves, §7 checks, reading."""

from __future__ import annotations

import os
import platform
from typing import Any

import numpy as np

from core.jobs import Report
from methods.double_filter.config import PAPER

METRIC = {"vqa": "accuracy", "nlvr": "accuracy", "retrieval": "R@1"}
ARM_ORDER = ("none", "ipf", "alf", "both", "random_patches", "fg_only", "random_mask")


def aggregate(runs: list[dict]) -> dict[str, dict[str, dict]]:
    """summary[task][arm]: mean/std score over seeds, background-question accuracy, FLOPs, latency."""
    out: dict[str, dict[str, dict]] = {}
    for run in runs:
        for arm, r in run["arms"].items():
            cell = out.setdefault(run["task"], {}).setdefault(
                arm, {"scores": [], "bgs": [], "lat": [], "fl": [], "z": []}
            )
            cell["scores"].append(r["score"])
            cell["bgs"].append(r["per_kind"].get("background", np.nan))
            cell["lat"].append(r["latency_ms"])
            cell.setdefault("model", []).append(r["model_ms"])
            cell["kept"] = f"{r['kept']}/{r['patches_total']}"
            cell["fl"].append(r["flops"]["total"])
            cell["z"].append(0 if r["genome"] is None else len(r["genome"]) - sum(r["genome"]))
            cell["rho"] = r["rho"] if r["patches"] != "all" else 1.0
    for task, arms in out.items():
        for cell in arms.values():
            s = np.array(cell["scores"])
            cell.update(score=float(s.mean()), score_std=float(s.std()), n=len(s), bg=float(np.nanmean(cell["bgs"]))
                        if not np.all(np.isnan(cell["bgs"])) else float("nan"),
                        latency=float(np.mean(cell["lat"])), latency_std=float(np.std(cell["lat"])),
                        model_ms=float(np.mean(cell["model"])),
                        flops=float(np.mean(cell["fl"])), zeros=float(np.mean(cell["z"])))  # fmt: skip
        out[task] = {a: arms[a] for a in ARM_ORDER if a in arms}
    return out


def baselines(tasks: list[str], n_test: int) -> dict[str, tuple[float, str]]:
    """Majority / chance per task on the same test split."""
    from methods.double_filter.tasks import build

    out = {}
    for task in tasks:
        d = build(task, "test", n_test)
        labels = d.labels.numpy()
        if task == "retrieval":
            rel = []
            for lo in range(0, len(labels), 100):
                g = labels[lo : lo + 100]
                rel += [(g == x).mean() for x in g]
            out[task] = (float(np.mean(rel)), "chance R@1 (random ranking, galleries of 100)")
        elif task == "vqa":
            kinds = np.asarray(d.kinds)
            per_type = sum((labels[kinds == k] == np.bincount(labels[kinds == k]).argmax()).sum() for k in set(d.kinds))
            out[task] = (float(per_type / len(labels)), "majority answer per question type")
        else:
            out[task] = (float(max(labels.mean(), 1 - labels.mean())), "majority label")
    return out


def _pct(x: float) -> str:
    return "–" if x != x else f"{100 * x:.1f}"


def build_report(options: Any, runs: list[dict], checks: list[tuple[str, bool, str]], info: dict, figs: dict) -> Report:
    summary = aggregate(runs)
    from methods.double_filter.checks import directional

    checks = checks + directional(summary)
    base = baselines(list(summary), options.n_test)
    seeds = options.seeds
    report = Report(
        title="Double-Filter — patch & layer filtering of a tiny two-stream VLP",
        summary=(
            f"{len(runs)} (task, seed) runs: {', '.join(summary)} × {seeds} seed(s); IPF at ρ = {options.rho}, "
            f"GA over {len(runs[0]['ga']['best'])} sub-layers (population {options.population}, "
            f"{options.generations} generations, γ = {options.gamma}). "
            f"§7 checks passed: {sum(c[1] for c in checks)}/{len(checks)}."
        ),
    )
    cli = options.cli_options() if hasattr(options, "cli_options") else ""
    report.add_section(
        "Command",
        f"`paperworks reproduce double_filter{cli}` — {info.get('total_seconds', 0):.0f} s in this process "
        f"(finished (task, seed) runs are stored and reused) on {platform.platform()}, "
        f"{os.cpu_count()} CPUs shared with other jobs, torch threads = {options.threads}.",
    )
    rows = []
    for task, arms in summary.items():
        ref = arms["none"]
        for arm, c in arms.items():
            rows.append([
                task, arm, c["kept"], f"{c['zeros']:.1f}",
                f"{_pct(c['score'])} ± {_pct(c['score_std'])}", f"{100 * (c['score'] - ref['score']):+.1f}",
                f"{c['flops'] / 1e6:.2f}", f"{100 * (1 - c['flops'] / ref['flops']):.1f}",
                f"{c['model_ms']:.3f}", f"{ref['model_ms'] / c['model_ms']:.2f}×",
                f"{c['latency']:.3f}", f"{ref['latency'] / c['latency']:.2f}×",
            ])  # fmt: skip
    report.add_table(
        "Score vs cost per task and arm (mean ± std over seeds)",
        ["task", "arm", "patches kept", "sub-layers off", "score %", "Δ vs none (pts)", "MFLOPs/sample",
         "FLOPs saved %", "model ms/sample", "model speed-up", "+ selection ms/sample", "end-to-end speed-up"],
        rows,
        note="Score: VQA and NLVR accuracy, retrieval R@1 (mean of image→text and text→image; ITC top-16 re-ranked by "
        "ITM). FLOPs are analytic per sample (NLVR: two images) and include the IPF scorer and the detector for the "
        "patch-filter arms. Latency: test-set inference wall-clock per sample of the model alone, and with the patch "
        "selection (scorer pass + the Python connected-component detector) added, on a shared, loaded 2-core CPU "
        "(compare arms within this table only). Retrieval: FLOPs per image–text pair (one encoding of each plus one "
        "fusion pass), latency per test item including its share of the gallery's ITC and the 2 × 16 ITM re-ranking "
        "passes. Baselines: "
        + "; ".join(f"{t}: {_pct(v)} % ({what})" for t, (v, what) in base.items()),
    )  # fmt: skip
    if "vqa" in summary:
        from methods.double_filter.tasks import QTYPES

        per = {a: [] for a in summary["vqa"]}
        for run in runs:
            if run["task"] == "vqa":
                for a, r in run["arms"].items():
                    per[a].append([r["per_kind"].get(q, np.nan) for q in QTYPES])
        report.add_table(
            "VQA accuracy % per question type (mean over seeds)",
            ["arm", *QTYPES],
            [[a, *(_pct(v) for v in np.nanmean(np.array(v), 0))] for a, v in per.items()],
            note="The background question is the one a foreground-only patch selection should hurt (spec §7.5).",
        )
    ga_rows = []
    for run in runs:
        g = run["ga"]
        off = [n for n, b in zip(g["sublayers"], g["best"], strict=True) if not b]
        ga_rows.append([run["task"], run["seed"], "".join(map(str, g["best"])), ", ".join(off) or "—",
                        f"{g['best_fitness']:.4f}", f"{g['best_curve'][0]:.4f}", g["evaluations"]])  # fmt: skip
    report.add_table(
        "ALF: the GA's best genome per run",
        ["task", "seed", "genome", "switched off", "best fitness", "generation-0 best", "distinct genomes scored"],
        ga_rows,
        note="Genome order: vision (mhsa, ffn) × blocks, text (mhsa, ffn) × blocks, fusion (mhsa, cross, ffn) × blocks.",
    )
    report.add_table(
        "§7 checks", ["check", "pass", "detail"], [[c, "PASS" if ok else "FAIL", d] for c, ok, d in checks]
    )
    report.add_table("Paper (spec §4: METER/ViLT on VQAv2, NLVR2, Flickr30k) — context, not comparable",
                     ["model", "task", "quantity", "reported"], [list(r) for r in PAPER])  # fmt: skip
    for name, (fig, caption) in figs.items():
        report.add_figure(name, fig, caption=caption)
    report.add_json("runs.json", runs, caption="every (task, seed) run: arms, scores, FLOPs, latency, GA curves")
    report.add_section("Figures", "\n\n".join(f"![{c}](artifact:{n})" for n, (_, c) in figs.items()))
    report.add_section("What was shrunk", _shrunk(options, info))
    report.add_section("Reading", _reading(summary, checks, base, options, _per_type_none(runs, options.n_test)))
    for task, arms in summary.items():
        for arm, c in arms.items():
            report.metrics[f"{task}_{arm}_score"] = round(c["score"], 4)
        report.metrics[f"{task}_both_flops_saved"] = round(1 - arms["both"]["flops"] / arms["none"]["flops"], 4)
    report.metrics["checks_passed"] = sum(c[1] for c in checks)
    report.metrics["checks_total"] = len(checks)
    report.data = {"runs": runs, "checks": [list(c) for c in checks], "pretrain": info, "machine": platform.platform()}
    return report


def _shrunk(options: Any, info: dict) -> str:
    secs = info.get("seconds")
    return (
        "METER (CLIP-ViT-B/16 + RoBERTa + 6 co-attention layers) / ViLT → a tiny two-stream VLP: ViT 4 layers on 32×32 "
        "images in 16 patches of 8×8, text Transformer 2 layers, 2 fusion layers (text self-attention, cross-attention "
        "to the image tokens, FFN), width 64, pretrained here with ITC + ITM (hard negatives) on "
        f"{info.get('n_scenes', 'the')} procedural captioned scenes"
        + (f" ({secs:.0f} s)" if secs else "")
        + ". VQAv2 / NLVR2 / Flickr30k → synthetic VQA (25 answers), NLVR (true/false statement about an image pair) "
        "and caption retrieval on the renderer's scenes "
        f"({options.n_train} train / {options.n_val} val / {options.n_test} test items per task). YOLO → a "
        f"{'connected-component detector on the rendered image' if options.detector == 'components' else 'the renderer’s ground-truth boxes'}"
        " behind the same `detect(image) -> boxes` interface. IPF importance = [CLS]→patch attention of the frozen "
        f"pretrained model's first {options.score_layers} vision block(s) (its FLOPs counted). Full fine-tuning for "
        f"{options.steps} steps (batch {options.batch_size}, AdamW {options.lr}) per arm instead of epochs on the real "
        f"data. IPF ρ = {options.rho} (spec default 0.6; §7.5 names ρ = 0.5), r_fg = {options.r_fg}, τ_ov = "
        f"{options.tau}. GA as spec §3.2 (population {options.population}, {options.generations} generations, "
        f"tournament 3, uniform crossover 0.8, bit-flip 1/L, elitism 2, ≤ ⌈{options.max_drop}·L⌉ zeros, γ = "
        f"{options.gamma}), fitness measured zero-step on the validation split with the fully fine-tuned weights. "
        "Seeds vary fine-tuning (head init, batch order), the GA, and the random baselines; the pretrained backbone "
        "and the data splits are shared. Kept unchanged: two-stage patch selection, per-sub-layer binary genome, "
        "accuracy-vs-FLOPs fitness, elitist GA, FLOPs including the detector."
    )


def _delta(a: dict, b: dict) -> str:
    """``+1.2 pts (within seed noise)`` — noise when |Δ| < 2 × the larger seed std (or < 1 point)."""
    d = 100 * (a["score"] - b["score"])
    noise = abs(d) < max(1.0, 200 * max(a["score_std"], b["score_std"]))
    return f"{d:+.1f} pts" + (" (within seed noise)" if noise else "")


def _reading(summary: dict, checks: list, base: dict, options: Any, per_type_none: dict) -> str:
    parts = []
    for task, arms in summary.items():
        ref, ipf, alf, both = arms["none"], arms["ipf"], arms["alf"], arms["both"]
        saved = 100 * (1 - both["flops"] / ref["flops"])
        parts.append(
            f"**{task}** ({METRIC[task]}, baseline {_pct(base[task][0])} %): no filter {_pct(ref['score'])} ± "
            f"{_pct(ref['score_std'])} %; IPF {_delta(ipf, ref)}, ALF {_delta(alf, ref)} "
            f"({alf['zeros']:.1f} sub-layers off on average), both {_pct(both['score'])} ± {_pct(both['score_std'])} % "
            f"= {_delta(both, ref)} at {saved:.0f} % fewer analytic FLOPs; measured model speed-up "
            f"{ref['model_ms'] / both['model_ms']:.2f}× ({ref['latency'] / both['latency']:.2f}× once the patch "
            "selection is timed too)."
            + (
                f" The no-filter model is within 3 points of the {base[task][1]}: it has hardly learned {task} at "
                "this step budget, so its arm comparisons say little about the method."
                if ref["score"] < base[task][0] + 0.03
                else ""
            )
        )
    vqa = summary.get("vqa", {})
    if {"ipf", "random_patches", "fg_only", "random_mask"} <= set(vqa):
        bgs = [vqa[a]["bg"] for a in ("ipf", "random_patches", "fg_only")]
        parts.append(
            f"§7.5 on VQA (mean over seeds): IPF {_pct(vqa['ipf']['score'])} % vs random patches "
            f"{_pct(vqa['random_patches']['score'])} % ({_delta(vqa['ipf'], vqa['random_patches'])}) and "
            f"foreground-first {_pct(vqa['fg_only']['score'])} % ({_delta(vqa['ipf'], vqa['fg_only'])}); background "
            f"questions {', '.join(_pct(b) for b in bgs)} % (IPF, random, foreground-first)"
            + (
                " — every arm answers (almost) all of them, so this run cannot show IPF's advantage there: with 16 patches "
                "and 1–3 objects, foreground-first selection still fills its budget with background patches in most "
                "scenes and the foreground patches themselves show background at their edges"
                if min(bgs) >= 0.99
                else ""
            )
            + f". GA mask {_pct(vqa['alf']['score'])} % vs a random mask with as many zeros "
            f"{_pct(vqa['random_mask']['score'])} % ({_delta(vqa['alf'], vqa['random_mask'])})."
        )
    if "vqa" in per_type_none:
        weak = [q for q, (acc, maj) in per_type_none["vqa"].items() if acc < maj + 0.05]
        if weak:
            parts.append(
                "What the models learned: without filters the fine-tuned VQA model is at (or within 5 points of) the "
                f"majority answer on {', '.join(weak)} questions; its accuracy above the baseline comes from "
                "background and colour questions, so the VQA comparisons rest mainly on those two types."
            )
    failed = [c[0] for c in checks if not c[1]]
    verdict = (
        "All §7 checks pass."
        if not failed
        else "§7 checks 1–4 (the structural ones) "
        + ("pass" if not any(not c[0].startswith("5.") for c in checks if not c[1]) else "do not all pass")
        + "; failed: "
        + "; ".join(failed)
        + "."
    )
    tail = (
        f" With {options.seeds} seeds a difference below about two seed standard deviations is not evidence either "
        "way, and several arm differences here are of that size. What holds: the filters cut FLOPs as designed "
        "and the structural properties hold exactly. The paper's claim (within 0.27–0.65 points of full "
        "fine-tuning at a large FLOPs cut on METER/ViLT) can only be compared in direction: the tasks are "
        "synthetic, the model is tiny and under-trained at this step budget (the arms are compared at equal "
        f"steps, {options.steps} each), images have 16 patches instead of 196–576 (so the IPF scorer and detector "
        "are a large share of what dropping patches saves, and its per-image Python detector dominates its "
        "latency), and the GA's fitness is a zero-step proxy. The connected-component detector splits striped "
        "or dark objects on dark backgrounds into several boxes. What would change the conclusion: a longer "
        "fine-tuning budget, the spec's ρ = 0.6, a learned detector, larger images (more patches), or the paper's "
        "own fitness and GA settings once its text is available."
    )
    return "\n\n".join(parts) + "\n\n" + verdict + tail


def _per_type_none(runs: list[dict], n_test: int) -> dict:
    """{"vqa": {type: (accuracy of the no-filter arm, majority-answer accuracy)}} over the test split."""
    from methods.double_filter.tasks import build

    vqa = [r for r in runs if r["task"] == "vqa"]
    if not vqa:
        return {}
    d = build("vqa", "test", n_test)
    kinds, labels = np.asarray(d.kinds), d.labels.numpy()
    out = {}
    for q in sorted(set(d.kinds)):
        lab = labels[kinds == q]
        maj = float((lab == np.bincount(lab).argmax()).mean())
        out[q] = (float(np.mean([r["arms"]["none"]["per_kind"][q] for r in vqa])), maj)
    return {"vqa": out}
