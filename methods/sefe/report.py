"""The SEFE report: metric tables (mean ± std over seeds), accuracy/compliance matrices, the §7
checks as a pass/fail table, superficially forgotten answers, the paper's claims beside ours."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from core.evidence import Evidence
from core.jobs import Report
from core.stats import mean_sd
from methods.continual.plots import accuracy_matrix_figure
from methods.continual.task_incremental import TIExperiment
from methods.sefe.config import ARM_LABELS, SefeConfig
from methods.sefe.tasks import TASKS, majority_accuracy

#: What the paper reports (spec §4). The exact table values of arXiv 2505.02486 could not be
#: retrieved offline (the spec says so), so only its qualitative claims are quoted.
PAPER_CLAIMS = [
    ("Benchmark", "CoIN (8 multimodal tasks), LLaVA-1.5-7B, LoRA r=128 on every LLM linear layer"),
    ("Headline", "SEFE (ASD + RegLoRA) is state of the art on CoIN-ASD (MFN, MAA, BWT)"),
    ("ASD", "ASD alone removes most superficial forgetting"),
    ("RegLoRA", "RegLoRA further raises MFN and BWT (essential forgetting)"),
    ("Ordering", "ASD + RegLoRA ≥ either alone on MFN and BWT"),
    ("Numbers", "not retrievable offline (spec §4: fill from Tables 1–3 before quoting)"),
]


def label(arm: str) -> str:
    if arm.startswith("reglora_l"):
        return f"RegLoRA only, λ = {arm.removeprefix('reglora_l')}"
    return ARM_LABELS.get(arm, arm)


def pm(v: tuple[float, float], scale: float = 100.0) -> str:
    m, s = v
    return "n/a" if m is None or math.isnan(m) else f"{m * scale:.1f} ± {s * scale:.1f}"


def _diag_mean(exp: TIExperiment, key: str, from_task: int = 1) -> tuple[float, float]:
    vals = []
    for r in exp.runs:
        xs = [d.get(key, math.nan) for d in r.diagnostics[from_task:]]
        xs = [x for x in xs if not math.isnan(x)]
        if xs:
            vals.append(float(np.mean(xs)))
    ms = mean_sd(vals, ddof=0)  # population sd over seeds; NaN without values
    return ms.mean, ms.sd


def _first_drop(exp: TIExperiment, kind: str = "compliance") -> tuple[float, float]:
    """Task 1's value right after task 1 minus right after task 2 (mean ± std over seeds)."""
    ms = mean_sd([r.matrix(kind)[0, 0] - r.matrix(kind)[1, 0] for r in exp.runs], ddof=0)
    return ms.mean, ms.sd


def _by_seed(exp: TIExperiment, seeds: list[int]) -> list[Any]:
    runs = {r.seed: r for r in exp.runs}
    return [runs[s] for s in seeds]


def _arm_values(exp: TIExperiment, seeds: list[int]) -> dict[str, list[float]]:
    """Per seed (in ``seeds`` order): the accuracy summary, final compliance/essential values and diagnostics."""
    out: dict[str, list[float]] = {}
    for r in _by_seed(exp, seeds):
        acc, comp, ess = r.summary("accuracy"), r.summary("compliance"), r.summary("essential")
        vals = {m: acc[m] for m in ("MFT", "MFN", "MAA", "BWT")}
        vals |= {"compliance_MFN": comp["MFN"], "compliance_BWT": comp["BWT"]}
        vals |= {"essential_MFN": ess["MFN"], "essential_BWT": ess["BWT"]}
        c = r.matrix("compliance")
        if c.shape[0] > 1:
            vals["task1_compliance_drop"] = float(c[0, 0] - c[1, 0])
        for key in ("key_mag", "free_mag"):
            xs = [d[key] for d in r.diagnostics[1:] if key in d and not math.isnan(d[key])]
            if xs:
                vals[key] = float(np.mean(xs))
        for k, v in vals.items():
            out.setdefault(k, []).append(None if v is None or math.isnan(v) else float(v))
    return out


MAIN_ARMS = ("seq", "asd", "reglora", "sefe")


def evidence(exps: dict[str, TIExperiment]) -> Evidence:
    """The paper's claims and the spec's §7 directions as headlines, paired by seed (every arm of a seed shares its
    training subsample, batch order and ASD draws; 95 % t intervals over seeds)."""
    present = [a for a in MAIN_ARMS if a in exps]
    seeds = sorted(set.intersection(*({r.seed for r in exps[a].runs} for a in present))) if present else []
    raw: dict[str, Any] = {"seeds": seeds, "arms": {}, "derived": {}}
    for a, e in exps.items():
        arm_seeds = seeds if a in MAIN_ARMS else sorted(r.seed for r in e.runs)
        raw["arms"][a] = {"seeds": arm_seeds, **_arm_values(e, arm_seeds)}
    ev = Evidence(raw)
    arms = raw["arms"]

    def ok(*paths: str) -> bool:
        vals = [arms.get(p.split("/")[0], {}).get(p.split("/")[1]) for p in paths]
        return all(v and len(v) == len(seeds) and None not in v for v in vals)

    def mean(path: str) -> float:
        a, k = path.split("/")
        return float(np.mean(arms[a][k])) * 100

    def paired(claim: str, a: str, b: str, *, paper: str, null: float = 0.0, direction: str = "greater") -> None:
        if ok(a, b):
            ev.headline(
                claim,
                stat="paired_diff",
                a=f"arms/{a}",
                b=f"arms/{b}",
                null=null,
                direction=direction,
                paper=paper,
                context=f"{label(a.split('/')[0])} {mean(a):.1f}, {label(b.split('/')[0])} {mean(b):.1f}",
                unit="points",
                scale=100.0,
                digits=1,
            )

    if ok("seq/task1_compliance_drop"):
        ev.headline(
            "Sequential LoRA: learning task 2 (yes/no) breaks task 1's answer format (compliance drop ≥ 20 points)",
            stat="mean",
            a="arms/seq/task1_compliance_drop",
            null=0.2,
            paper="superficial forgetting (the paper's premise)",
            context="spec §7 threshold 20 points",
            unit="points",
            scale=100.0,
            digits=1,
        )
    if ok("seq/task1_compliance_drop", "asd/task1_compliance_drop"):
        raw["derived"]["asd drop - half seq drop"] = [
            a - 0.5 * s for a, s in zip(arms["asd"]["task1_compliance_drop"], arms["seq"]["task1_compliance_drop"])
        ]
        ev.headline(
            "ASD: task 1's compliance drop after task 2 is under half of sequential LoRA's",
            stat="mean",
            a="derived/asd drop - half seq drop",
            direction="less",
            paper="ASD alone removes most superficial forgetting",
            context=f"drops: sequential {mean('seq/task1_compliance_drop'):.1f}, ASD "
            f"{mean('asd/task1_compliance_drop'):.1f} points",
            unit="points",
            scale=100.0,
            digits=1,
        )
    paired(
        "ASD raises final format compliance over sequential LoRA",
        "asd/compliance_MFN",
        "seq/compliance_MFN",
        paper="ASD alone removes most superficial forgetting",
    )
    paired("ASD raises final accuracy (MFN) over sequential LoRA", "asd/MFN", "seq/MFN", paper="ASD raises MFN")
    paired(
        "RegLoRA alone raises final accuracy (MFN) over sequential LoRA",
        "reglora/MFN",
        "seq/MFN",
        paper="RegLoRA raises MFN and BWT (essential forgetting)",
    )
    paired(
        "RegLoRA alone raises BWT over sequential LoRA",
        "reglora/BWT",
        "seq/BWT",
        paper="RegLoRA raises MFN and BWT (essential forgetting)",
    )
    paired(
        "RegLoRA costs at most 5 points of current-task accuracy (MFT)",
        "reglora/MFT",
        "seq/MFT",
        paper="a few points at most (spec §7)",
        null=-0.05,
    )
    if ok("seq/key_mag", "reglora/key_mag"):
        raw["derived"]["key suppression seq over reglora"] = [
            s / r if r else math.inf for s, r in zip(arms["seq"]["key_mag"], arms["reglora"]["key_mag"])
        ]
        ev.headline(
            "RegLoRA shrinks the new update |B·A| at the stored key positions ≥ 5×",
            stat="mean",
            a="derived/key suppression seq over reglora",
            null=5.0,
            paper="penalty on the key elements (spec §7: ≥ 5× lower)",
            context=f"sequential {np.mean(arms['seq']['key_mag']):.2e}, RegLoRA {np.mean(arms['reglora']['key_mag']):.2e}",
            unit="×",
            digits=1,
        )
    paired(
        "SEFE (ASD + RegLoRA) beats ASD alone on final accuracy (MFN)",
        "sefe/MFN",
        "asd/MFN",
        paper="ASD + RegLoRA ≥ either alone (Tables 1–3)",
    )
    paired("SEFE beats ASD alone on BWT", "sefe/BWT", "asd/BWT", paper="ASD + RegLoRA ≥ either alone")
    paired(
        "SEFE beats ASD alone on essential BWT (accuracy among compliant answers)",
        "sefe/essential_BWT",
        "asd/essential_BWT",
        paper="RegLoRA targets essential forgetting",
    )
    paired(
        "SEFE beats RegLoRA alone on final accuracy (MFN)",
        "sefe/MFN",
        "reglora/MFN",
        paper="ASD + RegLoRA ≥ either alone",
    )
    return ev


def _verdict(ev: Evidence, claim_start: str) -> str | None:
    h = next((h for h in ev.headlines if h.claim.startswith(claim_start)), None)
    return None if h is None else h.result["verdict"]


def _all(verdicts: list[str | None]) -> str | None:
    """Several headlines that must all hold: fails if one fails, holds if all hold, else not resolved."""
    if not verdicts or None in verdicts:
        return None
    if "fails" in verdicts:
        return "fails"
    return "holds" if all(v == "holds" for v in verdicts) else "not resolved"


def expected_direction_checks(
    exps: dict[str, TIExperiment], ev: Evidence | None = None
) -> list[tuple[str, str | None, str]]:
    """The spec's §7 expected directions with the verdict of their paired intervals over seeds (None = arm missing).

    A check holds only when its 95 % interval clears the threshold; one that straddles it is not resolved.
    """
    ev = ev or evidence(exps)
    out: list[tuple[str, str | None, str]] = []
    seq, asd, reg, sefe = (exps.get(a) for a in MAIN_ARMS)
    if seq and asd:
        ds, da = _first_drop(seq), _first_drop(asd)
        out.append(
            (
                "Without ASD, task 2 (YN) breaks task 1's format: compliance on task 1 drops sharply (≥ 20 points)",
                _verdict(ev, "Sequential LoRA: learning task 2"),
                f"sequential: −{ds[0] * 100:.1f} ± {ds[1] * 100:.1f} points",
            )
        )
        out.append(
            (
                "With ASD, task 1's compliance after task 2 stays near its post-task-1 value (drop < half of sequential's)",
                _verdict(ev, "ASD: task 1's compliance drop"),
                f"ASD: −{da[0] * 100:.1f} ± {da[1] * 100:.1f} points",
            )
        )
    if seq and reg:
        ks, kr = _diag_mean(seq, "key_mag"), _diag_mean(reg, "key_mag")
        ratio = ks[0] / kr[0] if kr[0] and not math.isnan(kr[0]) else math.nan
        out.append(
            (
                "RegLoRA: |B·A| at stored positions after task t+1 ≥ 5× lower than without",
                _verdict(ev, "RegLoRA shrinks"),
                f"{ks[0]:.2e} (seq) vs {kr[0]:.2e} (RegLoRA): ×{ratio:.1f}",
            )
        )
        a_s, a_r = seq.aggregate(), reg.aggregate()
        out.append(
            (
                "RegLoRA: final average accuracy (MFN) and BWT improve",
                _all([_verdict(ev, "RegLoRA alone raises final"), _verdict(ev, "RegLoRA alone raises BWT")]),
                f"MFN {pm(a_r['MFN'])} vs {pm(a_s['MFN'])}; BWT {pm(a_r['BWT'])} vs {pm(a_s['BWT'])}",
            )
        )
        out.append(
            (
                "RegLoRA: current-task accuracy (MFT) drops by a few points at most (≤ 5)",
                _verdict(ev, "RegLoRA costs at most"),
                f"MFT {pm(a_r['MFT'])} vs {pm(a_s['MFT'])}",
            )
        )
    if sefe and asd and reg:
        a = {k: e.aggregate() for k, e in (("sefe", sefe), ("asd", asd), ("reg", reg))}
        out.append(
            (
                "ASD + RegLoRA ≥ either alone on MFN and BWT (the paper's ordering)",
                _all(
                    [
                        _verdict(ev, "SEFE (ASD + RegLoRA) beats ASD alone on final"),
                        _verdict(ev, "SEFE beats ASD alone on BWT"),
                        _verdict(ev, "SEFE beats RegLoRA alone"),
                    ]
                ),
                "MFN "
                + " / ".join(pm(a[k]["MFN"]) for k in ("sefe", "asd", "reg"))
                + "; BWT "
                + " / ".join(pm(a[k]["BWT"]) for k in ("sefe", "asd", "reg"))
                + " (SEFE / ASD / RegLoRA)",
            )
        )
    return out


def _restrict(exp: TIExperiment, seeds: list[int]) -> TIExperiment:
    return TIExperiment(arm=exp.arm, tasks=exp.tasks, runs=[r for r in exp.runs if r.seed in seeds])


def lambda_sweep(exps: dict[str, TIExperiment], lam: float) -> dict[str, Any] | None:
    """The RegLoRA-only arms by λ (sequential LoRA as λ = 0, the main RegLoRA arm as ``lam``) on the seeds
    every sweep arm ran on."""
    swept = [a for a in exps if a.startswith("reglora_l")]
    if not swept or "seq" not in exps:
        return None
    seeds = sorted(set.intersection(*({r.seed for r in exps[a].runs} for a in swept)))
    arms = {0.0: "seq", lam: "reglora"} if "reglora" in exps else {0.0: "seq"}
    arms |= {float(a.removeprefix("reglora_l")): a for a in swept}
    rows = []
    key0 = _diag_mean(_restrict(exps["seq"], seeds), "key_mag")[0]
    for lam in sorted(arms):
        e = _restrict(exps[arms[lam]], seeds)
        if not e.runs:
            continue
        acc, ess = e.aggregate(), e.aggregate("essential")
        key, free = _diag_mean(e, "key_mag")[0], _diag_mean(e, "free_mag")[0]
        rows.append(
            {
                "lam": lam,
                "arm": arms[lam],
                "MFT": acc["MFT"],
                "MFN": acc["MFN"],
                "BWT": acc["BWT"],
                "eBWT": ess["BWT"],
                "key": key,
                "free": free,
                "ratio": key0 / key if key else math.nan,
            }
        )
    return {"seeds": seeds, "rows": rows}


def _mark(ok: bool | str | None) -> str:
    """PASS/FAIL for a unit check (exact), the verdict for an expected direction (interval over seeds)."""
    if isinstance(ok, str):
        return ok
    return "n/a" if ok is None else ("PASS" if ok else "FAIL")


def build_report(
    cfg: SefeConfig,
    exps: dict[str, TIExperiment],
    *,
    zero_shot: dict | None = None,
    unit_checks: list[tuple[str, bool, str]] | None = None,
    wall_s: float | None = None,
    title: str | None = None,
) -> Report:
    tasks = list(cfg.tasks)
    title = title or f"SEFE on {len(tasks)} scikit-learn instruction tasks ({' → '.join(tasks)})"
    arms = list(exps)
    n_seeds = len(cfg.seeds)

    def lab(arm: str) -> str:  # arms run on fewer seeds (the λ sweep) say so
        k = len(exps[arm].runs)
        return label(arm) + ("" if k == n_seeds else f" ({k} seed{'s' if k != 1 else ''})")

    aggs = {a: {k: e.aggregate(k) for k in ("accuracy", "compliance", "essential")} for a, e in exps.items()}
    best = max((a for a in arms if a != "multitask"), key=lambda a: aggs[a]["accuracy"]["MFN"][0], default=arms[0])
    summary = (
        f"{len(arms)} arms × {n_seeds} seeds on {' → '.join(tasks)} (SmolLM2-135M-Instruct, LoRA r={cfg.rank} on the "
        f"top {cfg.adapt_layers or 30} layers). Final mean accuracy MFN: "
        + "; ".join(f"{lab(a)} {pm(aggs[a]['accuracy']['MFN'])} %" for a in arms)
        + ". Final format compliance: "
        + "; ".join(f"{lab(a)} {pm(aggs[a]['compliance']['MFN'])} %" for a in arms if a != "multitask")
        + f". Best sequential arm by MFN: {lab(best)}."
    )
    ev = evidence(exps)
    n = ev.counts()
    summary += (
        f" Headline claims: {n['holds']} hold, {n['fails']} fail, {n['not resolved']} not resolved (paired by seed, "
        "95 % t intervals)."
    )
    report = Report(title=title, summary=summary)
    for a in arms:
        for kind in ("accuracy", "compliance", "essential"):
            for m in ("MFT", "MFN", "MAA", "BWT"):
                v = aggs[a][kind][m][0]
                report.metrics[f"{a}.{kind}.{m}"] = None if math.isnan(v) else round(v, 6)

    cols = ["arm", "MFT (%)", "MFN (%)", "MAA (%)", "BWT (points)", "forgetting (points)"]
    rows = [
        [lab(a)]
        + [
            "n/a" if a == "multitask" and m in ("MFT", "BWT", "forgetting") else pm(aggs[a]["accuracy"][m])
            for m in ("MFT", "MFN", "MAA", "BWT", "forgetting")
        ]
        for a in arms
    ]
    report.add_table(
        f"Accuracy (answer correct in the task's native format) — {n_seeds} seeds, mean ± std",
        cols,
        rows,
        note="MFT: right after learning; MFN: after the last task; MAA: mean over "
        "stages; BWT: mean (final − just-learned); multitask has no stages (final row only: MFT, BWT n/a).",
    )
    rows = [
        [
            lab(a),
            pm(aggs[a]["compliance"]["MFN"]),
            pm(aggs[a]["compliance"]["BWT"]),
            pm(aggs[a]["essential"]["MFN"]),
            pm(aggs[a]["essential"]["BWT"]),
        ]
        for a in arms
    ]
    report.add_table(
        "Superficial vs essential forgetting — final values and backward transfer",
        [
            "arm",
            "format compliance MFN (%)",
            "compliance BWT (points)",
            "essential acc. MFN (%)",
            "essential BWT (points)",
        ],
        rows,
        note="compliance = answers that parse in the task's native style (YN: yes/no; MCQ: a letter; SA: ≤ 3 words, "
        "not yes/no, not a letter); essential accuracy = correct among compliant answers (spec §6).",
    )
    # per-task final accuracy with baselines
    rows = []
    for j, t in enumerate(tasks):
        row = [
            TASKS[t].title,
            f"{TASKS[t].native}",
            f"{majority_accuracy(t) * 100:.1f}",
            f"{100 / len(TASKS[t].classes):.1f}",
        ]
        if zero_shot:
            z = zero_shot[t]
            row.append(f"{z.accuracy * 100:.1f} / {z.compliance * 100:.1f}")
        for a in arms:
            fin = [r.matrix("accuracy")[-1, j] for r in exps[a].runs]
            diag = [r.matrix("accuracy")[j, j] for r in exps[a].runs] if a != "multitask" else [math.nan]
            row.append(
                f"{np.mean(fin) * 100:.1f}" + ("" if a == "multitask" else f" (was {np.nanmean(diag) * 100:.1f})")
            )
        rows.append(row)
    report.add_table(
        "Per task: final accuracy (%) per arm (accuracy right after learning it in brackets) and baselines",
        ["task", "native style", "majority (%)", "chance (%)"]
        + (["zero-shot acc / compliance (%)"] if zero_shot else [])
        + [lab(a) for a in arms],
        rows,
        note=f"{cfg.n_test} test items per task (fixed subset, native style); majority = always the most frequent "
        "training class; zero-shot = the untrained model.",
    )
    # RegLoRA diagnostics
    rows = []
    for a in arms:
        if a == "multitask":
            continue
        k, f = _diag_mean(exps[a], "key_mag"), _diag_mean(exps[a], "free_mag")
        rf = _diag_mean(exps[a], "reg_last")
        rows.append(
            [
                lab(a),
                f"{k[0]:.2e} ± {k[1]:.1e}",
                f"{f[0]:.2e} ± {f[1]:.1e}",
                "n/a" if math.isnan(rf[0]) else f"{rf[0]:.2e}",
            ]
        )
    report.add_table(
        "RegLoRA diagnostic: mean |B·A| of the new task's update (tasks 2…T) at the stored key positions vs elsewhere",
        ["arm", "at stored positions", "elsewhere", "L_reg at the last step"],
        rows,
        note=f"key positions: top {cfg.key_fraction * 100:g} % of |B·A| per matrix, concatenated over past tasks; "
        f"λ = {cfg.lam:g} in the RegLoRA arms.",
    )
    sweep = lambda_sweep(exps, cfg.lam)
    if sweep:
        report.add_table(
            f"λ sweep (RegLoRA only, no ASD) on seed(s) {', '.join(map(str, sweep['seeds']))}",
            [
                "λ",
                "MFT (%)",
                "MFN (%)",
                "BWT (points)",
                "essential BWT (points)",
                "|B·A| at stored positions",
                "elsewhere",
                "suppression vs λ = 0",
            ],
            [
                [
                    f"{r['lam']:g}" + (" (sequential LoRA)" if r["lam"] == 0 else ""),
                    pm(r["MFT"]),
                    pm(r["MFN"]),
                    pm(r["BWT"]),
                    pm(r["eBWT"]),
                    f"{r['key']:.2e}",
                    f"{r['free']:.2e}",
                    f"×{r['ratio']:.1f}",
                ]
                for r in sweep["rows"]
            ],
            note="spec §6: sweep λ ∈ {0, 250, 2.5e3, 2.5e4} because the CE scale differs at 135M; every row on the "
            "same seeds; suppression = mean |B·A| at the stored positions with λ = 0 / with this λ (tasks 2…T).",
        )
    # §7 checks
    directions = expected_direction_checks(exps, ev)
    checks = [(n, ok, d) for n, ok, d in (unit_checks or [])] + directions
    report.add_table(
        "Spec §7 checks",
        ["check", "result", "measured"],
        [[n, _mark(ok), d] for n, ok, d in checks],
        note="Unit checks: PASS/FAIL (exact). Expected directions: the verdict of the paired interval over seeds "
        "(mean ± std shown); one that touches or straddles its threshold is not resolved.",
    )
    report.metrics["checks_passed"] = sum(1 for _, ok, _ in checks if ok is True or ok == "holds")
    report.metrics["checks_total"] = len(checks)
    # figures
    show = [a for a in arms]
    fig = accuracy_matrix_figure(
        {lab(a): exps[a].mean_matrix("accuracy") for a in show},
        title=f"Accuracy matrix a[t, j] (mean of {n_seeds} seeds)",
    )
    report.add_figure("accuracy_matrix.png", fig, caption="accuracy after task t (rows) on task j (columns)")
    fig = accuracy_matrix_figure(
        {lab(a): exps[a].mean_matrix("compliance") for a in show},
        title=f"Format compliance c[t, j] (mean of {n_seeds} seeds)",
    )
    report.add_figure("compliance_matrix.png", fig, caption="share of answers in task j's native format")
    # examples of superficially forgotten answers (first seed, final stage, earlier tasks)
    ex_rows = []
    for a in ("seq", "reglora", "asd", "sefe"):
        if a not in exps:
            continue
        run = exps[a].runs[0]
        for t in tasks[:-1]:
            for e in run.examples[-1].get(t, []):
                if not e["compliant"]:
                    ex_rows.append([lab(a), t, e["prompt"].split("\n")[0][:90], e["answer"], e["output"][:60]])
                    break
    report.add_table(
        "Superficially forgotten answers (first seed, after the last task)",
        ["arm", "task", "question (first line)", "expected", "model's answer"],
        ex_rows[:12],
    )
    paper_rows = [[k, v] for k, v in PAPER_CLAIMS]
    report.add_table("The paper (ICML 2025, CoIN) — for context", ["", "claim"], paper_rows)
    report.data = {
        "config": cfg.model_dump(mode="json"),
        "tasks": tasks,
        "arms": {a: e.to_dict() for a, e in exps.items()},
        "zero_shot": {
            k: {"accuracy": v.accuracy, "compliance": v.compliance, "examples": v.examples}
            for k, v in (zero_shot or {}).items()
        },
        "wall_s": wall_s,
    }
    report.add_json("runs.json", report.data, caption="every run: matrices, diagnostics, example answers")
    report.add_json(
        "results.json",
        ev.to_json(config=cfg.model_dump(mode="json"), wall_s=wall_s),
        caption="per-seed values of every arm and the headline specifications (core.evidence)",
    )
    n_pass = report.metrics["checks_passed"]
    report.add_section(
        "Results",
        "The tables follow below (accuracy, superficial vs essential forgetting, per task with baselines, the "
        "RegLoRA diagnostic, superficially forgotten answers, the §7 checks, the paper's claims).\n\n"
        "![accuracy matrices](artifact:accuracy_matrix.png)\n\n![format compliance](artifact:compliance_matrix.png)",
    )
    report.add_section(
        "Spec §7 checks",
        f"{n_pass} of {len(checks)} checks pass or hold; each is a row of the table "
        "'Spec §7 checks' below, with what was measured.",
    )
    report.add_section(
        "The paper's results beside ours",
        "The paper's table values could not be retrieved offline (spec §4), so its claims are listed (table "
        "'The paper' below) and set against ours by the expected-direction rows of the §7 table: "
        + "; ".join(f"{n}: {_mark(ok)}" for n, ok, _ in directions)
        + ".",
    )
    report.sections.insert(0, ev.section())
    return report


def reading(exps: dict[str, TIExperiment], checks: list[tuple[str, Any, str]], lam: float = 2.5e3) -> str:
    """A plain paragraph from the measured numbers (what holds, what does not, what would change it)."""
    parts: list[str] = []
    head: list[str] = []
    ev = evidence(exps)
    if ev.headlines:
        verdicts = {
            v: [h for h in ev.headlines if h.result["verdict"] == v] for v in ("holds", "fails", "not resolved")
        }
        for v, name in (("holds", "Holds"), ("fails", "Fails"), ("not resolved", "Not resolved")):
            if verdicts[v]:
                head.append(
                    f"**{name}** (paired over {ev.headlines[0].result['n']} seeds): "
                    + "; ".join(f"{h.claim} ({_est(h)})" for h in verdicts[v])
                    + "."
                )
    agg = {a: e.aggregate() for a, e in exps.items()}
    comp = {a: e.aggregate("compliance") for a, e in exps.items()}
    if "seq" in exps:
        d = _first_drop(exps["seq"])
        parts.append(
            f"Sequential LoRA loses task 1's answer format as soon as task 2 (yes/no) is learned: compliance on "
            f"task 1 falls by {d[0] * 100:.0f} ± {d[1] * 100:.0f} points, so part of its accuracy loss is superficial."
        )
    if "asd" in exps and "seq" in exps:
        parts.append(
            f"ASD ends with {pm(comp['asd']['MFN'])} % compliant answers against {pm(comp['seq']['MFN'])} % for "
            f"sequential LoRA, and MFN {pm(agg['asd']['MFN'])} vs {pm(agg['seq']['MFN'])} %."
        )
    if "reglora" in exps and "seq" in exps:
        parts.append(
            f"RegLoRA alone gives MFN {pm(agg['reglora']['MFN'])} % and BWT {pm(agg['reglora']['BWT'])} points "
            f"(sequential: {pm(agg['seq']['MFN'])} %, {pm(agg['seq']['BWT'])})."
        )
    if "sefe" in exps:
        parts.append(f"SEFE (both) gives MFN {pm(agg['sefe']['MFN'])} % and BWT {pm(agg['sefe']['BWT'])} points.")
    if "multitask" in exps:
        parts.append(f"Joint multitask training reaches MFN {pm(agg['multitask']['MFN'])} % (the upper bound).")
    # knowledge: is each task learned beyond its majority baseline right after training it?
    ref = exps.get("seq") or next(iter(exps.values()))
    tasks = ref.tasks
    if ref.runs and len(ref.runs[0].matrix()) == len(tasks) and ref.arm != "multitask":
        weak = []
        for j, t in enumerate(tasks):
            just = float(np.nanmean([r.matrix()[j, j] for r in ref.runs]))
            if just <= majority_accuracy(t) + 0.05:
                weak.append(f"{t} ({just * 100:.0f} % vs majority {majority_accuracy(t) * 100:.0f} %)")
        if weak and len(weak) == len(tasks):
            parts.append(
                "Right after training, no task is learned beyond always giving its majority answer ("
                + ", ".join(weak)
                + "), so this run measures superficial forgetting (format) only: it cannot show essential forgetting, "
                "nor RegLoRA's remedy for it."
            )
            if "reglora" in agg and "seq" in agg:
                same = abs(agg["reglora"]["MFN"][0] - agg["seq"]["MFN"][0]) <= max(agg["seq"]["MFN"][1], 0.01)
                parts.append(
                    f"RegLoRA-only's MFN is {'within one seed-std of' if same else 'different from'} sequential "
                    "LoRA's: the old tasks' losses are format breaks, which RegLoRA is not designed to prevent."
                )
        elif weak:
            parts.append(
                "Right after training, " + ", ".join(weak) + " are not learned beyond always giving the majority "
                "answer, so on those tasks there is little knowledge to lose: their accuracy changes measure the "
                "format (superficial) more than essential forgetting."
            )
        if not weak:
            learned = [
                f"{t} {np.nanmean([r.matrix()[j, j] for r in ref.runs]) * 100:.0f} % "
                f"(majority {majority_accuracy(t) * 100:.0f} %)"
                for j, t in enumerate(tasks)
            ]
            parts.append(
                "Right after training every task is learned beyond its majority answer (" + ", ".join(learned) + "), "
                "so forgetting here can be essential (knowledge) as well as superficial (format)."
            )
        ess = {a: e.aggregate("essential") for a, e in exps.items()}
        if "asd" in ess and "sefe" in ess and not weak:
            ea, es = ess["asd"]["BWT"], ess["sefe"]["BWT"]
            d = es[0] - ea[0]
            spread = max(ea[1], es[1], 0.01)
            parts.append(
                f"Essential forgetting (accuracy among answers in the right format): ASD's essential BWT is "
                f"{pm(ea)} points, SEFE's {pm(es)}: RegLoRA on top of ASD "
                + (
                    f"{'reduces' if d > 0 else 'increases'} it by {abs(d) * 100:.1f} points, "
                    f"{'more' if abs(d) > spread else 'less'} than the seed spread ({spread * 100:.1f})."
                    if not (math.isnan(ea[0]) or math.isnan(es[0]))
                    else "cannot be compared (no compliant answers left)."
                )
            )
    sweep = lambda_sweep(exps, lam)
    if sweep:
        parts.append(
            f"λ sweep without ASD (seed(s) {', '.join(map(str, sweep['seeds']))}): "
            + "; ".join(
                f"λ = {r['lam']:g}: MFT {r['MFT'][0] * 100:.1f} %, MFN {r['MFN'][0] * 100:.1f} %, BWT "
                f"{r['BWT'][0] * 100:.1f}, stored positions ×{r['ratio']:.1f} smaller"
                for r in sweep["rows"]
            )
            + "."
        )
    failed = [n for n, ok, _ in checks if ok is False or ok == "fails"]
    open_ = [n for n, ok, _ in checks if ok == "not resolved"]
    parts.append(
        ("Checks that fail: " + "; ".join(failed) + "." if failed else "No §7 check fails.")
        + (
            " Not resolved (the interval over seeds straddles the threshold): " + "; ".join(open_) + "."
            if open_
            else ""
        )
    )
    more = []
    if weak:
        more.append(
            "more training per task (the spec's 600 examples, LoRA on all 30 layers — the `spec` preset) so that "
            "every task is learned well above its majority baseline"
        )
    if not sweep:
        more.append("the λ sweep {250, 2.5e3, 2.5e4} (the `cpu` preset runs it on one seed)")
    seeds = max(len(e.runs) for e in exps.values())
    more.append(f"more seeds where the arms' intervals overlap ({seeds} here)")
    more.append("LoRA on all 30 layers at the spec's lr 2e-4 and batch 8–16 with more steps")
    parts.append(
        "What would change the conclusion: "
        + "; ".join(more)
        + "; the CoIN tasks themselves (images) are not available offline."
    )
    return "\n\n".join([*head, " ".join(parts)])


def _est(h: Any) -> str:
    r = h.result
    sign = "+" if h.stat in ("paired_diff", "diff") else ""

    def f(x: float) -> str:
        return f"{x * h.scale:{sign}.{h.digits}f}"

    ci = "" if r.get("low") is None or r.get("n", 0) < 2 else f" [{f(r['low'])}, {f(r['high'])}]"
    return f"{f(r['estimate'])}{ci} {h.unit}".strip()
