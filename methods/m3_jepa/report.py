"""Reports: the study / reproduction (variants × seeds, §7 checks, reading), one training run, one retrieval."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.evidence import Evidence
from core.jobs import Report, ReproducerOptions
from core.stats import mean_sd
from methods.m3_jepa.config import PAPER_CLAIMS, VARIANTS

ABLATIONS = ("mlp", "k1", "k6", "no_cl", "no_reg", "summed")


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


def _main_table(
    report: Report,
    agg: dict[str, dict[str, list[float]]],
    n_test: int,
    oracle: dict[int, float],
    title: str = "Test retrieval and zero-shot classification, % (mean ± std over seeds)",
) -> None:
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
        title,
        cols,
        rows,
        note="Exact-pair R@K over the 597 test pairs (ties between identical captions counted by their expectation); "
        "class R@1: the top item has the query's class; zero-shot: class-name prompts (3 per class, no attributes). "
        "The oracle row is the ceiling set by the captions: items of one (class, ink, slant) group are indistinguishable. "
        "Best epoch: the epoch of the best validation recall per seed (the state evaluated); equal to the last epoch "
        "means the run was still improving when it stopped.",
    )


def raw_values(results: list[dict[str, Any]], long_results: list[dict[str, Any]], n_test: int,
               reference: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Per variant, every seed's metrics in seed order (``long`` for the long-budget arms); chance; the reference."""
    raw: dict[str, Any] = {"chance_r1": 1 / n_test, "reference": reference}
    for key, runs in (("runs", results), ("long", long_results)):
        cells: dict[str, Any] = {}
        for r in sorted(runs, key=lambda r: (r["variant"], r["config"]["seed"])):
            cell = cells.setdefault(r["variant"], {"seed": []})
            cell["seed"].append(r["config"]["seed"])
            for k, v in r["metrics"].items():
                cell.setdefault(k, []).append(float(v))
            if "pred_i2t_r1" in r["metrics"]:
                cell.setdefault("pred_mean_r1", []).append(
                    0.5 * (r["metrics"]["pred_i2t_r1"] + r["metrics"]["pred_t2i_r1"])
                )
            cell.setdefault("final_reg", []).append(float(r["final_reg"]))
            cell.setdefault("best_epoch", []).append(int(r.get("best_epoch") or 0))
        if cells:
            raw[key] = cells
    return raw


def evidence(raw: dict[str, Any], epochs: int, long_epochs: int) -> Evidence:
    """The headline claims over the per-seed values (paired by seed, t intervals, R@1 in points)."""
    ev = Evidence(raw)
    runs = raw["runs"]
    pts = {"scale": 100.0, "digits": 2, "unit": "pts"}

    def mean(v: str, key: str = "mean_r1", where: str = "runs") -> float:
        return 100 * float(np.mean(raw[where][v][key]))

    if "m3_jepa" in runs:
        ev.headline(
            "M3-JEPA retrieves the exact pair above chance (mean R@1)", stat="mean", a="runs/m3_jepa/mean_r1",
            null="chance_r1", paper="SOTA at its size on COCO/Flickr30K (not comparable)",
            context=f"chance {100 * raw['chance_r1']:.2f}; caption-limited oracle in the table", **pts,
        )  # fmt: skip
        pairs = [
            ("mlp", "MoE beats the MLP predictor", "MoE better"),
            ("no_cl", "L_cl is needed (without it retrieval collapses)", "L_cl is the alignment term"),
            ("no_reg", "L_reg helps (M3-JEPA beats no_reg)", "both terms help"),
            ("summed", "AGD beats the summed (joint) loss", "AGD better"),
            ("clip_linear", "M3-JEPA beats the CLIP-style linear baseline", "beats larger baselines (BLIP-2)"),
            ("random_captions", "M3-JEPA beats the random-caption control", "— (control)"),
        ]
        for other, claim, paper in pairs:
            if other in runs and runs[other]["seed"] == runs["m3_jepa"]["seed"]:
                ev.headline(
                    claim, stat="paired_diff", a="runs/m3_jepa/mean_r1", b=f"runs/{other}/mean_r1", paper=paper,
                    context=f"{other} {mean(other):.2f}, M3-JEPA {mean('m3_jepa'):.2f}", **pts,
                )  # fmt: skip
        ref = raw["reference"]
        ceiling = 50 * (ref["i2t"]["group_mean_r1"] + ref["t2i"]["group_mean_r1"])
        ev.headline(
            "The prediction branch retrieves above chance (pred-space mean R@1)", stat="mean",
            a="runs/m3_jepa/pred_mean_r1", null="chance_r1", paper="latent prediction (JEPA) is the method's core",
            context=f"group-mean predictor {ceiling:.2f} (the best a predictor of these targets reaches)", **pts,
        )  # fmt: skip
        ev.headline(
            "The prediction branch reaches the mean-target loss (L_reg below it)", stat="mean",
            a="runs/m3_jepa/final_reg", null="reference/reg_mean_target", direction="less", digits=3,
            paper="—", context=f"predicting the mean target: {ref['reg_mean_target']:.3f} (both directions' mean)",
        )  # fmt: skip
    long = raw.get("long", {})
    if "m3_jepa" in long:
        lp = "long/m3_jepa"
        if runs.get("m3_jepa", {}).get("seed") == long["m3_jepa"]["seed"]:
            ev.headline(
                f"{long_epochs} epochs raise M3-JEPA's R@1 over {epochs}", stat="paired_diff", a=f"{lp}/mean_r1",
                b="runs/m3_jepa/mean_r1", paper="trained ≤ 500 epochs", context=f"{epochs} epochs {mean('m3_jepa'):.2f}",
                **pts,
            )  # fmt: skip
        if "clip_linear" in long and long["clip_linear"]["seed"] == long["m3_jepa"]["seed"]:
            ev.headline(
                f"M3-JEPA beats the CLIP-style linear baseline at {long_epochs} epochs", stat="paired_diff",
                a=f"{lp}/mean_r1", b="long/clip_linear/mean_r1", paper="beats larger baselines (BLIP-2)",
                context=f"clip_linear {mean('clip_linear', where='long'):.2f}, M3-JEPA {mean('m3_jepa', where='long'):.2f}",
                **pts,
            )  # fmt: skip
        ev.headline(
            f"The prediction branch retrieves above chance at {long_epochs} epochs", stat="mean",
            a=f"{lp}/pred_mean_r1", null="chance_r1", paper="—",
            context=f"{epochs} epochs {mean('m3_jepa', 'pred_mean_r1'):.2f}" if "m3_jepa" in runs else "", **pts,
        )  # fmt: skip
    return ev


def study_report(
    params: Any,
    results: list[dict[str, Any]],
    long_results: list[dict[str, Any]],
    *,
    mech: list[tuple[str, bool, str]],
    frozen: dict[str, Any],
    info: dict[str, Any],
    oracle: dict[int, float],
    n_test: int,
    reference: dict[str, Any],
    seconds: float,
    device: Any = "cpu",
) -> Report:
    """The study's Report: headline claims first (results.json), the reading, the tables, figures and §7 checks."""
    from core.device import device_provenance
    from core.provenance import provenance_line
    from methods.m3_jepa import plots

    amp = getattr(params, "amp", "off")
    long_epochs = getattr(params, "long_epochs", 0)
    agg = aggregate(results)
    long_agg = aggregate(long_results) if long_results else {}
    raw = raw_values(results, long_results, n_test, reference)
    ev = evidence(raw, params.epochs, long_epochs)
    counts = ev.counts()
    best = agg.get("m3_jepa")
    summary = (
        f"M3-JEPA on digits ↔ captions ({params.seeds} seeds, {params.epochs} epochs"
        + (f"; {', '.join(long_agg)} also at {long_epochs}" if long_agg else "")
        + "): mean R@1 "
        + (f"{_fmt(best['mean_r1'])} % (i→t {_fmt(best['i2t_r1'])}, t→i {_fmt(best['t2i_r1'])})" if best else "n/a")
        + f"; chance {100 / n_test:.2f} %, caption-limited oracle {100 * oracle[1]:.1f} %. Headline claims: "
        f"{counts['holds']} hold, {counts['fails']} fail, {counts['not resolved']} not resolved (paired by seed, "
        "95 % t intervals)."
    )
    report = Report(title="M3-JEPA: MoE predictor + AGD on digits ↔ captions", summary=summary)
    report.sections.append(ev.section())
    dirs = direction_checks(results, agg, n_test)
    report.add_section("Reading", _reading(agg, results, dirs, oracle, n_test, params.epochs, ev, raw, long_agg,
                                           long_epochs))  # fmt: skip
    _main_table(report, agg, n_test, oracle)
    if long_agg:
        _main_table(report, long_agg, n_test, oracle, title=f"The long-budget arms: {long_epochs} epochs")
    ref = reference
    report.add_table(
        "The prediction branch against what these targets allow (L_reg: SmoothL1 on the fit split)",
        ["direction", "L_reg of the mean target", "L_reg of the group mean", "group-mean predictor pred-space R@1 %"],
        [
            [
                d,
                f"{ref[d]['reg_mean_target']:.4f}",
                f"{ref[d]['reg_group_mean']:.4f}",
                f"{100 * ref[d]['group_mean_r1']:.2f}",
            ]
            for d in ("i2t", "t2i")
        ],  # fmt: skip
        note="i2t predicts the mean-pooled (normalised) caption states, t2i the mean-pooled CNN image tokens (rms "
        "≈ 4.8, not normalised). The group-mean predictor outputs, for each item, the mean target of its (class, ink, "
        "slant) group on the fit split: the best any predictor of these targets can do from what the captions say. "
        "M3-JEPA's final training L_reg (last 10 steps, both directions) is in the headline table.",
    )

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
    mech = list(mech)
    rr = [r for r in results if r["config"]["schedule"] == "round_robin" and r["config"]["model"] == "m3"]
    mech.append(
        (
            "AGD: round-robin task sequence alternates t2i/i2t every step (one direction per step)",
            bool(rr) and all(r["alternates"] and r["task_counts"]["both"] == 0 for r in rr),
            f"{len(rr)} round-robin runs; task counts of the first: {rr[0]['task_counts'] if rr else 'n/a'}",
        )
    )
    mech.append(("Frozen encoders bitwise unchanged after training (SHA-256 of all weights)", frozen["ok"],
                 frozen["detail"]))  # fmt: skip
    check_rows = [[n, "pass" if ok else "FAIL", d] for n, ok, d in mech]
    check_rows += [[n, "n/a" if ok is None else ("pass" if ok else "FAIL"), d] for n, ok, d in dirs]
    report.add_table(
        "§7 checks (the mechanical ones; the expected directions on seed means, superseded by the headline table)",
        ["check", "result", "measured"],
        check_rows,
    )
    _paper(report, agg, results)
    report.add_section(
        "Command",
        f"`paperworks reproduce m3_jepa{params.cli_options() if hasattr(params, 'cli_options') else ''}` — "
        f"{seconds:.0f} s ({seconds / 60:.0f} min) in this process for {len(results) + len(long_results)} runs, seeds "
        f"0..{params.seeds - 1}; {sum(bool(r.get('reused')) for r in results + long_results)} of them reused from the "
        "result store (finished runs are stored beside their weights; each run's own training time is the s/run "
        f"column). {provenance_line(device, amp, threads=1)}",
    )
    report.add_section("What was shrunk", _shrunk(info, params))
    everything = results + long_results
    report.add_json("runs.json", [{k: v for k, v in r.items() if k not in ("loss", "reused")} for r in everything],
                    caption="Every run")  # fmt: skip
    report.add_json(
        "results.json",
        ev.to_json(options=params.model_dump(mode="json"), seconds=seconds),
        caption="per-seed metrics of every variant and the headline specs",
    )
    if not isinstance(params, ReproducerOptions):  # the results doc opens with the headline table, not metric tiles
        report.metrics.update(
            {
                "m3_mean_r1": float(np.mean(best["mean_r1"])) if best else None,
                "checks_passed": sum(r[1] == "pass" for r in check_rows),
                "checks_total": sum(r[1] != "n/a" for r in check_rows),
                "runs": len(everything),
                "wall_s": round(seconds, 1),
                **device_provenance(device, amp),
            }
        )
    report.data.update({"results": everything, "features": info, "oracle": oracle, "params": params.model_dump(),
                        "reference": reference})  # fmt: skip
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


def _ci(h: Any) -> str:
    r, f, d = h.result, h.scale, h.digits
    sign = "+" if h.stat == "paired_diff" else ""
    return f"{f * r['estimate']:{sign}.{d}f} [{f * r['low']:{sign}.{d}f}, {f * r['high']:{sign}.{d}f}] ({r['verdict']})"


def _reading(
    agg: dict[str, dict[str, list[float]]],
    results: list[dict[str, Any]],
    dirs: list[tuple[str, bool | None, str]],
    oracle: dict[int, float],
    n_test: int,
    epochs: int,
    ev: Evidence,
    raw: dict[str, Any],
    long_agg: dict[str, dict[str, list[float]]],
    long_epochs: int,
) -> str:
    """The headline table in words: what holds, what fails, what is not resolved, and why the prediction branch
    retrieves at chance here (a defect or the method at this scale)."""
    h = {x.claim: x for x in ev.headlines}
    mean = {v: float(np.mean(c["mean_r1"])) for v, c in agg.items()}
    n_seeds = len({r["config"]["seed"] for r in results})
    parts = []
    if "m3_jepa" in mean:
        c, m = agg["m3_jepa"], mean["m3_jepa"]
        parts.append(
            f"M3-JEPA reaches {100 * m:.2f} % exact-pair R@1 (mean of both directions; chance {100 / n_test:.2f} %, "
            f"the captions allow at most {100 * oracle[1]:.1f} %); class-level R@1 is {_fmt(c['i2t_class_r1'])} % "
            f"image→text and {_fmt(c['t2i_class_r1'])} % text→image, zero-shot class-name accuracy "
            f"{_fmt(c['zs_i2t'])} % (chance 10 %). Paired over {n_seeds} seeds (R@1 points): "
            + "; ".join(
                f"{claim}: {_ci(x)}"
                for claim, x in h.items()
                if x.stat == "paired_diff" and x.a == "runs/m3_jepa/mean_r1"
            )  # fmt: skip
            + f". With {n_seeds} seeds a t interval is wide, so only large effects resolve."
        )
        still = sum(int(e) >= epochs for e in c["best_epoch"])
        if still:
            parts.append(
                f"In {still} of {len(c['best_epoch'])} seeds M3-JEPA's best validation epoch is the last one "
                f"({epochs}): it was still improving when the budget ran out."
            )
    pred = next((x for c, x in h.items() if c.startswith("The prediction branch retrieves above chance (")), None)
    reach = next((x for c, x in h.items() if c.startswith("The prediction branch reaches")), None)
    if pred is not None and reach is not None:
        ref = raw["reference"]
        ceiling = 50 * (ref["i2t"]["group_mean_r1"] + ref["t2i"]["group_mean_r1"])
        m3_steps = [r["steps"] for r in results if r["variant"] == "m3_jepa"]
        per_dir = int(round(np.mean(m3_steps) / 2)) if m3_steps else 0
        above = pred.result["verdict"] == "holds"
        reached = reach.result["verdict"] == "holds"
        no_reg = h.get("L_reg helps (M3-JEPA beats no_reg)")
        parts.append(
            "**The prediction (latent-regression) branch** "
            + ("retrieves above chance, far below what its targets allow" if above else "retrieves at chance")
            + f": M3-JEPA's pred-space mean R@1 is {_ci(pred)} % against chance {100 / n_test:.2f} %, where a "
            f"predictor that knew each item's (class, ink, slant) group mean would reach {ceiling:.2f} %. Its final "
            f"training L_reg is {reach.result['estimate']:.3f} against {ref['reg_mean_target']:.3f} for predicting the "
            f"mean target ({reach.result['verdict']})"
            + (
                f": after {epochs} epochs (about {per_dir} steps per direction at peak lr 1e-3) the branch has not "
                "even learned the average target."
                if not reached
                else "."
            )
            + " This is not a defect of the predictor: tests/methods/m3_jepa/test_predictor_fit.py trains the same "
            "M3Predictor through the same loss on a tiny separable set and both branches fit it (L_reg far below the "
            "mean target's, every item nearest its class), and the test fails for a prediction head that ignores its "
            "input or without L_reg. The same test shows the mechanism at a budget like this one: targets far from "
            "zero (here the unnormalised CNN image tokens, rms ≈ 4.8) take many Adam steps of size ≈ lr to reach, "
            "while the contrastive branch, whose targets are learned projections, separates the classes long before. "
            "So it is the method at this scale: the retrieval numbers come from the contrastive branch"
            + (
                ", which is why no_reg (contrastive only) is not behind M3-JEPA here."
                if no_reg is not None and no_reg.result["verdict"] != "holds"
                else "."
            )
        )
    long_pred = next((x for c, x in h.items() if c.startswith("The prediction branch retrieves above chance at")), None)
    gain = next((x for c, x in h.items() if c.endswith(f"raise M3-JEPA's R@1 over {epochs}")), None)
    vs_long = next((x for c, x in h.items() if c.endswith(f"at {long_epochs} epochs") and "CLIP" in c), None)
    if long_agg:
        bits = []
        if gain is not None:
            bits.append(f"{long_epochs} epochs instead of {epochs} change M3-JEPA's R@1 by {_ci(gain)} points")
        if vs_long is not None:
            bits.append(f"M3-JEPA minus the CLIP-style linear baseline at {long_epochs} epochs is {_ci(vs_long)}")
        if long_pred is not None:
            bits.append(
                f"the prediction branch's pred-space mean R@1 is {_ci(long_pred)} % (chance {100 / n_test:.2f} %)"
            )
        parts.append(
            f"**The long-budget arms** ({', '.join(long_agg)} at {long_epochs} epochs): " + "; ".join(bits) + "."
        )
    clip = h.get("M3-JEPA beats the CLIP-style linear baseline")
    if clip is not None:
        parts.append(
            f"Against the CLIP-style linear projector at {epochs} epochs M3-JEPA is {_ci(clip)} points: the linear "
            "baseline trains both directions in every step at a small fraction of the cost and has 6× fewer "
            "parameters to fit from 1000 pairs, while AGD gives each direction half the steps"
            + (
                " (the summed-loss variant, which updates both directions every step, is the best M3 variant here)."
                if "summed" in mean and max((v for v in mean if v not in ("clip_linear",)), key=mean.get) == "summed"
                else "."
            )
        )
    parts.append(
        "What this CPU version does not test: the paper's MoE and AGD effects are claimed at 140M trainable "
        "parameters with LoRA-tuned 8B/300M encoders on COCO/Flickr30K and up to 500 epochs; here 8×8 digits with "
        "template captions, a 0.5M-parameter predictor and frozen encoders."
    )
    return "\n\n".join(parts)


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
