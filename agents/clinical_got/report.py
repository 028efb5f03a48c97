"""Report builders: one case's trace, one arm's metrics, and the reproducer's comparison (``docs/results``)."""

from __future__ import annotations

import math
from typing import Any

from agents.clinical_got.config import ClinicalGotConfig
from agents.clinical_got.figures import graph_dot, graph_figure, triples_figure
from agents.clinical_got.nodes import NODE_TITLES, model_of
from core.jobs import Report
from core.provenance import provenance_line
from methods.clinical_got.bench import PreparedCase

PAPER_GAIN = 15.0  # abstract: "~15% absolute gain" on the 2-year outcome (Gemini-1.5-flash, real data)


def _f(x: Any, nd: int = 3) -> Any:
    return round(x, nd) if isinstance(x, float) and not math.isnan(x) else x


def case_trace_report(row: dict[str, Any], case: PreparedCase, mode: str, config: ClinicalGotConfig) -> Report:
    t = case.truth
    n4 = (row["parsed"] or {}).get("n4")
    report = Report(
        title=f"Clinical GoT ({mode}): {case.case_id}",
        summary=f"outcome answer {n4 if n4 is not None else 'unparsable'} vs truth {t['outcome']} "
        f"(P(adverse) = {t['p_adverse']:.2f}); grade {t['grade']}, score {t['score']}, "
        f"{len(t['injured'])} injured ROIs. Synthetic stand-in case (the real MRI data are under a data-use "
        "agreement).",
    )
    report.add_table(
        "Node answers",
        ["node", "source", "answer", "parsed", "seconds"],
        [
            [NODE_TITLES[n], a.get("source", ""), a.get("answer", ""), str(a.get("parsed")), a.get("seconds", 0.0)]
            for n, a in row["answers"].items()
            if a
        ],
    )
    report.add_table(
        "Ground truth",
        ["task", "answer"],
        [
            ["1 grade, lesion %", f"level{t['grade']}, {100 * t['lesion_p']:.2f}%"],
            ["2 injured ROIs", str(t["injured"])],
            ["2.5 uncommon ROIs", str(t["uncommon"])],
            ["3 score", t["score"]],
            ["4 outcome", t["outcome"]],
            ["5 caption", t["caption"]],
        ],
    )
    report.add_figure("graph.png", graph_figure(row, mode), caption="The graph with each node's answer")
    report.add_figure("slices.png", triples_figure(case), caption="Slice triples (middle third)")
    report.data = {
        "case_id": case.case_id,
        "mode": mode,
        "model": model_of(config),
        "config": config.model_dump(mode="json"),
        "truth": t,
        "answers": row["answers"],
        "parsed": row["parsed"],
        "dot": graph_dot(row, mode),
        "triples": case.triples,
    }
    return report


def metric_row(label: str, m: dict[str, Any]) -> list[Any]:
    t4 = m["task4"]
    lo, hi = t4.get("accuracy_ci", [float("nan"), float("nan")])
    return [
        label,
        m["n_cases"],
        _f(m["task1"]["accuracy"]),
        _f(m["task1"]["mae_pct"], 2),
        _f(m["task2"]["f1"]),
        _f(m["task2"]["jaccard"]),
        _f(m["task2_5"]["yes_no_accuracy"]),
        _f(m["task2_5"]["f1"]),
        _f(m["task3"]["accuracy"]),
        f"{t4['accuracy']:.3f} [{lo:.2f}, {hi:.2f}]",
        _f(t4["balanced_accuracy"]),
        int(t4["missing"]),
        _f(m["task5"].get("rougeL_f", float("nan"))),
    ]


METRIC_COLUMNS = [
    "arm",
    "cases",
    "T1 grade acc",
    "T1 MAE (pp)",
    "T2 F1",
    "T2 Jaccard",
    "T2.5 yes/no acc",
    "T2.5 F1",
    "T3 score acc",
    "T4 outcome acc [95% CI]",
    "T4 balanced acc",
    "T4 missing",
    "T5 ROUGE-L F",
]


def arm_report(result: Any) -> Report:
    m = result.metrics
    report = Report(
        title=f"Clinical GoT benchmark run: {result.arm.name} ({result.model})",
        summary=f"outcome accuracy {m['task4']['accuracy']:.3f} (balanced {m['task4']['balanced_accuracy']:.3f}) over "
        f"{m['n_cases']} synthetic cases; majority class {result.baselines['majority_outcome_accuracy']:.3f}, "
        f"Bayes ceiling {result.baselines['bayes']:.3f} (run {result.run_id}).",
    )
    report.add_table("All six tasks", METRIC_COLUMNS, [metric_row(result.arm.name, m)])
    report.metrics.update(
        {"outcome_accuracy": _f(m["task4"]["accuracy"], 4), "run_id": result.run_id, "seconds": _f(result.seconds, 1)}
    )
    report.data = {"run_id": result.run_id, "metrics": m, "baselines": result.baselines, "rows": result.rows}
    return report


def _gain(results: list[Any], model: str, a: str, b: str, key: str) -> float | None:
    by = {r.arm.name: r for r in results if r.model == model}
    if a not in by or b not in by:
        return None
    return 100 * (by[a].metrics["task4"][key] - by[b].metrics["task4"][key])


def reproduce_report(
    results: list[Any], *, skipped: dict[str, str], options: dict[str, Any], command: str, wall_s: float
) -> Report:
    models = list(dict.fromkeys(r.model for r in results if r.arm.name != "oracle-all"))
    ceiling = next((r for r in results if r.arm.name == "oracle-all"), None)
    lines = []
    for model in models:
        d_acc = _gain(results, model, "cgot", "direct", "accuracy")
        d_bal = _gain(results, model, "cgot", "direct", "balanced_accuracy")
        d_or = _gain(results, model, "cgot-oracle-upstream", "direct", "accuracy")
        if d_acc is not None:
            r = next(x for x in results if x.model == model)
            lines.append(
                f"{model} ({r.metrics['n_cases']} cases, majority class "
                f"{r.baselines['majority_outcome_accuracy']:.2f}): CGoT − direct = {d_acc:+.1f} points outcome "
                f"accuracy ({d_bal:+.1f} balanced); with oracle N1–N3 upstream {d_or:+.1f}"
            )
    report = Report(
        title="Clinical GoT vs the direct question on the synthetic HIE-Reasoning stand-in",
        summary="; ".join(lines) + f". Paper (Gemini-1.5-flash, real data): +{PAPER_GAIN:.0f} points."
        if lines
        else "No model arm ran.",
    )
    rows = [metric_row(f"{r.arm.label or r.arm.name}", r.metrics) for r in results]
    report.add_table(
        "All six task metrics per arm",
        METRIC_COLUMNS,
        rows,
        note="Outcome CI: 95 % percentile bootstrap over cases. Missing (unparsable) answers count as wrong.",
    )
    base = []
    for model in models:
        r = next(x for x in results if x.model == model)
        base.append(
            [model, r.metrics["n_cases"], _f(r.baselines["majority_outcome_accuracy"]), _f(r.baselines["bayes"])]
        )
    if ceiling is not None:
        base.append(
            [
                "all cases (oracle-all arm)",
                ceiling.metrics["n_cases"],
                _f(ceiling.baselines["majority_outcome_accuracy"]),
                _f(ceiling.baselines["bayes"]),
            ]
        )
    report.add_table(
        "Outcome baselines on the same cases", ["cases of", "n", "majority class acc", "Bayes ceiling acc"], base
    )
    paper = [["paper (abstract): Gemini-1.5-flash, 133 real cases", f"+{PAPER_GAIN:.0f}", "—"]]
    for model in models:
        d_acc = _gain(results, model, "cgot", "direct", "accuracy")
        d_or = _gain(results, model, "cgot-oracle-upstream", "direct", "accuracy")
        paper.append([f"ours: {model}, synthetic", _f(d_acc, 1), _f(d_or, 1)])
    report.add_table(
        "Outcome gain, CGoT − direct (accuracy points)", ["setting", "CGoT − direct", "oracle N1–N3 − direct"], paper
    )
    if skipped:
        report.add_table("Skipped models", ["model", "why"], [[k, v] for k, v in skipped.items()])
    report.add_section("What was shrunk", _shrunk(options, results))
    report.add_section("Reading", _reading(results, models, ceiling))
    report.add_section(
        "Run",
        f"`{command}` — wall {wall_s / 60:.1f} min, benchmark seed {options.get('seed')}. {provenance_line()} "
        "Node answer time summed over all answers, as recorded when each was "
        f"generated: {_answer_seconds(results) / 60:.1f} min (parallel nodes such as N1 ∥ N2 overlap, so this exceeds "
        "the generating run's wall time; a rerun takes finished cases from the LangGraph checkpoints, so its own "
        "wall time can be far shorter).",
    )
    first = next((r for r in results if r.arm.name == "cgot"), None)
    if first is not None and first.rows:
        report.add_figure("graph.png", graph_figure(first.rows[0]), caption=f"CGoT trace of {first.rows[0]['case_id']}")
    report.add_json(
        "metrics.json",
        [
            {
                "arm": r.arm.name,
                "label": r.arm.label,
                "model": r.model,
                "run_id": r.run_id,
                "metrics": r.metrics,
                "baselines": r.baselines,
            }
            for r in results
        ],
    )
    report.data = {
        "arms": [
            {
                "arm": r.arm.name,
                "label": r.arm.label,
                "model": r.model,
                "run_id": r.run_id,
                "metrics": r.metrics,
                "baselines": r.baselines,
            }
            for r in results
        ]
    }
    return report


def _answer_seconds(results: list[Any]) -> float:
    return sum(float(a.get("seconds") or 0.0) for r in results for row in r.rows for a in row["answers"].values())


def _shrunk(options: dict[str, Any], results: list[Any]) -> str:
    n = {r.model: r.metrics["n_cases"] for r in results}
    return "\n".join(
        [
            "- **Data**: the real HIE-Reasoning MRI (ADC/Z-ADC, atlases, QA, outcomes; 133 infants) is under a data-use "
            "agreement and not obtainable here. Every number below is on a **seeded synthetic stand-in** built by the "
            "spec's generator (64×64×24 volumes, ellipsoidal brain, 62-label geometric atlas with the real ROI names, "
            "Gaussian ADC lesions by clinical pattern, ground truth by the benchmark's rules, outcome ~ Bernoulli(sigmoid("
            "2.5·score + 1.5·[vermis/cerebellum/brainstem/hippocampus] − 4.6))).",
            f"- **Cases**: {', '.join(f'{k}: {v}' for k, v in n.items())} (spec: 133 per model).",
            "- **Model**: the paper uses LVLMs (Gemini-1.5-flash, GPT-4o…). Ours are text-only local models; they read "
            "the slice PNGs through the deterministic visual-findings adapter (blue-pixel counts per slice and per ROI "
            "colour over the middle third), answer formats enforced by regex-constrained decoding.",
            "- **Oracle arms**: `CGoT, oracle N1–N3` feeds the ground-truth grading, anatomy and score to N4 (the "
            "model still answers N4); `oracle N1–N4` also answers N4 with the Bayes decision of the outcome model — "
            "the ceiling of the synthetic generator.",
        ]
    )


def _answers(result: Any) -> str:
    """How the arm answered N4: ``1×4, 0×2`` (``?`` = unparsable)."""
    got = [r["parsed"].get("n4") for r in result.rows]
    counts = {k: got.count(k) for k in (1, 0, None) if got.count(k)}
    return ", ".join(f"{'?' if k is None else k}×{v}" for k, v in counts.items())


def _reading(results: list[Any], models: list[str], ceiling: Any) -> str:
    out = []
    for model in models:
        by = {r.arm.name: r for r in results if r.model == model}
        if not {"cgot", "direct"} <= set(by):
            continue
        c, d = by["cgot"].metrics["task4"], by["direct"].metrics["task4"]
        maj = by["cgot"].baselines["majority_outcome_accuracy"]
        n = by["cgot"].metrics["n_cases"]
        lo, hi = c["accuracy_ci"]
        gap = 100 * (c["accuracy"] - d["accuracy"])
        both_classes = not (math.isnan(c["recall_0"]) or math.isnan(c["recall_1"]))
        text = (
            f"- **{model}** ({n} case{'s' if n != 1 else ''}): outcome accuracy CGoT {c['accuracy']:.3f} "
            f"[{lo:.2f}, {hi:.2f}] vs direct {d['accuracy']:.3f} ({gap:+.1f} points = {round(gap * n / 100):+d} "
            f"case(s)); majority class {maj:.3f}, so CGoT is {'above' if c['accuracy'] > maj else 'not above'} the "
            f"majority-class baseline. N4 answers: CGoT {_answers(by['cgot'])}, direct {_answers(by['direct'])}"
        )
        if not both_classes:
            text += "; only one outcome class among these cases, so balanced accuracy says nothing here."
        elif max(c["balanced_accuracy"], d["balanced_accuracy"]) <= 0.55:
            text += (
                f"; balanced accuracy {c['balanced_accuracy']:.2f} vs {d['balanced_accuracy']:.2f}: the answers barely "
                "depend on the case."
            )
        else:
            text += f"; balanced accuracy {c['balanced_accuracy']:.2f} vs {d['balanced_accuracy']:.2f}."
        if n < 20:
            text += f" With {n} case(s) a difference of this size is within noise (see the CI)."
        text += (
            f" Upstream (CGoT): grade accuracy {by['cgot'].metrics['task1']['accuracy']:.2f}, anatomy F1 "
            f"{by['cgot'].metrics['task2']['f1']:.2f}, score accuracy {by['cgot'].metrics['task3']['accuracy']:.2f}."
        )
        out.append(text)
        if "cgot-oracle-upstream" in by:
            o = by["cgot-oracle-upstream"].metrics["task4"]
            bayes = by["cgot-oracle-upstream"].baselines["bayes"]
            out.append(
                f"  With the true N1–N3 answers upstream, N4 reaches {o['accuracy']:.3f} (Bayes ceiling {bayes:.3f}; "
                f"answers {_answers(by['cgot-oracle-upstream'])}): "
                + (
                    "it follows the true score on these cases."
                    if both_classes and o["balanced_accuracy"] > 0.6
                    else "too few cases or classes to tell whether it uses the parents' answers."
                    if not both_classes
                    else "even perfect upstream answers do not make this model map score → outcome."
                )
            )
    if ceiling is not None:
        m = ceiling.metrics
        out.append(
            f"- The all-oracle arm scores tasks 1–3 at {m['task1']['accuracy']:.2f} / {m['task2']['f1']:.2f} / "
            f"{m['task3']['accuracy']:.2f} and outcome {m['task4']['accuracy']:.3f} against the Bayes ceiling "
            f"{ceiling.baselines['bayes']:.3f} of the generator (outcomes are drawn, so even perfect reasoning "
            "misses some)."
        )
    out.append(
        "- What holds: the graph (node order, DAG, parents quoted verbatim), the knowledge texts, the answer formats, "
        "the parsing (unparsable = wrong) and every metric follow the reference, and the oracle arm reproduces the "
        "checks of spec §7 (tasks 1–3 perfect, outcome at the generator's Bayes ceiling). What this run cannot show: "
        "the paper's +15 points is a real-data LVLM result; small text-only local models reading pixel counts on a "
        "few synthetic cases neither confirm nor refute it — compare the gains with the bootstrap CI widths above."
    )
    return "\n".join(out)
