"""Report builders: one case's trace, one arm's metrics, and the reproducer's comparison (``docs/results``)."""

from __future__ import annotations

import math
from typing import Any

from agents.clinical_got.config import ClinicalGotConfig
from agents.clinical_got.figures import graph_dot, graph_figure, triples_figure
from agents.clinical_got.nodes import NODE_TITLES, model_of
from core.evidence import Evidence
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


def _short(model: str) -> str:
    """A model's name without its provider (``local/smollm2-135m-instruct`` → ``smollm2-135m-instruct``): the
    key of its raw values in results.json (paths there are ``/``-separated)."""
    return model.split("/")[-1]


def _n4_correct(rows: list[dict[str, Any]]) -> list[int]:
    """Per case: 1 when N4's parsed answer is the true outcome (an unparsable answer is wrong)."""
    return [int((r["parsed"] or {}).get("n4") is not None and r["parsed"]["n4"] == r["truth"]["outcome"]) for r in rows]


def _majority(rows: list[dict[str, Any]]) -> int:
    """The majority outcome class of these cases (ties: adverse = 1, the class CGoT's answers lean to)."""
    gold = [int(r["truth"]["outcome"]) for r in rows]
    return 1 if 2 * sum(gold) >= len(gold) else 0


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


TRUTH_KEYS = ("grade", "lesion_p", "injured", "uncommon", "rare_any", "score", "outcome", "p_adverse", "pattern")


def raw_values(results: list[Any]) -> dict[str, Any]:
    """results.json's raw values: per model and arm the per-case N4 correctness (the headlines' items), the
    majority class on the same cases, and every case's ground truth and node answers (text and parsed)."""
    raw: dict[str, Any] = {"models": {}, "cases": {}}
    for r in results:
        if r.arm.name == "oracle-all":
            raw["oracle_all"] = {
                "case_ids": [row["case_id"] for row in r.rows],
                "n4_correct": _n4_correct(r.rows),
                "bayes": r.baselines["bayes"],
            }
            for row in r.rows:
                raw["cases"].setdefault(row["case_id"], {"truth": {k: row["truth"].get(k) for k in TRUTH_KEYS}})
            continue
        m = raw["models"].setdefault(_short(r.model), {"model": r.model, "arms": {}})
        maj = _majority(r.rows)
        m.update(
            {
                "case_ids": [row["case_id"] for row in r.rows],
                "majority_class": maj,
                "majority_correct": [int(row["truth"]["outcome"] == maj) for row in r.rows],
                "bayes": r.baselines["bayes"],
            }
        )
        t4 = r.metrics["task4"]
        m["arms"][r.arm.name] = {
            "n4_correct": _n4_correct(r.rows),
            "n4": [(row["parsed"] or {}).get("n4") for row in r.rows],
            "balanced_accuracy": t4["balanced_accuracy"],
            "task1_accuracy": r.metrics["task1"]["accuracy"],
            "task2_f1": r.metrics["task2"]["f1"],
            "task3_accuracy": r.metrics["task3"]["accuracy"],
        }
        for row in r.rows:
            case = raw["cases"].setdefault(row["case_id"], {"truth": {k: row["truth"].get(k) for k in TRUTH_KEYS}})
            case.setdefault("answers", {}).setdefault(_short(r.model), {})[r.arm.name] = {
                node: {"answer": a.get("answer", ""), "parsed": a.get("parsed"), "source": a.get("source", "")}
                for node, a in row["answers"].items()
                if a and node in ("n1", "n2", "n2_5", "n3", "n4")
            }
    return _jsonable(raw)


def evidence(results: list[Any]) -> Evidence:
    """The headline claims, computed from the per-case values (paired bootstrap over the same cases)."""
    ev = Evidence(raw_values(results))
    for short, m in ev.raw["models"].items():
        arms = m["arms"]
        n = len(m["case_ids"])
        maj = sum(m["majority_correct"]) / n if n else float("nan")
        if not {"cgot", "direct"} <= set(arms):
            continue
        acc = {a: sum(v["n4_correct"]) / n for a, v in arms.items()}
        base = f"direct {acc['direct']:.3f}, CGoT {acc['cgot']:.3f}, majority class {maj:.3f} ({short}, {n} cases)"
        ev.headline(
            f"CGoT raises 2-year outcome accuracy over the direct question ({short})",
            stat="paired_diff",
            a=f"models/{short}/arms/cgot/n4_correct",
            b=f"models/{short}/arms/direct/n4_correct",
            interval="bootstrap",
            paper=f"+{PAPER_GAIN:.0f} points (Gemini-1.5-flash, 133 real cases)",
            context=base,
            unit="points",
            scale=100,
            digits=1,
        )
        ev.headline(
            f"CGoT's outcome accuracy beats the majority class ({short})",
            stat="paired_diff",
            a=f"models/{short}/arms/cgot/n4_correct",
            b=f"models/{short}/majority_correct",
            interval="bootstrap",
            paper="— (no majority baseline in the paper)",
            context=f"majority class (always {m['majority_class']}) {maj:.3f}; CGoT {acc['cgot']:.3f}",
            unit="points",
            scale=100,
            digits=1,
        )
        if "cgot-oracle-upstream" in arms:
            ev.headline(
                f"With the true N1–N3 upstream, N4 beats the direct question ({short})",
                stat="paired_diff",
                a=f"models/{short}/arms/cgot-oracle-upstream/n4_correct",
                b=f"models/{short}/arms/direct/n4_correct",
                interval="bootstrap",
                paper="— (spec §6: oracle-features upper bound)",
                context=f"oracle N1–N3 {acc['cgot-oracle-upstream']:.3f}, direct {acc['direct']:.3f}, Bayes ceiling "
                f"{m['bayes']:.3f}",
                unit="points",
                scale=100,
                digits=1,
            )
    return ev


def _summary_line(ev: Evidence, skipped: dict[str, str]) -> str:
    """The doc's first line: per model the CGoT − direct gain with its paired CI and verdict, the majority class
    and CGoT against it, and the paper's number beside them."""
    lines = []
    heads = {h.claim: h for h in ev.headlines}
    for short, m in ev.raw["models"].items():
        gain = heads.get(f"CGoT raises 2-year outcome accuracy over the direct question ({short})")
        vs_maj = heads.get(f"CGoT's outcome accuracy beats the majority class ({short})")
        if gain is None or vs_maj is None:
            continue
        g, v = gain.result, vs_maj.result
        n = len(m["case_ids"])
        acc = {a: sum(x["n4_correct"]) / n for a, x in m["arms"].items()}
        maj = sum(m["majority_correct"]) / n
        lines.append(
            f"{m['model']} on {n} synthetic cases: outcome accuracy CGoT {acc['cgot']:.3f}, direct "
            f"{acc['direct']:.3f}, majority class {maj:.3f}. CGoT − direct {100 * g['estimate']:+.1f} points "
            f"[{100 * g['low']:+.1f}, {100 * g['high']:+.1f}] (paired bootstrap over cases): **{g['verdict']}**; "
            f"CGoT − majority class {100 * v['estimate']:+.1f} [{100 * v['low']:+.1f}, {100 * v['high']:+.1f}]: "
            f"**{v['verdict']}**"
        )
    if not lines:
        return "No model arm ran."
    text = ". ".join(lines) + (
        f". The paper's +{PAPER_GAIN:.0f} points (Gemini-1.5-flash, 133 real cases) is a different model and data set: "
        "it sits beside ours, not against it."
    )
    if skipped:
        text += " Not run: " + "; ".join(f"{k} ({v.split('(')[0].strip()})" for k, v in skipped.items()) + "."
    return text


def reproduce_report(
    results: list[Any], *, skipped: dict[str, str], options: dict[str, Any], command: str, wall_s: float
) -> Report:
    models = list(dict.fromkeys(r.model for r in results if r.arm.name != "oracle-all"))
    ceiling = next((r for r in results if r.arm.name == "oracle-all"), None)
    ev = evidence(results)
    report = Report(
        title="Clinical GoT vs the direct question on the synthetic HIE-Reasoning stand-in",
        summary=_summary_line(ev, skipped),
    )
    report.sections.append(ev.section())
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
    if skipped:
        report.add_table("Skipped models", ["model", "why"], [[k, v] for k, v in skipped.items()])
    report.add_section("What was shrunk", _shrunk(options, results))
    report.add_section("Reading", _reading(results, models, ceiling, ev))
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
    report.add_json("results.json", ev.to_json(options=options, command=command, wall_s=round(wall_s, 1)))
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
            f"- **Cases**: {', '.join(f'{k}: {v}' for k, v in n.items())} (spec: 133 per model; issue #49 asks for at "
            "least 60 with the 135M and 20 with the 1.5B). On the shared two-core machine an LLM arm costs minutes "
            "a case, so each run is sized to about an hour of wall time; a model not listed here was not run (see "
            "Skipped models).",
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


def _constant(result: Any) -> int | None:
    """The one N4 answer an arm gave on every case, or None when its answers vary (or none parsed)."""
    got = {(r["parsed"] or {}).get("n4") for r in result.rows}
    return next(iter(got)) if len(got) == 1 and None not in got else None


#: How the Reading states the CGoT − direct verdict.
_GAIN_READS = {
    "holds": "favours CGoT (its interval lies above 0)",
    "fails": "favours the direct question (its interval lies below 0)",
    "not resolved": "is not resolved (its interval straddles 0)",
}


def _reading(results: list[Any], models: list[str], ceiling: Any, ev: Evidence) -> str:
    out = []
    heads = {h.claim: h.result for h in ev.headlines}
    for model in models:
        by = {r.arm.name: r for r in results if r.model == model}
        if not {"cgot", "direct"} <= set(by):
            continue
        short = _short(model)
        c, d = by["cgot"].metrics["task4"], by["direct"].metrics["task4"]
        maj = by["cgot"].baselines["majority_outcome_accuracy"]
        n = by["cgot"].metrics["n_cases"]
        lo, hi = c["accuracy_ci"]
        gain = heads.get(f"CGoT raises 2-year outcome accuracy over the direct question ({short})", {})
        vs_maj = heads.get(f"CGoT's outcome accuracy beats the majority class ({short})", {})
        both_classes = not (math.isnan(c["recall_0"]) or math.isnan(c["recall_1"]))
        text = (
            f"- **{model}** ({n} case{'s' if n != 1 else ''}): outcome accuracy CGoT {c['accuracy']:.3f} "
            f"[{lo:.2f}, {hi:.2f}] vs direct {d['accuracy']:.3f}; the paired difference "
            f"{_GAIN_READS.get(gain.get('verdict'), 'was not computed')}, "
            f"and against the majority class ({maj:.3f}) CGoT {'is above it' if vs_maj.get('verdict') == 'holds' else 'is below it' if vs_maj.get('verdict') == 'fails' else 'is not told apart from it'}. "
            f"N4 answers: CGoT {_answers(by['cgot'])}, direct {_answers(by['direct'])}"
        )
        const = _constant(by["cgot"])
        if const is not None:
            share = sum(int(r["truth"]["outcome"]) == const for r in by["cgot"].rows) / max(1, n)
            text += (
                f"; CGoT answered {const} on every case, so its accuracy is the share of cases whose outcome is "
                f"{const} ({share:.3f}), not a reading of the case"
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
        text += (
            f" Upstream (CGoT): grade accuracy {by['cgot'].metrics['task1']['accuracy']:.2f}, anatomy F1 "
            f"{by['cgot'].metrics['task2']['f1']:.2f}, score accuracy {by['cgot'].metrics['task3']['accuracy']:.2f}."
        )
        out.append(text)
        if "cgot-oracle-upstream" in by:
            o = by["cgot-oracle-upstream"].metrics["task4"]
            bayes = by["cgot-oracle-upstream"].baselines["bayes"]
            up = heads.get(f"With the true N1–N3 upstream, N4 beats the direct question ({short})", {})
            out.append(
                f"  With the true N1–N3 answers upstream, N4 reaches {o['accuracy']:.3f} (Bayes ceiling {bayes:.3f}; "
                f"answers {_answers(by['cgot-oracle-upstream'])}; against direct: {up.get('verdict', 'not computed')}): "
                + (
                    "it follows the true score on these cases."
                    if both_classes and o["balanced_accuracy"] > 0.6
                    else "too few cases or classes to tell whether it uses the parents' answers."
                    if not both_classes
                    else "even perfect upstream answers do not make this model map score → outcome."
                )
            )
    checks_hold = False
    if ceiling is not None:
        m = ceiling.metrics
        checks_hold = (
            m["task1"]["accuracy"] == 1.0
            and m["task2"]["f1"] == 1.0
            and m["task3"]["accuracy"] == 1.0
            and abs(m["task4"]["accuracy"] - ceiling.baselines["bayes"]) < 1e-12
        )
        out.append(
            f"- The all-oracle arm scores tasks 1–3 at {m['task1']['accuracy']:.2f} / {m['task2']['f1']:.2f} / "
            f"{m['task3']['accuracy']:.2f} and outcome {m['task4']['accuracy']:.3f} against the Bayes ceiling "
            f"{ceiling.baselines['bayes']:.3f} of the generator (outcomes are drawn, so even perfect reasoning "
            "misses some)."
        )
    out.append(
        "- What holds: the graph (node order, DAG, parents quoted verbatim), the knowledge texts, the answer formats, "
        "the parsing (unparsable = wrong) and every metric follow the reference"
        + (
            ", and the oracle arm reproduces the checks of spec §7 (tasks 1–3 perfect, outcome at the generator's "
            "Bayes ceiling)"
            if checks_hold
            else "; the oracle arm does NOT reproduce spec §7's checks on these cases (see its row)"
        )
        + ". What this run cannot show: the paper's +15 points is a real-data LVLM result; small text-only local "
        "models reading pixel counts on synthetic cases neither confirm nor refute it — the headline table gives "
        "each difference with its paired interval."
    )
    return "\n".join(out)
