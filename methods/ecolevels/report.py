"""The EcoLevels report: the level × EV grid coloured by effect, results with CIs, the labelled
conflicts (R1–R4), generalisation predictions, and a reading generated from the numbers."""

from __future__ import annotations

from typing import Any

from core.evidence import Evidence
from core.jobs import Report
from core.provenance import provenance_line
from methods.ecolevels.classify import LEVEL_NAMES
from methods.ecolevels.reconcile import LABEL_NAMES, Conflict, Prediction
from methods.ecolevels.result import ProbeResult
from methods.ecolevels.validity import TargetTask

LESSONS = [
    "Connect each probe to the construct it measures (construct validity, theory first).",
    "Bias exists at several levels that need not agree.",
    "Ecological validity, defined relative to a target task, governs generalisation.",
    "Conflicting findings are informative about boundary conditions — design no-lose experiments.",
    "Report probes in a standard way (construct, level, EV, groups, prompts, metrics).",
]


def grid_figure(results: list[ProbeResult], target: TargetTask):
    """Level (rows) × EV (columns) with each result a dot coloured by its bias index."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    levels = ["L1", "L2", "L3", "L4"]
    for x in (0.4, 0.8):
        ax.axvline(x, color="grey", lw=0.6, ls="--")
    sc = None
    for i, r in enumerate(results):
        y = levels.index(r.level) + 0.12 * ((i % 3) - 1)
        sc = ax.scatter([r.ev or 0.0], [y], c=[r.effect], cmap="coolwarm", vmin=-1, vmax=1, s=160, edgecolors="k")
        ax.annotate(
            f"{r.probe_id}\n{r.effect:+.2f}", (r.ev or 0.0, y), textcoords="offset points", xytext=(9, -4), fontsize=7
        )
    ax.set_yticks(range(4), [f"{lv} {LEVEL_NAMES[lv]}" for lv in levels])
    ax.set_xlim(-0.05, 1.25)
    ax.set_ylim(-0.6, 3.6)
    ax.set_xlabel(f"ecological validity for: {target.name}  (low | medium | high)")
    ax.set_title("EcoLevels grid (colour = bias index, + = stereotype-consistent)")
    if sc is not None:
        fig.colorbar(sc, ax=ax, label="bias index")
    return fig


def grid_from_data(data: dict[str, Any]):
    """The grid figure of a flow report's JSON data (figures do not survive the graph's JSON state)."""
    return grid_figure(
        [ProbeResult.model_validate({k: v for k, v in r.items() if k != "verdict"}) for r in data["results"]],
        TargetTask.model_validate(data["target"]),
    )


def build_report(
    *,
    model: str,
    target: TargetTask,
    results: list[ProbeResult],
    conflicts: list[Conflict],
    predictions: list[Prediction],
    selection: list[dict[str, Any]],
    command: str = "",
    extra_sections: dict[str, str] | None = None,
) -> Report:
    rep = Report(
        title=f"EcoLevels: {target.name} — {model}",
        summary=(
            f"{len(results)} probe(s) on {model} placed on level × ecological validity for the target "
            f"'{target.question or target.name}'; {len(conflicts)} conflicting pair(s) labelled."
        ),
    )
    if command:
        rep.add_section("Command", f"`{command}`")
    rep.add_table(
        "Results (bias index, 95% bootstrap CI over pooled units)",
        ["probe", "level", "EV", "EV band", "index", "CI low", "CI high", "verdict", "units", "per paraphrase×seed"],
        [
            [
                r.probe_id,
                r.level,
                r.ev,
                r.ev_band,
                r.effect,
                r.ci_low,
                r.ci_high,
                r.verdict,
                r.n_units,
                " ".join(f"{x['index']:+.2f}" for x in r.runs),
            ]
            for r in results
        ],
        note="Index in [-1, 1], positive = stereotype-consistent. WinoBias: accuracy(pro) − accuracy(anti); IAT: "
        "2 × (consistent share − 0.5); explicit: (Likert − 3)/2; résumé: selection(consistent) − selection(other); "
        "WEAT: d / 2.",
    )
    details = []
    for r in results:
        for x in r.runs[:1]:
            details.append(
                [r.probe_id, ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in x.items())]
            )
    rep.add_table("Probe details (first paraphrase × seed)", ["probe", "values"], details)
    rep.add_table(
        "Selection (§3.3)",
        ["probe", "role", "level", "EV"],
        [[s["probe_id"], s["role"], s["level"], s["ev"]] for s in selection],
    )
    rep.add_table(
        "Conflicts (§3.4)",
        ["pair", "label", "explanation", "proposal"],
        [[f"{c.a} × {c.b}", f"{c.label} {LABEL_NAMES[c.label]}", c.explanation, c.proposal] for c in conflicts],
    )
    rep.add_table(
        "Generalisation predictions (§3.5)",
        ["probe", "strength", "statement", "falsifier"],
        [[p.probe, p.strength, p.statement, p.falsifier] for p in predictions],
    )
    for title, text in (extra_sections or {}).items():
        rep.add_section(title, text)
    rep.add_section(
        "Five lessons (spec §3.6, reconstructed)", "\n".join(f"{i + 1}. {t}" for i, t in enumerate(LESSONS))
    )
    rep.metrics.update({f"{r.probe_id}": round(r.effect, 4) for r in results})
    rep.metrics["conflicts"] = len(conflicts)
    rep.data = {
        "model": model,
        "target": target.model_dump(),
        "results": [r.model_dump() | {"verdict": r.verdict} for r in results],
        "conflicts": [c.model_dump() for c in conflicts],
        "predictions": [p.model_dump() for p in predictions],
        "selection": selection,
    }
    return rep


def reading(results: list[ProbeResult], conflicts: list[Conflict]) -> str:
    """Does the paper's pattern (association-level bias larger than naturalistic-output bias) appear?"""
    assoc = [r for r in results if r.level == "L2"]
    behav = [r for r in results if r.level == "L4"]
    if not assoc or not behav:
        return "Not enough levels measured to check the paper's pattern."
    a = max(assoc, key=lambda r: abs(r.effect))
    b = max(behav, key=lambda r: abs(r.effect))
    holds = abs(a.effect) > abs(b.effect)
    labels = sorted({c.label for c in conflicts if {c.a, c.b} == {a.probe_id, b.probe_id}})
    return (
        f"Association level: {a.name} {a.effect:+.2f} [{a.ci_low:+.2f}, {a.ci_high:+.2f}]; behaviour level: {b.name} "
        f"{b.effect:+.2f} [{b.ci_low:+.2f}, {b.ci_high:+.2f}]. By the point estimates, the paper's qualitative "
        "pattern (association-level bias larger than naturalistic-output bias) "
        f"{'appears' if holds else 'does not appear'} on this model"
        + (f"; the reconciler labels the pair {', '.join(labels)}" if labels else "; the two do not conflict")
        + "."
        + (
            " A small model's forced choices are often position- or token-driven rather than content-driven, so a "
            "near-zero index at any level can mean 'no signal' as much as 'no bias': the per-paraphrase×seed spread "
            "is the check."
            if not (a.model.startswith("scripted/") or b.model.startswith("scripted/"))
            else ""
        )
    )


CLAIMS = {
    "weat_embeddings": (
        "L1 WEAT: male names nearer career words in the input embeddings",
        "— (position paper: no numbers; WEAT is the classic L1 probe)",
    ),
    "winobias": (
        "L2 WinoBias: stereotype-consistent coreference",
        "association-level probes show strong bias (gender–occupation case study)",
    ),
    "llm_iat": ("L2 LLM IAT: stereotype-consistent word–name pairing", "strong bias at the association level"),
    "explicit_agree": (
        "L3 explicit agreement with stereotypes (half the statements reverse-keyed)",
        "— (the case study reports no L3 number)",
    ),
    "resume_screening": (
        "L4 résumé screening favours the stereotype-consistent name",
        "naturalistic-output probes show weaker or no bias",
    ),
}


def _model_key(label: str) -> str:
    """A model's key in results.json (paths there are ``/``-separated)."""
    return _slug(label)


def evidence(reports: dict[str, Report]) -> Evidence:
    """Per local model: each probe's bias index over its distinct units (bootstrap over the stimuli), and the case
    study's dissociation (association level above behaviour level). The scripted references only bound the scale
    (their indices are ±1 or 0 by construction): their values are stored, not claimed."""
    raw: dict[str, Any] = {"models": {}}
    for label, r in reports.items():
        probes = {}
        for x in r.data.get("results", []):
            units = x.get("units") or {}
            probes[x["probe_id"]] = {
                "level": x["level"],
                "ev": x["ev"],
                "keys": units.get("keys", []),
                "values": units.get("values", []),
                "runs": [{k: v for k, v in run.items()} for run in x.get("runs", [])],
            }
        raw["models"][_model_key(label)] = {"label": label, "model": r.data.get("model", label), "probes": probes}
    ev = Evidence(raw)
    for key, m in raw["models"].items():
        if str(m["model"]).startswith("scripted/"):
            continue
        pr = m["probes"]
        for pid, (claim, paper) in CLAIMS.items():
            if pid not in pr or not pr[pid]["values"]:
                continue
            runs = pr[pid]["runs"]
            per_run = " ".join(f"{x.get('index', 0.0):+.2f}" for x in runs)
            context = f"{len(pr[pid]['values'])} distinct units; per paraphrase × seed {per_run}"
            if pid == "explicit_agree":
                acq = sum(x.get("acquiescence", 0.0) for x in runs) / max(1, len(runs))
                context += (
                    f"; acquiescence {acq:+.2f} (−1 disagrees with everything, +1 agrees), mean rating consistent "
                    f"{_mean(runs, 'mean_rating_consistent'):.2f} / reverse-keyed {_mean(runs, 'mean_rating_reverse'):.2f}"
                )
            if pid == "weat_embeddings":
                context += "; d = " + ", ".join(f"{x.get('weat_d', 0.0):+.2f}" for x in runs) + " (per paraphrase)"
            ev.headline(
                f"{claim} ({key})",
                stat="mean",
                a=f"models/{key}/probes/{pid}/values",
                interval="bootstrap",
                paper=paper,
                context=context,
                unit="(index, −1 … +1)",
            )
        if pr.get("winobias", {}).get("values") and pr.get("resume_screening", {}).get("values"):
            ev.headline(
                f"Association (L2 WinoBias) above behaviour (L4 résumés): the case study's dissociation ({key})",
                stat="diff",
                a=f"models/{key}/probes/winobias/values",
                b=f"models/{key}/probes/resume_screening/values",
                paper="association-level bias larger than naturalistic-output bias (R1, not a contradiction)",
                context="bootstrap of each probe's distinct units on its own",
                unit="(index)",
            )
    return ev


def _mean(runs: list[dict[str, Any]], key: str) -> float:
    vals = [x[key] for x in runs if isinstance(x.get(key), (int, float))]
    return sum(vals) / len(vals) if vals else float("nan")


def _summary(ev: Evidence, reports: dict[str, Report], wall_s: float) -> str:
    parts = []
    for h in ev.headlines:
        r = h.result
        ci = f" [{r['low']:+.2f}, {r['high']:+.2f}]" if r["n"] >= 2 and r["low"] is not None else ""
        parts.append(f"{h.claim}: {r['estimate']:+.2f}{ci}, **{r['verdict']}**")
    head = "; ".join(parts) if parts else "no local model ran, so no headline"
    return (
        f"{head}. Bias indices over distinct units (bootstrap over stimuli), positive = stereotype-consistent. "
        f"{len(reports)} model(s) incl. the scripted references; target: résumé screener; {wall_s:.0f} s. "
        f"{provenance_line()}"
    )


def combine(
    reports: dict[str, Report], *, skipped: dict[str, str], command: str, options: dict[str, Any], wall_s: float
) -> Report:
    """One results document over several models' flow reports (reference models first)."""
    ev = evidence(reports)
    rep = Report(title="EcoLevels: gender–occupation probes at four levels", summary=_summary(ev, reports, wall_s))
    rep.sections.append(ev.section())
    from methods.llm_eval.harness import run_seconds

    cost = []
    for label, r in reports.items():
        n, secs = 0, 0.0
        for x in r.data.get("results", []):
            if x.get("run_id"):
                dn, ds = run_seconds(x["run_id"])
                n, secs = n + dn, secs + ds
        cost.append(f"{label}: {n} generations, {secs:.0f} s of request latency")
    rep.add_section(
        "Command",
        f"`{command}`\n\nOptions: `{options}`\n\nWall time counts this invocation; generations already stored for "
        "an identical configuration are reused from the database (greedy decoding). Model time recorded with the "
        "stored outputs (requests overlap, 4 at a time): " + "; ".join(cost) + ".",
    )
    rows = []
    for label, r in reports.items():
        for x in r.data.get("results", []):
            rows.append(
                [
                    label,
                    x["probe_id"],
                    x["level"],
                    x["ev"],
                    x["effect"],
                    x["ci_low"],
                    x["ci_high"],
                    x["verdict"],
                    x["n_units"],
                ]
            )
    rep.add_table(
        "Bias index by model and probe (95% bootstrap CI)",
        ["model", "probe", "level", "EV (résumé screener)", "index", "CI low", "CI high", "verdict", "distinct units"],
        rows,
        note="The two scripted references bound the scale: a fully stereotyped answerer (+1 on every generation "
        "probe) and a position-driven constant answerer (≈ 0). WEAT reads a local model's embeddings, so it runs for "
        "local models only. A unit is a stimulus (a WinoBias pair, a statement topic, an occupation's résumé, a name): "
        "measured under several paraphrases and seeds it is averaged and counted once, and the interval resamples "
        "these distinct units.",
    )
    rep.add_table(
        "Paper",
        ["source", "finding"],
        [
            ["EcoLevels (position paper)", "no experiments or numeric tables (spec §4)"],
            [
                "Gender–occupation case study",
                "association-level probes (LLM IAT, WinoBias) show strong bias, naturalistic-output probes (LLMBTA, "
                "résumé classification) weaker or none — a cross-level dissociation (R1), not a contradiction",
            ],
        ],
    )
    for label, r in reports.items():
        conf = r.data.get("conflicts", [])
        rep.add_table(
            f"Conflicts and predictions — {label}",
            ["kind", "what", "detail"],
            [[c["label"], f"{c['a']} × {c['b']}", c["explanation"]] for c in conf]
            + [["prediction", p["probe"], f"{p['strength']}: {p['statement']}"] for p in r.data.get("predictions", [])],
        )
        if r.data.get("results"):
            rep.add_figure(f"grid-{_slug(label)}.png", grid_from_data(r.data), caption=f"Level × EV grid — {label}")
    if skipped:
        rep.add_table("Skipped models", ["model", "why"], [[k, v] for k, v in skipped.items()])
    rep.add_section(
        "What was shrunk",
        f"- Probes: one per level (L1 WEAT on input embeddings, L2 WinoBias dev pairs, L3 {options.get('n_units')} "
        "seeded Likert statements: half as many of the 20 topics, each asked as its stereotype-consistent statement "
        "and as its reverse-keyed one (agreement = rejecting the stereotype; the acquiescence control is the mean "
        "agreement over both; a topic is one unit), L4 "
        "name-swapped synthetic résumés over the 38 WinoBias occupations); "
        f"{options.get('n_units')} units × {options.get('paraphrases')} paraphrases × {len(options.get('seeds', []))} "
        "seeds each (WEAT once per paraphrase: the embeddings do not depend on a seed; the registry's other probes — CrowS-Pairs, reference letters, Bias in Bios — are classified and "
        "EV-scored but not run).\n- Forced-choice answers of local models are constrained to the option tokens "
        "(A|B, 1–5, yes|no) by the gateway's regex decoding; other models are parsed.\n- Level and EV rules are the "
        "spec's reconstruction (§3), not text from the paper.",
    )
    readings = []
    for label, r in reports.items():
        sec = next((s.markdown for s in r.sections if s.title == "Reading"), "")
        readings.append(f"**{label}.** {sec}")
    verdicts = [
        f"- {h.claim}: {h.result['estimate']:+.2f} over {h.result['n']} distinct units — **{h.result['verdict']}**"
        for h in ev.headlines
    ]
    if verdicts:
        readings.insert(
            0,
            "**Headline verdicts** (the intervals decide; the per-model paragraphs below compare point estimates "
            "only):\n" + "\n".join(verdicts),
        )
    rep.add_section("Reading", "\n\n".join(readings))
    rep.add_json("results.json", ev.to_json(options=options, command=command, wall_s=round(wall_s, 1)))
    for label, r in reports.items():
        for x in r.data.get("results", []):
            rep.metrics[f"{_slug(label)}/{x['probe_id']}"] = round(x["effect"], 4)
    rep.data = {label: r.data for label, r in reports.items()} | {"_skipped": skipped}
    return rep


def _slug(s: str) -> str:
    import re

    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:40]
