"""The ``long_short_alignment`` Report (``docs/results/long_short_alignment.md``) from finished runs.

:func:`build_report` takes what :mod:`methods.long_short_alignment.experiment` ran (the synthetic runs,
the LM checkpoints, the SmolLM2 probe) and builds the Report: the ``core.evidence`` headlines first
(per-seed values, 95 % t intervals over seeds; paired differences for the regularizer), then the tables,
figures and a Reading generated from the same numbers; ``results.json`` holds every per-seed value.
Nothing here trains or evaluates a model.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from core.evidence import Evidence
from core.jobs import Report
from core.stats import mean_sd
from methods.long_short_alignment.config import PAPER

TASKS = ("mean", "length", "outrep")


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


OVERREG_ALPHA = 1.0  # spec §7: α = 1 is the over-regularization check, not a working point of the regularizer


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
        # the correlation is over the regularizer's working range: the over-regularization arm (α ≥ OVERREG_ALPHA)
        # sits far from the rest (in-distribution NLL ~2 nats/byte higher) and would decide every r on its own
        ckpts = [r for r in runs if r.get("variant", "b1") == variant and r["alpha"] < OVERREG_ALPHA]
        corr_alphas = sorted({r["alpha"] for r in ckpts})
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
            f"LM {name}: correlation across {n} checkpoints ({seeds} seed(s) × α ∈ {corr_alphas} × {cfg.saves} saves)",
            ["quantity", f"r with NLL@{lengths[-1]}", f"r with NLL@{lengths[-1]} − NLL@{lengths[0]}", "|r| paper"],
            crow,
            note="Pearson r [95 % Fisher-z CI]. The paper's |r| are over real long-context models against "
            "LongBench-E scores, not checkpoints of one tiny model."
            + (
                f" α ≥ {OVERREG_ALPHA:g} (the over-regularization check) is left out: its checkpoints' NLL is far "
                "above the others' and would decide r alone."
                if any(a >= OVERREG_ALPHA for a in final)
                else ""
            ),
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


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3g}"


# --- headlines (core.evidence) -------------------------------------------------------------------------------
def _synthetic_raw(results: list[dict], pes: list[str]) -> dict[str, dict[str, list[float]]]:
    """Per PE, every seed's MSEs and the three §7 ratios of that seed (the runs of one seed pair up)."""

    def mse(task: str, pe: str, seed: int, k: int) -> float | None:
        for r in results:
            p = r["params"]
            if p["task"] == task and p["pe"] == pe and p["seed"] == seed:
                return r["mse"].get(str(k))
        return None

    out: dict[str, dict[str, list[float]]] = {}
    for pe in pes:
        seeds = sorted({r["params"]["seed"] for r in results if r["params"]["pe"] == pe})
        row: dict[str, list[float]] = {k: [] for k in ("seeds", "mean_mse@10", "mean_mse@50", "length_mse_inrange")}
        row.update({k: [] for k in ("length_mse@50", "outrep_mse@50")})
        row.update({k: [] for k in ("mean_ratio_50_10", "length_ratio_50_inrange", "outrep_gain_50")})
        for s in seeds:
            m10, m50 = mse("mean", pe, s, 10), mse("mean", pe, s, 50)
            inr = [mse("length", pe, s, k) for k in (1, 5, 10)]
            l50, o50 = mse("length", pe, s, 50), mse("outrep", pe, s, 50)
            if None in (m10, m50, l50, o50) or None in inr:
                continue  # learned positions refuse l > 10
            row["seeds"].append(s)
            row["mean_mse@10"].append(m10)
            row["mean_mse@50"].append(m50)
            row["length_mse_inrange"].append(statistics.mean(inr))
            row["length_mse@50"].append(l50)
            row["outrep_mse@50"].append(o50)
            row["mean_ratio_50_10"].append(m50 / max(m10, 1e-12))
            row["length_ratio_50_inrange"].append(l50 / max(statistics.mean(inr), 1e-12))
            row["outrep_gain_50"].append(l50 / max(o50, 1e-12))
        if row["seeds"]:
            out[pe] = row
    return out


def _lm_raw(lm: dict) -> dict[str, Any]:
    """Per variant and α, every seed's end-of-stage-B values (lists in seed order, the same seeds for every α)."""
    out: dict[str, Any] = {}
    for v, t in lm["tables"].items():
        seeds = sorted({r.get("seed", 0) for rs in t["final"].values() for r in rs})
        arms: dict[str, Any] = {"seeds": seeds, "lengths": t["lengths"], "l_train": t["l_train"]}
        for a, rs in t["final"].items():
            by_seed = {r.get("seed", 0): r for r in rs}
            if sorted(by_seed) != seeds:
                continue  # a partial α (not every seed) cannot be paired
            ordered = [by_seed[s] for s in seeds]
            arm = {
                "sce": [r["misalign"]["sce"] for r in ordered],
                "skl": [r["misalign"]["skl"] for r in ordered],
                "train_nll": [r["train_loss"] for r in ordered],
            }
            for k in t["lengths"]:
                arm[f"nll@{k}"] = [r["ppl"][f"heldout@{k}"]["nll"] for r in ordered]
            arms[f"alpha{float(a):g}"] = arm
        out[v] = arms
    return out


def evidence(synthetic: list[dict], lm: dict | None, pes: list[str]) -> Evidence:
    """The headline claims of spec §7 (the synthetic ratios per PE; the regularizer per stage-B variant)."""
    ev = Evidence({"synthetic": _synthetic_raw(synthetic, pes), "lm": _lm_raw(lm) if lm else {}})
    for pe, row in ev.raw["synthetic"].items():
        base = f"synthetic/{pe}"
        m10, m50 = statistics.mean(row["mean_mse@10"]), statistics.mean(row["mean_mse@50"])
        ev.headline(
            f"{pe}: mean task, MSE(l=50) ≤ 3 × MSE(l=10)",
            stat="mean",
            a=f"{base}/mean_ratio_50_10",
            null=3.0,
            direction="less",
            paper="NoPE: test loss ≈ 1e-5 at every length" if pe == "nope" else "—",
            context=f"MSE@10 {m10:.2g}, MSE@50 {m50:.2g}; a constant predictor: 0.005 at l = 50",
            unit="×",
        )
        ev.headline(
            f"{pe}: length task, MSE(l=50) ≥ 100 × in-range MSE",
            stat="mean",
            a=f"{base}/length_ratio_50_inrange",
            null=100.0,
            direction="greater",
            paper="fails beyond the training lengths (the paper's length task)",
            context=f"MSE@50 {statistics.mean(row['length_mse@50']):.3g} vs in-range "
            f"{statistics.mean(row['length_mse_inrange']):.2g}; constant predictor @50: 1980",
            unit="×",
            digits=0,
        )
        ev.headline(
            f"{pe}: OutRep (target 1/√l) cuts the length task's MSE(l=50) ≥ 10×",
            stat="mean",
            a=f"{base}/outrep_gain_50",
            null=10.0,
            direction="greater",
            paper="output representation restores length generalization",
            context=f"length MSE@50 {statistics.mean(row['length_mse@50']):.3g}, OutRep "
            f"{statistics.mean(row['outrep_mse@50']):.3g}",
            unit="×",
            digits=1,
        )
    paper_ppl = PAPER["redpajama"]
    for v, arms in ev.raw["lm"].items():
        tag, ks = v.upper(), arms["lengths"]
        if "alpha0" not in arms:
            continue
        base = arms["alpha0"]
        if "alpha0.1" in arms:
            ev.headline(
                f"{tag}: α = 0.1 lowers L_misalign (SCE, the regularized term)",
                stat="paired_diff",
                a=f"lm/{v}/alpha0.1/sce",
                b=f"lm/{v}/alpha0/sce",
                direction="less",
                paper="lower (the term trained on)",
                context=f"α = 0: {statistics.mean(base['sce']):.2f} nats (= H + H + SKL)",
                unit="nats",
            )
            ev.headline(
                f"{tag}: α = 0.1 lowers the pure misalignment SKL",
                stat="paired_diff",
                a=f"lm/{v}/alpha0.1/skl",
                b=f"lm/{v}/alpha0/skl",
                direction="less",
                paper="lower (spec §7)",
                context=f"α = 0: SKL {statistics.mean(base['skl']):.4f} nats",
                unit="nats",
                digits=4,
            )
            for k in ks[1:]:
                ev.headline(
                    f"{tag}: α = 0.1 gives lower or equal NLL at {k // ks[0]}× l_train ({k} bytes)",
                    stat="paired_diff",
                    a=f"lm/{v}/alpha0.1/nll@{k}",
                    b=f"lm/{v}/alpha0/nll@{k}",
                    direction="less",
                    paper=f"PPL {paper_ppl['baseline'][1]} → {paper_ppl['alpha0.1'][1]} (Llama-2-7B, RedPajama)",
                    context=f"α = 0: {statistics.mean(base[f'nll@{k}']):.3f} nats/byte",
                    unit="nats/byte",
                    digits=4,
                )
        if "alpha1" in arms:
            k = ks[0]
            ev.headline(
                f"{tag}: α = 1 raises in-distribution NLL (at l_train = {k}): over-regularization",
                stat="paired_diff",
                a=f"lm/{v}/alpha1/nll@{k}",
                b=f"lm/{v}/alpha0/nll@{k}",
                direction="greater",
                paper=f"α = 0.5: PPL {paper_ppl['baseline'][1]} → {paper_ppl['alpha0.5'][1]} (the paper's ablation)",
                context=f"α = 0: {statistics.mean(base[f'nll@{k}']):.3f} nats/byte",
                unit="nats/byte",
                digits=4,
            )
    return ev


def _verdict(ev: Evidence, claim_start: str) -> str:
    h = next((h for h in ev.headlines if h.claim.startswith(claim_start)), None)
    return h.result["verdict"] if h else "—"


def _corr_verdict(c: dict, n: int) -> str:
    """|r(SCE)| > |r(train)|: holds only when the Fisher intervals of the two |r| do not overlap."""
    a, b = abs(c["sce"]["long"]), abs(c["train"]["long"])
    la, ha = sorted(abs(x) for x in _fisher_ci(c["sce"]["long"], n))
    lb, hb = sorted(abs(x) for x in _fisher_ci(c["train"]["long"], n))
    if any(math.isnan(x) for x in (a, b, la, ha, lb, hb)):
        return "not resolved"
    if la > hb:
        return "holds"
    if ha < lb:
        return "fails"
    return "not resolved"


def _rows(ev: Evidence, synth: dict, lm: dict | None, smol: dict | None) -> list[list]:
    """The §7 table: each expected direction with its value and verdict (from the headlines where there is one)."""
    rows = []
    for pe, c in synth["checks"].items():
        rows.append([pe, "mean MSE(50)/MSE(10) ≲ 3", c["mean_ratio_50_10"], _verdict(ev, f"{pe}: mean task")])
        rows.append(
            [pe, "length MSE(50)/in-range ≥ 100", c["length_ratio_50_inrange"], _verdict(ev, f"{pe}: length task")]
        )
        rows.append([pe, "OutRep cuts length MSE(50) ≥ 10×", c["outrep_gain_50"], _verdict(ev, f"{pe}: OutRep")])
    for v, t in (lm or {}).get("tables", {}).items():
        ks, p, tag = t["lengths"], t["paired"], v.upper()
        if "0.1@skl" in p:
            rows.append(
                [
                    f"{tag} α=0.1 vs 0",
                    "lower L_misalign (paired Δ SKL < 0)",
                    p["0.1@skl"]["mean"],
                    _verdict(ev, f"{tag}: α = 0.1 lowers the pure"),
                ]
            )
            for k in ks[1:]:
                rows.append(
                    [
                        f"{tag} α=0.1 vs 0",
                        f"NLL@{k} lower or equal",
                        p[f"0.1@{k}"]["mean"],
                        _verdict(ev, f"{tag}: α = 0.1 gives lower or equal NLL at {k // ks[0]}×"),
                    ]
                )
        if f"1.0@{ks[0]}" in p:
            rows.append(
                [
                    f"{tag} α=1 vs 0",
                    f"in-distribution NLL@{ks[0]} rises",
                    p[f"1.0@{ks[0]}"]["mean"],
                    _verdict(ev, f"{tag}: α = 1"),
                ]
            )
        c = t["corr"]
        rows.append(
            [
                f"{tag} correlation",
                "|r(misalign SCE, long NLL)| > |r(train loss, long NLL)| (Fisher intervals apart)",
                abs(c["sce"]["long"]) - abs(c["train"]["long"]),
                _corr_verdict(c, t["n_ckpt"]),
            ]
        )
    if smol is not None:
        s = smol["summary"]
        sane = {True: "holds", False: "fails"}
        rows.append(
            ["SmolLM2", "SKL(l1 = l2) = 0 (exact)", s["skl_same"]["mean"], sane[abs(s["skl_same"]["mean"]) < 1e-5]]
        )
        rows.append(
            [
                "SmolLM2",
                "SCE = H + H + SKL (identity)",
                smol["max_sce_identity_gap"],
                sane[smol["max_sce_identity_gap"] < 1e-3],
            ]
        )
        rows.append(
            ["SmolLM2", "SKL(long, short) > 0 (finite, positive)", s["skl"]["mean"], sane[s["skl"]["mean"] > 0]]
        )
    return rows


def _reading(
    report: Report, options: Any, ev: Evidence, synth: dict, lm: dict | None, smol: dict | None, seconds: float
) -> None:
    """Scale, the headline verdicts with their baselines, paper numbers beside ours, and a plain reading."""
    n = ev.counts()
    report.summary = (
        f"preset {options.preset}: synthetic {options.seeds} seed(s) × {options.synth_steps} steps "
        f"(spec: 3 seeds × 3,000); byte LM d={options.lm_d}, {options.lm_layers} layers, l_train={options.lm_l_train}, "
        f"{options.lm_seeds} independent seed(s), stage A {options.lm_stage_a_steps} + stage B "
        f"{options.lm_stage_b_steps} steps per α ∈ {list(options.lm_alphas)}, variants {list(options.lm_variants)} "
        f"(spec: d=128, 4 layers, l_train=128, 1,500 + 500 steps, α ∈ {{0, 0.1, 0.3, 1}}). Headline claims: "
        f"{n['holds']} hold, {n['fails']} fail, {n['not resolved']} not resolved (95 % t intervals over seeds; the "
        f"regularizer's effects paired by seed). {seconds / 60:.1f} min; {provenance().rstrip('.')}."
    )
    cli = getattr(options, "cli_options", None)
    if callable(cli):
        report.add_section("Command", f"`paperworks reproduce long_short_alignment{cli()}`")
    rows = _rows(ev, synth, lm, smol)
    report.add_table(
        "§7 expected directions",
        ["where", "check", "value", "verdict"],
        rows,
        note="value: the mean over seeds (ratios), the mean paired difference (α vs 0) or |r_SCE| − |r_train|; "
        "verdicts from the headline intervals; an interval that touches or straddles the threshold is not resolved.",
    )
    report.add_table(
        "Paper numbers (spec §4, third-party summary, TO VERIFY) — not reproducible offline",
        ["setting", "paper", "ours"],
        [
            ["Llama-2-7B CLEX RedPajama LongBench-E, baseline → +0.1·L_misalign", "24.7 → 26.6", "n/a (no 7B model)"],
            ["PPL baseline → +0.1·L_misalign", "6.12 → 5.88", "see the headlines (byte NLL, tiny model)"],
            ["PPL baseline → +0.5·L_misalign (over-regularization)", "6.12 → 6.54", "see the α = 1 headline"],
            ["|r(misalign, score)| vs |r(train loss, score)|", "0.85 vs 0.62", "see the correlation tables"],
            ["synthetic mean, NoPE, test loss", "≈1e-5", _fmt(synth["means"].get("mean/nope", {}).get(50))],
        ],
    )
    paras = []

    def verdicts(prefix: str) -> str:
        hs = [h for h in ev.headlines if h.claim.startswith(prefix)]
        return "; ".join(f"{h.claim[len(prefix) :].strip(' :')} **{h.result['verdict']}** ({_est(h)})" for h in hs)

    for pe in ev.raw["synthetic"]:
        paras.append(f"Synthetic, {pe}: " + verdicts(f"{pe}:") + ".")
    for v, t in (lm or {}).get("tables", {}).items():
        tag, c, ks = v.upper(), t["corr"], t["lengths"]
        text = f"{tag} (l_train {t['l_train']}, {t['seeds']} seeds): " + verdicts(f"{tag}:") + "."
        text += (
            f" Across {t['n_ckpt']} checkpoints (α < {OVERREG_ALPHA:g}) r(SCE, NLL@{ks[-1]}) = {c['sce']['long']:+.2f}, r(SKL, NLL@{ks[-1]}) = "
            f"{c['skl']['long']:+.2f}, r(train loss, NLL@{ks[-1]}) = {c['train']['long']:+.2f} (paper |r| 0.85 vs 0.62): "
            f"{_corr_verdict(c, t['n_ckpt'])}."
        )
        paras.append(text)
    if lm is not None:
        paras.append(
            "SCE = H(p) + H(q) + SKL, and at this scale SKL is a few thousandths of a nat while 2H is several nats, so "
            "α·SCE mostly rewards sharper (lower-entropy) predictions rather than aligned ones — the entropy confound "
            "the spec warns about (§3.2): the SCE headline holds by construction, the SKL one is what tests alignment. "
            "An interval that straddles zero is *not resolved*, never 'lower'. The checkpoints are tiny byte LMs "
            "(independent seeds, each continued with every α), not the paper's independently adapted 7B models scored "
            "on LongBench-E, so the correlations answer a narrower question; the paired per-seed differences are the "
            "cleaner test of the regularizer."
        )
    if smol is not None:
        s = smol["summary"]
        paras.append(
            f"SmolLM2-135M (l ∈ [{smol['l_train'] // 2}, {smol['l_train']}] tokens, {smol['n_samples']} pairs): SKL "
            f"between the long and short suffix {s['skl']['mean']:.3f} ± {s['skl']['se']:.2g} vs "
            f"{s['skl_shuffled']['mean']:.3f} when the extra left context is unrelated text; only the sanity of the "
            "values (finite, SKL(l1 = l2) = 0, SCE = H + H + SKL) is checked (spec §6.3)."
        )
    paras.append(
        "Learned absolute positions refuse lengths beyond 10 by design. What would change the conclusion: the spec's "
        "3,000 synthetic steps, a larger LM trained longer (spec: d = 128, 4 layers, 1,500 + 500 steps), more seeds "
        "where a paired interval straddles zero, and the real setting (Llama-2-7B, CLEX, LongBench-E), which is not "
        "available offline."
    )
    report.add_section("Reading", "\n\n".join(paras))


def _est(h: Any) -> str:
    r = h.result
    sign = "+" if h.stat in ("paired_diff", "diff") else ""
    lo = "" if r.get("low") is None else f" [{r['low']:{sign}.{h.digits}f}, {r['high']:{sign}.{h.digits}f}]"
    return f"{r['estimate']:{sign}.{h.digits}f}{lo} {h.unit}".strip()


def provenance() -> str:
    from core.provenance import provenance_line

    return provenance_line()


def build_report(
    options: Any,
    synthetic: list[dict],
    lm_result: dict | None,
    lm_cfg: Any,
    smol: dict | None,
    *,
    device: Any = "cpu",
    seconds: float = 0.0,
) -> Report:
    """The reproduction's Report from its runs: headlines, tables, figures, Reading, ``results.json``."""
    from core.device import device_provenance

    report = Report(title="Long-Short Alignment (ICML 2025) — CPU reproduction", summary="")
    synth = synthetic_tables(report, synthetic, list(options.pes))
    lm = None
    if lm_result is not None:
        lm = {"tables": lm_tables(report, lm_result, lm_cfg), "runs": lm_result["runs"]}
    if smol is not None:
        smol_table(report, smol)
    ev = evidence(synthetic, lm, list(options.pes))
    _plot(report, synth, lm, list(options.pes))
    _reading(report, options, ev, synth, lm, smol, seconds)
    report.sections.insert(0, ev.section())
    report.data = {"synthetic": synth, "lm": lm, "smollm2": smol and {k: v for k, v in smol.items() if k != "samples"}}
    report.add_json(
        "results.json",
        ev.to_json(options=options.model_dump(), seconds=seconds, provenance=provenance()),
        caption="per-seed values and the headline specifications (core.evidence)",
    )
    report.metrics.update({f"{pe}_{k}": v for pe, c in synth["checks"].items() for k, v in c.items()})
    if lm is not None:
        for v, t in lm["tables"].items():
            report.metrics[f"{v}_r_misalign_sce"] = t["corr"]["sce"]["long"]
            report.metrics[f"{v}_r_train_loss"] = t["corr"]["train"]["long"]
            if "0.1@skl" in t["paired"]:
                report.metrics[f"{v}_alpha0.1_delta_skl"] = t["paired"]["0.1@skl"]["mean"]
    if smol is not None:
        report.metrics["smollm2_skl"] = smol["summary"]["skl"]["mean"]
    report.metrics.update(device_provenance(device, options.amp))
    return report
