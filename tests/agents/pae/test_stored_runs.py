"""docs/results/pae.md from the stored 1.5B runs: per-task pairs rebuilt exactly from the stored counts."""

import re
from pathlib import Path

import pytest

from agents.pae.experiment import RESULTS, compare_counts, pairs, report_counts, stored_runs
from agents.pae.report import stored_evidence, stored_runs_report
from core.evidence import Evidence, table_in

# the run report behind each compare row (their per-site counts must add up to the row)
REPORTS = {
    "s1-greedy-llm": "issue-1.5b-sft10-s1-llm-c.md",
    "s1-greedy-oracle": "issue-1.5b-sft10-s1-oracle-c.md",
    "s1-t1-llm": "issue-1.5b-sft10-s1-llm-t1.md",
    "s1-t1-oracle": "issue-1.5b-sft10-s1-oracle-t1.md",
    "s1-t1-lr1e-4-llm": "issue-1.5b-sft10-s1-llm-t1-alr.md",
    "s1-t1-lr1e-4-oracle": "issue-1.5b-sft10-s1-oracle-t1-alr.md",
    "s0-t1-lr1e-4-llm": "issue-1.5b-sft10-s0-llm-t1-alr.md",
    "s0-greedy-oracle-irreproducible": "issue-1.5b-sft10-s0-oracle.md",
    "s0-greedy-random-irreproducible": "issue-1.5b-sft10-s0-random.md",
    "s1b-greedy-llm-irreproducible": "issue-1.5b-sft10-s1-llm-b.md",
    "s1b-greedy-oracle-irreproducible": "issue-1.5b-sft10-s1-oracle.md",
}
SITE = re.compile(r"^\| (\d+) \| (\w+)/\w+ \| [\d.]+ \| (\d+) \| (\d+) \|$")


def _site_sums(text: str) -> dict[str, tuple[int, int, int]]:
    rows = [m.groups() for m in (SITE.match(x.strip()) for x in text.splitlines()) if m]
    its = sorted({int(r[0]) for r in rows})
    out = {}
    for split in {r[1] for r in rows} | {"all"}:
        sel = [r for r in rows if split in ("all", r[1])]
        n = sum(int(r[3]) for r in sel if int(r[0]) == its[0])
        before = sum(int(r[2]) for r in sel if int(r[0]) == its[0])
        after = sum(int(r[2]) for r in sel if int(r[0]) == its[-1])
        out[split] = (n, before, after)
    return out


def test_pairs_are_the_counts_in_canonical_order():
    before, after = pairs({"n": 10, "before": 3, "after": 4, "gained": 2, "lost": 1})
    assert before == [1, 1, 0, 0, 1, 0, 0, 0, 0, 0] and after == [1, 1, 1, 1, 0, 0, 0, 0, 0, 0]
    with pytest.raises(ValueError, match="inconsistent"):
        pairs({"n": 10, "before": 3, "after": 5, "gained": 2, "lost": 1})


def test_compare_rows_agree_with_each_runs_own_report():
    runs = {r["key"]: r for r in stored_runs()}
    for key, report in REPORTS.items():
        sums = _site_sums((RESULTS / report).read_text(encoding="utf-8"))
        for split, c in runs[key]["counts"].items():
            assert (c["n"], c["before"], c["after"]) == sums[split], (key, split)


def test_a_report_without_before_successes_gives_exact_pairs_and_others_are_refused():
    c = report_counts((RESULTS / "issue-1.5b-sft10-s1-random.md").read_text(encoding="utf-8"))
    assert c["all"] == {"n": 47, "before": 0, "after": 4, "gained": 4, "lost": 0}
    with pytest.raises(ValueError, match="cannot pair"):
        report_counts((RESULTS / "issue-1.5b-sft10-s1-llm-t1.md").read_text(encoding="utf-8"))
    with pytest.raises(ValueError, match="no rows"):
        compare_counts("| arm | split |\n", "llm")


def test_the_summary_document_is_what_the_stored_runs_give():
    ev = stored_evidence(stored_runs())
    assert ev.recompute() == []
    pooled = ev.headlines[0]
    assert pooled.claim.startswith("The method") and pooled.result["n"] == 95
    assert pooled.result["verdict"] == "not resolved"  # 11 of 95 → 10 of 95
    doc = (Path(RESULTS).parent / "pae.md").read_text(encoding="utf-8")
    assert table_in(doc) == ev.table() == Evidence.load(RESULTS / "results.json").table()
    report = stored_runs_report(stored_runs(), command="paperworks reproduce pae -o preset=summary")
    assert "**superseded**" in report.sections[1].markdown and report.sections[0].title.startswith("Summary")
