"""Turn harness results into a platform :class:`~core.jobs.Report` (tables, heat maps, raw JSON)."""

from __future__ import annotations

import math

from core.jobs import Report, Table
from methods.continual.harness import ExperimentResult
from methods.continual.plots import accuracy_matrix_figure, curves_figure

METRIC_COLUMNS = [
    ("A_f", "A_f (%)"),
    ("A_bar", "Ā (%)"),
    ("forgetting", "forgetting (%)"),
    ("old_acc", "old acc (%)"),
    ("new_acc", "new acc (%)"),
    ("gap", "new−old gap (%)"),
]


def pm(mean: float, std: float, scale: float = 100.0, digits: int = 1) -> str:
    """``"91.2 ± 1.3"`` (percent by default); ``"n/a"`` for NaN."""
    if math.isnan(mean):
        return "n/a"
    return f"{mean * scale:.{digits}f} ± {std * scale:.{digits}f}"


def metrics_table_rows(
    exp: ExperimentResult, labels: dict[str, str] | None = None, heads: list[str] | None = None
) -> list[list[str]]:
    agg = exp.aggregate()
    labels = labels or {}
    return [[labels.get(h, h)] + [pm(*agg[h][key]) for key, _ in METRIC_COLUMNS] for h in heads or exp.heads]


def add_experiment(
    report: Report,
    exp: ExperimentResult,
    *,
    key: str,
    title: str,
    labels: dict[str, str] | None = None,
    figure_heads: list[str] | None = None,
    table_heads: list[str] | None = None,
    metrics: bool = True,
    intro: str = "",
) -> Table:
    """Add ``exp`` to ``report`` as one section: a mean ± std table over seeds, heat maps of the
    seed-mean accuracy matrices and accuracy-per-task curves; the raw runs go in ``<key>.json``.
    With ``metrics``, per-head scalars ``<key>.<head>.<metric>`` are added to ``report.metrics``."""
    agg = exp.aggregate()
    n = len(exp.runs)
    table = Table(
        title=f"{title} — {n} seed{'s' if n != 1 else ''}, mean ± std",
        columns=["arm"] + [c for _, c in METRIC_COLUMNS],
        rows=metrics_table_rows(exp, labels, table_heads),
        note=f"seeds {[r.seed for r in exp.runs]}; {len(exp.runs[0].sizes)} tasks × "
        f"{exp.classes_per_task} classes; training samples/class: {exp.samples_per_class or 'all'}",
    )
    if metrics:
        for h in exp.heads:
            for m in ("A_f", "A_bar", "forgetting", "gap"):
                v = agg[h][m][0]
                report.metrics[f"{key}.{h}.{m}"] = None if math.isnan(v) else round(v, 6)
    heads = figure_heads or exp.heads
    lab = labels or {}
    heat = accuracy_matrix_figure(
        {lab.get(h, h): exp.mean_matrix(h) for h in heads}, title=f"{title}: accuracy matrix (mean of {n} seeds)"
    )
    report.add_figure(f"{key}_matrix.png", heat, caption=f"{title}: accuracy matrices")
    curves = curves_figure(
        {lab.get(h, h): exp.mean_curves(h) for h in heads}, title=f"{title}: accuracy per task (mean of {n} seeds)"
    )
    report.add_figure(f"{key}_curves.png", curves, caption=f"{title}: seen / old / new accuracy per task")
    report.add_json(f"{key}.json", exp.to_dict(), caption=f"{title}: every run's accuracy matrices")
    body = [
        intro,
        table.to_markdown(),
        "",
        f"![{title}: accuracy matrices](artifact:{key}_matrix.png)",
        "",
        f"![{title}: accuracy per task](artifact:{key}_curves.png)",
        "",
        f"Raw runs: [{key}.json](artifact:{key}.json)",
    ]
    report.add_section(title, "\n".join(x for x in body if x is not None).strip())
    return table


def primary_head(exp: ExperimentResult) -> str:
    """The arm that is the method itself (the head named like it, else its first head): the one a report is
    headed by. Other heads are baselines or bounds (``oracle``) evaluated beside it."""
    return exp.method if exp.method in exp.heads else exp.heads[0]


def _num(v: float) -> float | None:
    return None if math.isnan(v) else round(v, 6)


def experiment_report(exp: ExperimentResult, *, title: str | None = None) -> Report:
    """The report of a ``continual.run`` job: headed by the method's own arm (its A_f, Ā, forgetting and
    old/new gap are the report's metrics), every arm in the table beside it."""
    agg = exp.aggregate()
    main = primary_head(exp)
    scored = [h for h in exp.heads if not math.isnan(agg[h]["A_f"][0])] or exp.heads
    best = max(scored, key=lambda h: agg[h]["A_f"][0])
    title = title or f"{exp.method} on {exp.dataset}"
    m = agg[main]
    others = [h for h in exp.heads if h != main]
    summary = (
        f"**{main}**: A_f {pm(*m['A_f'])} %, Ā {pm(*m['A_bar'])} %, forgetting {pm(*m['forgetting'])} % "
        f"({len(exp.runs)} seed(s), {len(exp.runs[0].sizes)} tasks)."
        + (" Beside it (A_f): " + "; ".join(f"{h} {pm(*agg[h]['A_f'])} %" for h in others) + "." if others else "")
        + (
            f" Best A_f: {best}"
            + (" (an upper bound: it is trained on all data, not a method)." if best == "oracle" else ".")
            if best != main
            else ""
        )
    )
    report = Report(title=title, summary=summary)
    report.metrics["method"] = main
    report.metrics["A_f"] = _num(m["A_f"][0])
    report.metrics["A_bar"] = _num(m["A_bar"][0])
    report.metrics["forgetting"] = _num(m["forgetting"][0])
    report.metrics["new_old_gap"] = _num(m["gap"][0])
    report.metrics["best_head"] = best
    # every arm's numbers are in the section's table and run.json, not ~30 metric tiles
    add_experiment(report, exp, key="run", title=title, metrics=False)
    report.data = {"experiment": exp.to_dict()}
    return report
