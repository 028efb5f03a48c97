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


def experiment_report(exp: ExperimentResult, *, title: str | None = None) -> Report:
    """The report of a ``continual.run`` job: one experiment, every head."""
    agg = exp.aggregate()
    best = max(exp.heads, key=lambda h: agg[h]["A_f"][0])
    title = title or f"{exp.method} on {exp.dataset}"
    summary = (
        f"{len(exp.runs)} seed(s), {len(exp.runs[0].sizes)} tasks: "
        + "; ".join(f"{h} A_f {pm(*agg[h]['A_f'])}" for h in exp.heads)
        + f". Best A_f: {best}."
    )
    report = Report(title=title, summary=summary)
    report.metrics["A_f"] = round(agg[best]["A_f"][0], 6)
    report.metrics["A_bar"] = round(agg[best]["A_bar"][0], 6)
    report.metrics["best_head"] = best
    add_experiment(report, exp, key="run", title=title)
    report.data = {"experiment": exp.to_dict()}
    return report
