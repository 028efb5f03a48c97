"""Results that decide: a results doc's headline claims, computed from its raw values and stored with them.

Every ``docs/results/<name>.md`` carries a summary table of its headline claims; its
``docs/results/<name>/results.json`` holds the raw per-seed or per-item values *and* the
specification of each headline, so the table can be recomputed from the data at any time
(``tests/test_results_docs.py`` does, for every doc)::

    ev = Evidence(raw={"coop": {"new_ece": [17.1, 18.0, ...]}, "coop_dor": {"new_ece": [11.0, ...]}})
    ev.headline(
        "DOR lowers new-class ECE (CoOp)", paper="17.56 → 11.20 (−6.36)",
        stat="paired_diff", a="coop_dor/new_ece", b="coop/new_ece", direction="less", unit="ECE points",
    )
    report.sections.insert(0, ev.section())   # the table, between markers
    report.add_json("results.json", ev.to_json(options=...))

A headline is one statistic of the raw values with an interval, read against a null by
:func:`core.stats.verdict`: **holds** (the interval excludes the null on the claimed side),
**fails** (it excludes it on the other side) or **not resolved** (it touches or straddles it). The
statistics:

============== ========================================================================================
``mean``        the mean of ``a`` against ``null`` (a number, or a path to a number in ``raw``)
``paired_diff`` the mean of ``a − b``, item by item (the same seeds or items in both arms)
``diff``        ``mean(a) − mean(b)`` for independent samples (bootstrap each on its own)
``proportion``  the share of true/1 values in ``a`` (Wilson interval) against ``null``
============== ========================================================================================

The interval is Student's t over seeds (``interval="t"``, the default for ``mean`` and
``paired_diff``: a percentile bootstrap over three seeds is far too narrow) or a percentile
bootstrap (``interval="bootstrap"``, for items: claims, questions, images), seeded, so the same
raw values always give the same numbers. One value (n = 1) has no interval: its headline is
*not resolved*, whatever the value.

``raw`` paths are ``/``-separated keys (list indices allowed: ``"runs/0/acc"``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from core.stats import Interval, bootstrap_ci, bootstrap_diff_ci, paired_bootstrap_ci, t_interval, verdict, wilson

Stat = Literal["mean", "paired_diff", "diff", "proportion"]
IntervalKind = Literal["t", "bootstrap", "wilson"]
BEGIN = "<!-- headlines: computed from results.json by core.evidence; do not edit by hand -->"
END = "<!-- /headlines -->"
VERSION = 1


class EvidenceError(ValueError):
    """A headline cannot be computed from the raw values (a missing path, mismatched arms)."""


def lookup(raw: Any, path: str) -> Any:
    """The value at ``path`` (``"a/b/0/c"``) in nested dicts and lists."""
    node = raw
    for part in path.split("/"):
        try:
            node = node[int(part)] if isinstance(node, list) else node[part]
        except (KeyError, IndexError, ValueError, TypeError):
            raise EvidenceError(f"no value at {path!r} (stopped at {part!r})") from None
    return node


def _values(raw: Any, path: str) -> np.ndarray:
    v = lookup(raw, path)
    arr = np.asarray(v if isinstance(v, (list, tuple)) else [v], dtype=float)
    if arr.ndim != 1:
        raise EvidenceError(f"{path!r} must hold a flat list of numbers, got shape {arr.shape}")
    return arr


@dataclass
class Headline:
    """One claim: what the paper says, how ours is computed from ``raw``, and the result."""

    claim: str
    stat: Stat
    a: str
    b: str | None = None
    null: float | str = 0.0
    direction: Literal["greater", "less"] = "greater"
    paper: str = ""
    context: str = ""
    unit: str = ""
    digits: int = 2
    scale: float = 1.0
    interval: IntervalKind | None = None
    n_boot: int = 2000
    seed: int = 0
    level: float = 0.95
    result: dict[str, Any] = field(default_factory=dict)

    def kind(self) -> IntervalKind:
        if self.stat == "proportion":
            return "wilson"
        if self.stat == "diff":
            return "bootstrap"
        return self.interval or "t"

    def null_value(self, raw: Any) -> float:
        return float(lookup(raw, self.null)) if isinstance(self.null, str) else float(self.null)

    def compute(self, raw: Any) -> dict[str, Any]:
        """Estimate, interval, n and verdict from ``raw`` (the stored ``result`` is not read)."""
        a = _values(raw, self.a)
        if self.stat in ("paired_diff", "diff"):
            if self.b is None:
                raise EvidenceError(f"{self.claim!r}: stat {self.stat!r} needs b")
            b = _values(raw, self.b)
        kind = self.kind()
        if self.stat == "mean":
            ci = _one_sample(a, kind, self)
        elif self.stat == "paired_diff":
            if a.shape != b.shape:
                raise EvidenceError(f"{self.claim!r}: paired arms differ in length ({a.size} vs {b.size})")
            ci = (
                _one_sample(a - b, kind, self)
                if kind == "t"
                else paired_bootstrap_ci(a, b, n_boot=self.n_boot, seed=self.seed, level=self.level)
            )
        elif self.stat == "diff":
            ci = bootstrap_diff_ci(a, b, n_boot=self.n_boot, seed=self.seed, level=self.level)
        elif self.stat == "proportion":
            if not np.all((a == 0) | (a == 1)):
                raise EvidenceError(f"{self.claim!r}: a proportion needs 0/1 values at {self.a!r}")
            lo, hi = wilson(float(a.sum()), int(a.size))
            ci = Interval(float(a.mean()) if a.size else math.nan, lo, hi, int(a.size), self.level)
        else:
            raise EvidenceError(f"unknown stat {self.stat!r}")
        null = self.null_value(raw)
        if ci.n < 2 and self.stat != "proportion":
            decided = "not resolved"  # one value has no interval
        else:
            decided = verdict(ci, null, self.direction)
        return {
            "estimate": _clean(ci.estimate),
            "low": _clean(ci.low),
            "high": _clean(ci.high),
            "n": ci.n,
            "null": null,
            "interval": kind,
            "verdict": decided,
        }

    def row(self) -> str:
        """The summary table's row for this headline (from ``result``)."""
        r = self.result
        sign = self.stat in ("paired_diff", "diff")

        def num(x: float | None) -> str:
            if x is None or (isinstance(x, float) and math.isnan(x)):
                return "n/a"
            return f"{x * self.scale:{'+' if sign else ''}.{self.digits}f}"

        ours = num(r.get("estimate"))
        if r.get("low") is not None and r.get("n", 0) >= 2:
            ours += f" [{num(r.get('low'))}, {num(r.get('high'))}]"
        if self.unit:
            ours += f" {self.unit}"
        label = {"mean": "mean", "paired_diff": "paired Δ", "diff": "Δ", "proportion": "share"}[self.stat]
        null = f"{r.get('null', 0.0) * self.scale:.{self.digits}f}"
        cells = [self.claim, self.paper or "—", f"{ours} ({label}, n = {r.get('n')})", null, self.context or "—"]
        cells.append(f"**{r.get('verdict')}**")
        return "| " + " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells) + " |"


def _clean(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def _one_sample(x: np.ndarray, kind: IntervalKind, h: Headline) -> Interval:
    if kind == "t":
        return t_interval(x, level=h.level)
    return bootstrap_ci(x, n_boot=h.n_boot, seed=h.seed, level=h.level)


HEADER = "| headline | paper | ours [95% CI] | null | baseline / context | verdict |\n|---|---|---|---|---|---|"


class Evidence:
    """The raw values of one results doc and its headline claims."""

    def __init__(self, raw: Mapping[str, Any] | None = None) -> None:
        self.raw: dict[str, Any] = dict(raw or {})
        self.headlines: list[Headline] = []

    def headline(self, claim: str, *, stat: Stat, a: str, **kw: Any) -> Headline:
        """Add a claim and compute it now (:class:`EvidenceError` if ``raw`` cannot carry it)."""
        h = Headline(claim=claim, stat=stat, a=a, **kw)
        h.result = h.compute(self.raw)
        self.headlines.append(h)
        return h

    def table(self) -> str:
        """The summary table, between the markers the recompute test looks for."""
        rows = "\n".join(h.row() for h in self.headlines)
        legend = (
            "_holds_: the 95 % interval excludes the null on the claimed side; _fails_: it excludes it on the "
            "other side; _not resolved_: it touches or straddles the null (or one run: no interval)."
        )
        return f"{BEGIN}\n{HEADER}\n{rows}\n\n{legend}\n{END}"

    def counts(self) -> dict[str, int]:
        out = {"holds": 0, "fails": 0, "not resolved": 0}
        for h in self.headlines:
            out[h.result["verdict"]] += 1
        return out

    def to_json(self, **extra: Any) -> dict[str, Any]:
        """``results.json``: the raw values, each headline's specification and result, and ``extra``."""
        return {
            "evidence_version": VERSION,
            **extra,
            "raw": self.raw,
            "headlines": [asdict(h) for h in self.headlines],
        }

    def section(self, title: str = "Summary: the headline claims") -> Any:
        """A :class:`core.jobs.report.Section` holding :meth:`table` (import kept lazy for core's layering)."""
        from core.jobs.report import Section

        return Section(title=title, markdown=self.table())

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Evidence:
        ev = cls(data.get("raw", {}))
        for spec in data.get("headlines", []):
            ev.headlines.append(Headline(**spec))
        return ev

    @classmethod
    def load(cls, path: Any) -> Evidence:
        with open(path, encoding="utf-8") as fh:
            return cls.from_json(json.load(fh))

    def recompute(self) -> list[str]:
        """Differences between each stored result and a fresh computation from ``raw`` (empty: none)."""
        problems = []
        for h in self.headlines:
            fresh = h.compute(self.raw)
            for key, value in fresh.items():
                stored = h.result.get(key)
                same = (
                    stored == value
                    if not isinstance(value, float) or not isinstance(stored, (int, float))
                    else math.isclose(stored, value, rel_tol=1e-9, abs_tol=1e-12)
                )
                if not same:
                    problems.append(f"{h.claim!r}: {key} stored {stored!r}, recomputed {value!r}")
        return problems


def table_in(markdown: str) -> str | None:
    """The headline table of a results doc (between the markers), or ``None`` when it has none."""
    start, end = markdown.find(BEGIN), markdown.find(END)
    if start < 0 or end < start:
        return None
    return markdown[start : end + len(END)]


def replace_table(markdown: str, table: str) -> str:
    """``markdown`` with its headline table replaced by ``table`` (inserted after the title when absent)."""
    current = table_in(markdown)
    if current is not None:
        return markdown.replace(current, table)
    lines = markdown.split("\n")
    at = 1 if lines and lines[0].startswith("# ") else 0
    return "\n".join([*lines[:at], "", table, "", *lines[at:]])


__all__ = ["BEGIN", "END", "Evidence", "EvidenceError", "Headline", "lookup", "replace_table", "table_in"]
