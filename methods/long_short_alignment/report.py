"""Builds the ``long_short_alignment`` results report from real runs (``docs/results/long_short_alignment.md``)."""

from __future__ import annotations

import statistics
import uuid
from typing import Any

from core.jobs import JobContext, Report
from methods.long_short_alignment.config import PAPER

TASKS = ("mean", "length", "outrep")


def _use_jobs(dispatch: str) -> bool:
    if dispatch == "inline":
        return False
    from core.jobs.dispatch import NoSender, get_sender

    try:
        get_sender()
        return True
    except NoSender:
        if dispatch == "jobs":
            raise
        return False


def run_synthetic(options: Any, progress: JobContext) -> list[dict]:
    """One ``lsa.synthetic`` report data dict per (task, pe, seed), via sub-jobs or in process."""
    from methods.long_short_alignment.jobs import SyntheticParams, synthetic

    grid = [
        SyntheticParams(task=t, pe=pe, seed=s, steps=options.synth_steps, eval_per_length=options.eval_per_length)
        for t in TASKS
        for pe in options.pes
        for s in range(options.seeds)
    ]
    if _use_jobs(options.dispatch):
        from core.db import crud
        from core.db.session import session_scope
        from core.jobs.dispatch import enqueue, wait

        run = progress.job_id or uuid.uuid4().hex
        ids = [enqueue("lsa.synthetic", p.model_dump(), idempotency_key=f"lsa:{run}:{k}") for k, p in enumerate(grid)]
        wait(ids, timeout=6 * 3600, steal_after=60.0, progress=progress)
        with session_scope() as s:
            return [crud.get_report_for_job(s, job_id=j).body["data"] for j in ids]
    return [synthetic(p, progress.sub(k / len(grid), (k + 1) / len(grid))).data for k, p in enumerate(grid)]


def _agg(vals: list[float | None]) -> str:
    v = [x for x in vals if x is not None]
    if not v:
        return "refused"
    if len(v) == 1:
        return f"{v[0]:.3g}"
    return f"{statistics.mean(v):.3g} ± {statistics.stdev(v) / len(v) ** 0.5:.2g}"


def synthetic_tables(report: Report, results: list[dict], pes: list[str]) -> dict:
    lengths = [int(k) for k in results[0]["mse"]]
    rows, checks = [], {}
    means: dict[tuple[str, str], dict[int, float | None]] = {}
    for task in TASKS:
        for pe in pes:
            runs = [r for r in results if r["params"]["task"] == task and r["params"]["pe"] == pe]
            rows.append([task, pe] + [_agg([r["mse"][str(k)] for r in runs]) for k in lengths])
            per = {}
            for k in lengths:
                v = [r["mse"][str(k)] for r in runs if r["mse"][str(k)] is not None]
                per[k] = statistics.mean(v) if v else None
            means[(task, pe)] = per
    report.add_table(
        "Synthetic: test MSE (original units) by length; trained on l ~ U{1..10}",
        ["task", "PE"] + [f"l={k}" for k in lengths],
        rows,
        note="mean ± s.e. over seeds where more than one; 'refused' = learned positions cannot run l > 10.",
    )
    report.add_table(
        "Synthetic baselines: MSE of a constant predictor (mean: 0.5, i.e. variance 0.25/l; length: 5.5, the train mean)",
        ["task"] + [f"l={k}" for k in lengths],
        [["mean"] + [0.25 / k for k in lengths], ["length"] + [(k - 5.5) ** 2 for k in lengths]],
    )
    for pe in pes:
        m, ln, o = means[("mean", pe)], means[("length", pe)], means[("outrep", pe)]
        if m[50] is None:
            continue
        checks[pe] = {
            "mean_ratio_50_10": m[50] / max(m[10], 1e-12),
            "length_ratio_50_inrange": ln[50] / max(statistics.mean([ln[k] for k in (1, 5, 10)]), 1e-12),
            "outrep_gain_50": ln[50] / max(o[50], 1e-12),
        }
    return {"means": {f"{t}/{p}": v for (t, p), v in means.items()}, "checks": checks}


def lm_tables(report: Report, result: dict, cfg: Any) -> dict:
    from methods.long_short_alignment.lm import pearson

    runs = result["runs"]
    lengths = list(cfg.eval_lengths)
    final = {}
    for r in runs:
        final[r["alpha"]] = r  # last save per α
    rows = []
    for a, r in final.items():
        rows.append(
            [a, r["misalign"]["sce"], r["misalign"]["skl"], r["train_loss"]]
            + [r["ppl"][f"heldout@{k}"]["ppl"] for k in lengths]
            + [r["ppl"][f"heldout@{k}"]["ppl_last"] for k in lengths]
            + [r["ppl"][f"wikitext2@{k}"]["ppl"] for k in lengths]
        )
    report.add_table(
        f"LM: regularizer effect per evaluation length (l_train = {cfg.l_train}, after stage B)",
        ["α", "L_misalign SCE", "SKL", "train NLL"]
        + [f"PPL@{k}" for k in lengths]
        + [f"PPL-last@{k}" for k in lengths]
        + [f"WikiText-2 PPL@{k}" for k in lengths],
        rows,
        note="PPL on GSM8K+MATH test text (held-out); PPL-last = loss over the last tokens of each window only.",
    )
    long_key = f"heldout@{lengths[-1]}"
    long = [r["ppl"][long_key]["nll"] for r in runs]
    r_sce = pearson([r["misalign"]["sce"] for r in runs], long)
    r_skl = pearson([r["misalign"]["skl"] for r in runs], long)
    r_tr = pearson([r["train_loss"] for r in runs], long)
    report.add_table(
        f"Correlation with long-length NLL (eval length {lengths[-1]}), over {len(runs)} checkpoints",
        ["quantity", "|r| ours", "|r| paper (Table 1, LongBench-E)"],
        [
            ["L_misalign (SCE)", abs(r_sce), PAPER["table1_abs_r"]["misalign"]],
            ["L_misalign (SKL)", abs(r_skl), "—"],
            ["training loss", abs(r_tr), PAPER["table1_abs_r"]["train_loss"]],
        ],
        note="few checkpoints: a Pearson r over so few points has a wide CI.",
    )
    return {"r_sce": r_sce, "r_skl": r_skl, "r_train": r_tr, "final": {str(a): r for a, r in final.items()}}


def _plot(report: Report, synth: dict, lm: dict | None, pes: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for ax, task in zip(axes, TASKS, strict=True):
        for pe in pes:
            per = synth["means"][f"{task}/{pe}"]
            xs = [k for k, v in per.items() if v is not None]
            ax.plot(xs, [max(per[k], 1e-12) for k in xs], marker="o", label=pe)
        ax.axvline(10, color="grey", ls=":")
        ax.set_yscale("log")
        ax.set_title(task)
        ax.set_xlabel("test length l")
    axes[0].set_ylabel("MSE")
    axes[0].legend()
    report.add_figure("synthetic_mse.png", fig, caption="Synthetic tasks: MSE vs length (dotted: max train length)")
    plt.close(fig)


def build_report(options: Any, progress: JobContext) -> Report:
    from core.config import get_settings
    from methods.long_short_alignment.lm import LMConfig, run_experiment

    report = Report(title="Long-Short Alignment (ICML 2025) — CPU reproduction", summary="")
    p_syn = progress.sub(0.0, 0.5 if not options.skip_lm else 1.0)
    results = run_synthetic(options, p_syn)
    synth = synthetic_tables(report, results, list(options.pes))
    lm = None
    if not options.skip_lm:
        lengths = tuple(options.lm_l_train * k for k in (1, 2, 4))
        cfg = LMConfig(
            l_train=options.lm_l_train,
            d=options.lm_d,
            layers=options.lm_layers,
            stage_a_steps=options.lm_stage_a_steps,
            stage_b_steps=options.lm_stage_b_steps,
            alphas=tuple(options.lm_alphas),
            saves=options.lm_saves,
            eval_lengths=lengths,
        )
        result = run_experiment(cfg, get_settings().data_dir, progress.sub(0.5, 1.0))
        lm = lm_tables(report, result, cfg)
        lm["runs"] = result["runs"]
    _plot(report, synth, lm, list(options.pes))
    _reading(report, options, synth, lm)
    report.data = {"synthetic": synth, "lm": lm}
    report.metrics.update({f"{pe}_{k}": v for pe, c in synth["checks"].items() for k, v in c.items()})
    if lm is not None:
        report.metrics.update({"r_misalign_sce": lm["r_sce"], "r_train_loss": lm["r_train"]})
    return report


def _reading(report: Report, options: Any, synth: dict, lm: dict | None) -> None:
    """Scale, the §7 checks against their targets, paper numbers beside ours, and a plain reading."""
    report.summary = (
        f"preset {options.preset}: {options.seeds} seed(s), {options.synth_steps} synthetic steps "
        f"(spec: 3 seeds / 3,000 steps; a 5-seed `-o preset=spec` is available); byte LM d={options.lm_d}, "
        f"{options.lm_layers} layers, l_train={options.lm_l_train}, stage A {options.lm_stage_a_steps} + stage B "
        f"{options.lm_stage_b_steps} steps per α (spec: d=128, 4 layers, l_train=128, 1,500 + 500)."
    )
    rows = []
    for pe, c in synth["checks"].items():
        rows.append([pe, "mean MSE(50)/MSE(10) ≲ 3", c["mean_ratio_50_10"], c["mean_ratio_50_10"] <= 3])
        rows.append(
            [pe, "length MSE(50)/in-range ≥ 100", c["length_ratio_50_inrange"], c["length_ratio_50_inrange"] >= 100]
        )
        rows.append([pe, "OutRep cuts length MSE(50) ≥ 10×", c["outrep_gain_50"], c["outrep_gain_50"] >= 10])
    lm_lines = ""
    if lm is not None:
        fin = lm["final"]
        alphas = sorted(float(a) for a in fin)
        a0 = fin[str(alphas[0])]
        for a in alphas[1:]:
            r = fin[str(a)]
            rows.append(
                [
                    f"α={a} vs α={alphas[0]}",
                    "lower L_misalign (SKL)",
                    r["misalign"]["skl"] - a0["misalign"]["skl"],
                    r["misalign"]["skl"] < a0["misalign"]["skl"],
                ]
            )
        longest = max(int(k.split("@")[1]) for k in a0["ppl"] if k.startswith("heldout@"))
        if "0.1" in fin:
            r = fin["0.1"]
            rows.append(
                [
                    "α=0.1 vs α=0",
                    f"PPL@{longest} lower or equal",
                    r["ppl"][f"heldout@{longest}"]["ppl"] - a0["ppl"][f"heldout@{longest}"]["ppl"],
                    r["ppl"][f"heldout@{longest}"]["ppl"] <= a0["ppl"][f"heldout@{longest}"]["ppl"],
                ]
            )
        rows.append(
            [
                "correlation",
                "|r(misalign)| > |r(train loss)|",
                abs(lm["r_sce"]) - abs(lm["r_train"]),
                abs(lm["r_sce"]) > abs(lm["r_train"]),
            ]
        )
        lm_lines = (
            f" On the byte LM, |r(L_misalign SCE, long NLL)| = {abs(lm['r_sce']):.2f} and "
            f"|r(train loss, long NLL)| = {abs(lm['r_train']):.2f} over {len(lm['runs'])} checkpoints "
            f"(paper, LongBench-E over real models: 0.85 vs 0.62). Signs: r(misalign) = {lm['r_sce']:+.2f}, "
            f"r(train loss) = {lm['r_train']:+.2f}. The checkpoints here are one model continued with different α, "
            "so the spread is dominated by the over-regularized α = 1 run (lowest misalignment, worst perplexity): "
            "across these runs misalignment moves against long-length loss and training loss tracks it almost "
            "perfectly, unlike the paper's comparison across independently adapted 7B models. α = 1.0 raising "
            "in-distribution perplexity is the over-regularization the paper's ablation reports."
        )
    report.add_table("§7 expected directions", ["where", "check", "value", "holds"], rows)
    report.add_table(
        "Paper numbers (spec §4, third-party summary, TO VERIFY) — not reproducible offline",
        ["setting", "paper", "ours"],
        [
            ["Llama-2-7B CLEX RedPajama LongBench-E, baseline → +0.1·L_misalign", "24.7 → 26.6", "n/a (no 7B model)"],
            ["PPL baseline → +0.1·L_misalign", "6.12 → 5.88", "see LM table (byte PPL, tiny model)"],
            ["synthetic mean, NoPE, test loss", "≈1e-5", _fmt(synth["means"].get("mean/nope", {}).get(50))],
        ],
    )
    holds = [r for r in rows if r[3]]
    fails = [f"{r[0]}: {r[1]}" for r in rows if not r[3]]
    report.add_section(
        "Reading",
        f"{len(holds)} of {len(rows)} expected directions hold at this scale."
        + lm_lines
        + (" Not holding: " + "; ".join(fails) + "." if fails else "")
        + " Learned absolute positions refuse lengths beyond 10 by design. The LM runs are one seed and a few "
        "hundred steps on 2 CPU cores; differences between α values of a few percent are within run-to-run "
        "noise, so they show the mechanics and direction, not a confirmed effect size. The Llama-2-7B "
        "LongBench-E / BABILong numbers cannot be reproduced offline.",
    )


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"
