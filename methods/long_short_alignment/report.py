"""Builds the ``long_short_alignment`` results report from real runs (``docs/results/long_short_alignment.md``)."""

from __future__ import annotations

import hashlib
import json
import math
import statistics
from pathlib import Path
from typing import Any

from core.jobs import JobContext, Report
from core.stats import mean_sd
from methods.long_short_alignment.config import PAPER

TASKS = ("mean", "length", "outrep")


def run_synthetic(options: Any, progress: JobContext) -> list[dict]:
    """One ``lsa.synthetic`` report data dict per (task, pe, seed), via sub-jobs or in process
    (:func:`core.jobs.dispatch.map_jobs`; in process each run is cached)."""
    from core.jobs import get_method
    from core.jobs.dispatch import map_jobs

    grid = [
        {
            "task": t,
            "pe": pe,
            "seed": s,
            "steps": options.synth_steps,
            "eval_per_length": options.eval_per_length,
            "device": options.device,
            "amp": options.amp,
        }
        for t in TASKS
        for pe in options.pes
        for s in range(options.seeds)
    ]
    run = get_method("lsa.synthetic").run
    return map_jobs(
        "lsa.synthetic",
        grid,
        inline=lambda p, share: _cached("synthetic", _cache_params(p.model_dump()), lambda: run(p, share).data),
        dispatch=options.dispatch,
        progress=progress,
        key="lsa",
        timeout=6 * 3600,
        steal_after=60.0,
    )


def _agg(vals: list[float | None]) -> str:
    v = [x for x in vals if x is not None]
    if not v:
        return "refused"
    if len(v) == 1:
        return f"{v[0]:.3g}"
    ms = mean_sd(v, exact=True)  # mean ± standard error
    return f"{ms.mean:.3g} ± {ms.sd / len(v) ** 0.5:.2g}"


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


def _ms(v: list[float], fmt: str = ".4g") -> str:
    if len(v) == 1:
        return format(v[0], fmt)
    ms = mean_sd(v, exact=True)
    return f"{format(ms.mean, fmt)} ± {format(ms.sd, '.2g')}"


def _t_ci(d: list[float]) -> tuple[float, float, float]:
    """Mean and two-sided 95 % t-interval of paired differences (nan bounds with one value)."""
    from scipy import stats

    ms = mean_sd(d, exact=True)
    if len(d) < 2:
        return ms.mean, float("nan"), float("nan")
    h = stats.t.ppf(0.975, len(d) - 1) * ms.sd / len(d) ** 0.5
    return ms.mean, ms.mean - h, ms.mean + h


def _fisher_ci(r: float, n: int) -> tuple[float, float]:
    """95 % CI of a Pearson r by Fisher's z (nan when n ≤ 3 or r is not finite)."""
    if n <= 3 or not math.isfinite(r) or abs(r) >= 1:
        return float("nan"), float("nan")
    z, se = math.atanh(r), 1 / math.sqrt(n - 3)
    return math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)


def _final(runs: list[dict], variant: str) -> dict[float, list[dict]]:
    """The last checkpoint of every (seed, α) run of ``variant``, grouped by α."""
    last: dict[tuple[int, float], dict] = {}
    for r in runs:
        if r.get("variant", "b1") == variant:
            key = (r.get("seed", 0), r["alpha"])
            if key not in last or r["step"] > last[key]["step"]:
                last[key] = r
    out: dict[float, list[dict]] = {}
    for (_, a), r in sorted(last.items()):
        out.setdefault(a, []).append(r)
    return out


def lm_tables(report: Report, result: dict, cfg: Any) -> dict:
    """Per variant: the regularizer's effect per evaluation length (mean ± std over seeds), the paired
    difference to α = 0 with 95 % CIs, and the correlation of misalignment / train loss with long-length
    NLL and with the length-generalization gap across all checkpoints."""
    from methods.long_short_alignment.lm import pearson

    runs = result["runs"]
    out: dict[str, Any] = {}
    for variant in dict.fromkeys(r.get("variant", "b1") for r in runs):
        l_b, scale, lengths = cfg.stage_b(variant)
        final = _final(runs, variant)
        seeds = max(len(v) for v in final.values())
        name = "B1 (l_train kept)" if variant == "b1" else f"B2 (extended to {l_b}, RoPE interpolation ×{scale})"
        rows = []
        for a, rs in final.items():
            rows.append(
                [a, len(rs), _ms([r["misalign"]["sce"] for r in rs]), _ms([r["misalign"]["skl"] for r in rs])]
                + [_ms([r["train_loss"] for r in rs])]
                + [_ms([r["ppl"][f"heldout@{k}"]["ppl"] for r in rs]) for k in lengths]
                + [_ms([r["ppl"][f"heldout@{k}"]["ppl_last"] for r in rs]) for k in lengths]
                + [_ms([r["ppl"][f"wikitext2@{k}"]["ppl"] for r in rs]) for k in lengths]
            )
        report.add_table(
            f"LM {name}: regularizer effect per evaluation length (l_train = {l_b}, end of stage B)",
            ["α", "seeds", "L_misalign SCE", "SKL", "train NLL"]
            + [f"PPL@{k}" for k in lengths]
            + [f"PPL-last@{k}" for k in lengths]
            + [f"WikiText-2 PPL@{k}" for k in lengths],
            rows,
            note="mean ± std over independent seeds (own stage A each); PPL on GSM8K+MATH test text (held-out); "
            "PPL-last = loss over the last 32 tokens of each window only (long-context positions).",
        )
        base = {r.get("seed", 0): r for r in final.get(0.0, [])}
        paired: dict[str, Any] = {}
        prow = []
        for a, rs in final.items():
            if a == 0.0 or not base:
                continue
            pairs = [(r, base[r.get("seed", 0)]) for r in rs if r.get("seed", 0) in base]
            cells = []
            for k in lengths:
                d = [r["ppl"][f"heldout@{k}"]["nll"] - b["ppl"][f"heldout@{k}"]["nll"] for r, b in pairs]
                m, lo, hi = _t_ci(d)
                paired[f"{a}@{k}"] = {"mean": m, "lo": lo, "hi": hi, "better": sum(x < 0 for x in d), "n": len(d)}
                cells.append(f"{m:+.4f} [{lo:+.4f}, {hi:+.4f}] ({sum(x < 0 for x in d)}/{len(d)} lower)")
            d = [r["misalign"]["skl"] - b["misalign"]["skl"] for r, b in pairs]
            m, lo, hi = _t_ci(d)
            paired[f"{a}@skl"] = {"mean": m, "lo": lo, "hi": hi, "better": sum(x < 0 for x in d), "n": len(d)}
            prow.append([a, f"{m:+.4f} [{lo:+.4f}, {hi:+.4f}]"] + cells)
        if prow:
            report.add_table(
                f"LM {name}: paired difference to α = 0, per evaluation length (same seed, same data order)",
                ["α", "Δ SKL"] + [f"Δ NLL@{k} (nats/byte)" for k in lengths],
                prow,
                note="mean over seeds [95 % t-interval]; negative = lower than without the regularizer.",
            )
        ckpts = [r for r in runs if r.get("variant", "b1") == variant]
        long_key, short_key = f"heldout@{lengths[-1]}", f"heldout@{lengths[0]}"
        long = [r["ppl"][long_key]["nll"] for r in ckpts]
        gap = [r["ppl"][long_key]["nll"] - r["ppl"][short_key]["nll"] for r in ckpts]
        n = len(ckpts)
        nan = float("nan")
        corr = {}
        for q, vals in (
            ("sce", [r["misalign"]["sce"] for r in ckpts]),
            ("skl", [r["misalign"]["skl"] for r in ckpts]),
            ("train", [r["train_loss"] for r in ckpts]),
        ):
            corr[q] = {"long": pearson(vals, long), "gap": pearson(vals, gap)} if n >= 3 else {"long": nan, "gap": nan}
        crow = []
        for q, label, paper in (
            ("sce", "L_misalign (SCE)", PAPER["table1_abs_r"]["misalign"]),
            ("skl", "L_misalign (SKL)", "—"),
            ("train", "training loss", PAPER["table1_abs_r"]["train_loss"]),
        ):
            cells = []
            for target_ in ("long", "gap"):
                r_ = corr[q][target_]
                lo, hi = _fisher_ci(r_, n)
                cells.append(f"{r_:+.2f} [{lo:+.2f}, {hi:+.2f}]")
            crow.append([label] + cells + [paper])
        report.add_table(
            f"LM {name}: correlation across {n} checkpoints ({seeds} seed(s) × {len(final)} α × {cfg.saves} saves)",
            ["quantity", f"r with NLL@{lengths[-1]}", f"r with NLL@{lengths[-1]} − NLL@{lengths[0]}", "|r| paper"],
            crow,
            note="Pearson r [95 % Fisher-z CI]. The paper's |r| are over real long-context models against "
            "LongBench-E scores, not checkpoints of one tiny model.",
        )
        out[variant] = {
            "final": {str(a): rs for a, rs in final.items()},
            "paired": paired,
            "corr": corr,
            "n_ckpt": n,
            "lengths": list(lengths),
            "l_train": l_b,
            "seeds": seeds,
        }
    return out


def smol_table(report: Report, res: dict) -> None:
    s = res["summary"]

    def f(k: str) -> str:
        return f"{s[k]['mean']:.4f} ± {s[k]['se']:.2g}"

    report.add_table(
        f"SmolLM2-135M on WikiText-2: long-short misalignment (l1, l2 ~ U[{res['l_train'] // 2}, {res['l_train']}], "
        f"{res['n_samples']} pairs)",
        ["quantity", "mean ± s.e."],
        [
            ["SCE(long, short)", f("sce")],
            ["SKL(long, short)", f("skl")],
            ["H(long) (nats)", f("h_long")],
            ["H(short) (nats)", f("h_short")],
            ["control: SKL(short, same short) — must be 0", f("skl_same")],
            ["control: SKL with the extra left context shuffled in from elsewhere", f("skl_shuffled")],
            ["max |SCE − (H + H + SKL)| over pairs", f"{res['max_sce_identity_gap']:.2g}"],
        ],
        note="Sanity of the metric on a real pretrained model (spec §6.3); no paper number to match.",
    )


def _cache_params(params: dict) -> dict:
    """A run's params as its cache key: without the device (a result is the same wherever it ran), with
    ``amp`` only when it is not ``off`` (so runs cached before devices existed stay valid)."""
    out = {k: v for k, v in params.items() if k not in ("device", "amp")}
    if params.get("amp", "off") != "off":
        out["amp"] = params["amp"]
    return out


def _cached(kind: str, params: dict, compute: Any) -> Any:
    """``<cache_dir>/long_short_alignment/<kind>/<hash>.json``: a finished run keyed by its params."""
    cache = _cache_root()
    key = hashlib.sha256(json.dumps({**params, "v": CACHE_VERSION}, sort_keys=True).encode()).hexdigest()[:16]
    path = None if cache is None else Path(cache) / "long_short_alignment" / kind / f"{key}.json"
    if path is not None and path.exists():
        return json.loads(path.read_text())
    value = compute()
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    return value


CACHE_VERSION = 1


def _cache_root() -> Path | None:
    from core.config import get_settings

    return get_settings().cache_dir


def run_lm(options: Any, progress: JobContext) -> tuple[dict, Any]:
    """``lm_seeds`` independent runs (own stage A, then stage B per variant × α); all checkpoints.

    One ``lsa.lm`` job per seed spread over the workers, or the seeds in turn here (each cached), through
    :func:`core.jobs.dispatch.map_jobs`.
    """
    from dataclasses import asdict

    from core.config import get_settings
    from core.jobs.dispatch import map_jobs
    from methods.long_short_alignment.lm import LMConfig, run_experiment

    def config(seed: int) -> LMConfig:
        return LMConfig(
            l_train=options.lm_l_train,
            d=options.lm_d,
            layers=options.lm_layers,
            stage_a_steps=options.lm_stage_a_steps,
            stage_b_steps=options.lm_stage_b_steps,
            alphas=tuple(options.lm_alphas),
            saves=options.lm_saves,
            eval_lengths=tuple(options.lm_l_train * k for k in (1, 2, 4)),
            seed=seed,
            variants=tuple(dict.fromkeys(options.lm_variants)),
            eval_tokens=options.lm_eval_tokens,
        )

    def here(p: Any, share: JobContext) -> dict:
        cfg = config(p.seed)
        return _cached(
            "lm",
            _cache_params({**asdict(cfg), "amp": options.amp}),
            lambda: run_experiment(cfg, get_settings().data_dir, share, device=options.device, amp=options.amp),
        )

    params = [
        {
            "l_train": options.lm_l_train,
            "d": options.lm_d,
            "layers": options.lm_layers,
            "stage_a_steps": options.lm_stage_a_steps,
            "stage_b_steps": options.lm_stage_b_steps,
            "alphas": list(options.lm_alphas),
            "saves": options.lm_saves,
            "seed": s,
            "variants": list(options.lm_variants),
            "eval_tokens": options.lm_eval_tokens,
            "device": options.device,
            "amp": options.amp,
        }
        for s in range(options.lm_seeds)
    ]
    per_seed = map_jobs(
        "lsa.lm",
        params,
        inline=here,
        dispatch=options.dispatch,
        progress=progress,
        key="lsa-lm",
        timeout=6 * 3600,
        steal_after=60.0,
    )
    # the tables read only l_train, eval_lengths and saves of the config: the same for every seed
    return {"runs": [r for res in per_seed for r in res["runs"]]}, config(options.lm_seeds - 1)


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
    if not lm:
        return
    variants = list(lm["tables"])
    fig, axes = plt.subplots(2, len(variants), figsize=(5.2 * len(variants), 7.2), squeeze=False)
    for j, v in enumerate(variants):
        t = lm["tables"][v]
        ax = axes[0][j]
        for a, rs in t["final"].items():
            ks = t["lengths"]
            ys = [[r["ppl"][f"heldout@{k}"]["nll"] for r in rs] for k in ks]
            ax.errorbar(
                ks,
                [statistics.mean(y) for y in ys],
                yerr=[statistics.stdev(y) if len(y) > 1 else 0 for y in ys],
                marker="o",
                capsize=3,
                label=f"α = {a}",
            )
        ax.axvline(t["l_train"], color="grey", ls=":")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("evaluation length (bytes)")
        ax.set_ylabel("held-out NLL (nats/byte)")
        ax.set_title(f"{v.upper()}: NLL by length (mean ± std over seeds)")
        ax.legend(fontsize=7)
        ax = axes[1][j]
        ck = [r for r in lm["runs"] if r.get("variant", "b1") == v]
        for a in sorted({r["alpha"] for r in ck}):
            pts = [r for r in ck if r["alpha"] == a]
            ax.scatter(
                [r["misalign"]["skl"] for r in pts],
                [r["ppl"][f"heldout@{t['lengths'][-1]}"]["nll"] for r in pts],
                label=f"α = {a}",
                s=18,
            )
        ax.set_xscale("log")
        ax.set_xlabel("L_misalign (SKL) on held-out text")
        ax.set_ylabel(f"NLL@{t['lengths'][-1]}")
        ax.set_title(f"{v.upper()}: misalignment vs long-length NLL (checkpoints)")
        ax.legend(fontsize=7)
    fig.tight_layout()
    report.add_figure("lm_lengths.png", fig, caption="Byte LM: NLL by evaluation length; misalignment vs long NLL")
    plt.close(fig)


def build_report(options: Any, progress: JobContext) -> Report:
    from core.device import device_provenance, resolve_device

    dev = resolve_device(options.device)  # a cuda run on a worker without CUDA fails here, before any sub-job
    report = Report(title="Long-Short Alignment (ICML 2025) — CPU reproduction", summary="")
    has_lm = not options.skip_lm
    p_syn = progress.sub(0.0, 0.3 if has_lm else 0.9)
    results = run_synthetic(options, p_syn)
    synth = synthetic_tables(report, results, list(options.pes))
    lm = None
    if has_lm:
        result, cfg = run_lm(options, progress.sub(0.3, 0.9))
        lm = {"tables": lm_tables(report, result, cfg), "runs": result["runs"]}
    smol = None
    if options.smollm2_samples:
        from core.config import get_settings
        from methods.long_short_alignment.smol import smollm2_misalignment

        params = {"l_train": options.smollm2_l_train, "n_samples": options.smollm2_samples}
        smol = _cached(
            "smollm2",
            _cache_params({**params, "amp": options.amp}),
            lambda: smollm2_misalignment(
                get_settings().data_dir,
                **params,
                progress=progress.sub(0.9, 1.0),
                device=options.device,
                amp=options.amp,
            ),
        )
        smol_table(report, smol)
    _plot(report, synth, lm, list(options.pes))
    _reading(report, options, synth, lm, smol)
    report.data = {"synthetic": synth, "lm": lm, "smollm2": smol and {k: v for k, v in smol.items() if k != "samples"}}
    report.metrics.update({f"{pe}_{k}": v for pe, c in synth["checks"].items() for k, v in c.items()})
    if lm is not None:
        for v, t in lm["tables"].items():
            report.metrics[f"{v}_r_misalign_sce"] = t["corr"]["sce"]["long"]
            report.metrics[f"{v}_r_train_loss"] = t["corr"]["train"]["long"]
            if "0.1@skl" in t["paired"]:
                report.metrics[f"{v}_alpha0.1_delta_skl"] = t["paired"]["0.1@skl"]["mean"]
    if smol is not None:
        report.metrics["smollm2_skl"] = smol["summary"]["skl"]["mean"]
    report.metrics.update(device_provenance(dev, options.amp))
    return report


def _lm_rows(lm: dict) -> list[list]:
    rows = []
    for v, t in lm["tables"].items():
        ks = t["lengths"]
        p = t["paired"]
        tag = v.upper()
        if "0.1@skl" in p:
            d = p["0.1@skl"]
            rows.append([f"{tag} α=0.1 vs 0", "lower L_misalign (paired Δ SKL < 0)", d["mean"], d["mean"] < 0])
            for k in ks[1:]:
                d = p[f"0.1@{k}"]
                rows.append([f"{tag} α=0.1 vs 0", f"NLL@{k} lower or equal", d["mean"], d["mean"] <= 0])
        if "1.0@" + str(ks[0]) in p:
            d = p[f"1.0@{ks[0]}"]
            rows.append([f"{tag} α=1 vs 0", f"in-distribution NLL@{ks[0]} rises", d["mean"], d["mean"] > 0])
        c = t["corr"]
        rows.append(
            [
                f"{tag} correlation",
                "|r(misalign SCE, long NLL)| > |r(train loss, long NLL)|",
                abs(c["sce"]["long"]) - abs(c["train"]["long"]),
                abs(c["sce"]["long"]) > abs(c["train"]["long"]),
            ]
        )
    return rows


def _reading(report: Report, options: Any, synth: dict, lm: dict | None, smol: dict | None) -> None:
    """Scale, the §7 checks against their targets, paper numbers beside ours, and a plain reading."""
    report.summary = (
        f"preset {options.preset}: synthetic {options.seeds} seed(s) × {options.synth_steps} steps "
        f"(spec: 3 seeds × 3,000); byte LM d={options.lm_d}, {options.lm_layers} layers, l_train={options.lm_l_train}, "
        f"{options.lm_seeds} independent seed(s), stage A {options.lm_stage_a_steps} + stage B "
        f"{options.lm_stage_b_steps} steps per α ∈ {list(options.lm_alphas)}, variants {list(options.lm_variants)} "
        "(spec: d=128, 4 layers, l_train=128, 1,500 + 500 steps)."
    )
    cli = getattr(options, "cli_options", None)
    if callable(cli):
        report.add_section("Command", f"`paperworks reproduce long_short_alignment{cli()}`")
    rows = []
    for pe, c in synth["checks"].items():
        rows.append([pe, "mean MSE(50)/MSE(10) ≲ 3", c["mean_ratio_50_10"], c["mean_ratio_50_10"] <= 3])
        rows.append(
            [pe, "length MSE(50)/in-range ≥ 100", c["length_ratio_50_inrange"], c["length_ratio_50_inrange"] >= 100]
        )
        rows.append([pe, "OutRep cuts length MSE(50) ≥ 10×", c["outrep_gain_50"], c["outrep_gain_50"] >= 10])
    if lm is not None:
        rows += _lm_rows(lm)
    if smol is not None:
        s = smol["summary"]
        rows.append(["SmolLM2", "SKL(l1 = l2) = 0", s["skl_same"]["mean"], abs(s["skl_same"]["mean"]) < 1e-5])
        rows.append(["SmolLM2", "SCE = H + H + SKL", smol["max_sce_identity_gap"], smol["max_sce_identity_gap"] < 1e-3])
        rows.append(["SmolLM2", "SKL(long, short) > 0", s["skl"]["mean"], s["skl"]["mean"] > 0])
    report.add_table("§7 expected directions", ["where", "check", "value", "holds"], rows)
    report.add_table(
        "Paper numbers (spec §4, third-party summary, TO VERIFY) — not reproducible offline",
        ["setting", "paper", "ours"],
        [
            ["Llama-2-7B CLEX RedPajama LongBench-E, baseline → +0.1·L_misalign", "24.7 → 26.6", "n/a (no 7B model)"],
            ["PPL baseline → +0.1·L_misalign", "6.12 → 5.88", "see the LM tables (byte PPL, tiny model)"],
            ["|r(misalign, score)| vs |r(train loss, score)|", "0.85 vs 0.62", "see the correlation tables"],
            ["synthetic mean, NoPE, test loss", "≈1e-5", _fmt(synth["means"].get("mean/nope", {}).get(50))],
        ],
    )
    holds = [r for r in rows if r[3]]
    fails = [f"{r[0]}: {r[1]}" for r in rows if not r[3]]
    text = f"{len(holds)} of {len(rows)} expected directions hold at this scale."
    no_gain = lm is not None
    if lm is not None:
        for v, t in lm["tables"].items():
            ks, p, c = t["lengths"], t["paired"], t["corr"]
            text += f" {v.upper()} (l_train {t['l_train']}, {t['seeds']} seed(s)):"
            if "0.1@skl" in p:
                d = p["0.1@skl"]
                text += (
                    f" α = 0.1 changes SKL by {d['mean']:+.4f} [{d['lo']:+.4f}, {d['hi']:+.4f}] (lower in "
                    f"{d['better']}/{d['n']} seeds) and NLL@{ks[-1]} by {p[f'0.1@{ks[-1]}']['mean']:+.4f} "
                    f"[{p[f'0.1@{ks[-1]}']['lo']:+.4f}, {p[f'0.1@{ks[-1]}']['hi']:+.4f}] nats/byte;"
                )
            if "0.1" in t["final"] and "0.0" in t["final"]:
                sce0 = statistics.mean(r["misalign"]["sce"] for r in t["final"]["0.0"])
                sce1 = statistics.mean(r["misalign"]["sce"] for r in t["final"]["0.1"])
                worse = [k for k in ks if p[f"0.1@{k}"]["lo"] > 0]
                flat = [k for k in ks if p[f"0.1@{k}"]["lo"] <= 0 <= p[f"0.1@{k}"]["hi"]]
                better = [k for k in ks if p[f"0.1@{k}"]["hi"] < 0]
                no_gain = no_gain and not better and p["0.1@skl"]["hi"] >= 0
                text += (
                    f" SCE falls from {sce0:.2f} to {sce1:.2f} nats, almost all of it entropy (SKL moves by "
                    f"{p['0.1@skl']['mean']:+.4f});"
                    + (f" NLL is significantly higher with the regularizer at lengths {worse}" if worse else "")
                    + (f", indistinguishable at {flat}" if flat else "")
                    + (f", significantly lower at {better}" if better else "")
                    + ";"
                )
            text += (
                f" across {t['n_ckpt']} checkpoints r(SCE, NLL@{ks[-1]}) = {c['sce']['long']:+.2f}, "
                f"r(SKL, NLL@{ks[-1]}) = {c['skl']['long']:+.2f}, r(train loss, NLL@{ks[-1]}) = "
                f"{c['train']['long']:+.2f}; against the length-generalization gap NLL@{ks[-1]} − NLL@{ks[0]}: "
                f"SKL {c['skl']['gap']:+.2f}, train loss {c['train']['gap']:+.2f}."
            )
        if no_gain and all("0.1" in t["final"] for t in lm["tables"].values()):
            text += (
                " In short: at this scale the α = 0.1 SCE regularizer does not reproduce the paper's gain — it "
                "lowers SCE by sharpening predictions, leaves the pure misalignment (SKL) within noise, and shows "
                "no significant benefit at any evaluation length."
            )
        text += (
            " The checkpoints are tiny byte LMs (independent seeds, each continued with every α), not the "
            "paper's independently adapted 7B models scored on LongBench-E, so the correlations answer a narrower "
            "question; the paired per-seed differences are the cleaner test of the regularizer. SCE = H(p) + H(q) "
            "+ SKL and at this scale SKL is a few thousandths of a nat while 2H is several nats, so α·SCE mostly "
            "rewards sharper (lower-entropy) predictions rather than aligned ones — the entropy confound the spec "
            "warns about (§3.2)."
        )
        if any(a >= 1.0 for t in lm["tables"].values() for a in map(float, t["final"])):
            text += " α = 1 lowers misalignment and raises every NLL, the over-regularization of the paper's ablation."
    if smol is not None:
        s = smol["summary"]
        text += (
            f" On SmolLM2-135M (l ∈ [{smol['l_train'] // 2}, {smol['l_train']}] tokens) SKL between the long and "
            f"short suffix is {s['skl']['mean']:.3f} ± {s['skl']['se']:.2g} vs {s['skl_shuffled']['mean']:.3f} "
            "when the extra left context is unrelated text"
            + (
                ": the true longer context moves the prediction less than unrelated text of the same length does."
                if s["skl"]["mean"] < s["skl_shuffled"]["mean"]
                else ": with so few pairs the true and the unrelated extra context move the prediction about "
                "equally; only the sanity of the values (finite, SKL(l1 = l2) = 0, SCE = H + H + SKL) is checked."
            )
        )
    text += (
        (" Not holding: " + "; ".join(fails) + "." if fails else "")
        + " Learned absolute positions refuse lengths beyond 10 by design. What would change the conclusion: "
        "the spec's 3,000 synthetic steps, a larger LM trained longer (spec: d = 128, 4 layers, 1,500 + 500 "
        "steps), more seeds where a paired interval straddles zero, and the real setting (Llama-2-7B, CLEX, LongBench-E), which is not available offline."
    )
    report.add_section("Reading", text)


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"
