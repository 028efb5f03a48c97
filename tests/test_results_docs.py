"""Every results doc's summary is its data: the headline table is recomputed from results.json.

For each ``docs/results/<name>.md``: ``docs/results/<name>/results.json`` holds the raw per-seed /
per-item values and each headline's specification (``core.evidence``); recomputing every headline
from the raw values gives the stored result, and the doc's table (between the markers) is exactly
the table those results render. A doc whose data changed, or whose table was edited by hand,
fails here. Each doc states at least one headline, each with holds / fails / not resolved.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.evidence import Evidence, table_in

RESULTS = Path(__file__).resolve().parents[1] / "docs" / "results"
DOCS = sorted(p.stem for p in RESULTS.glob("*.md"))


def test_there_are_results_docs():
    assert len(DOCS) >= 19


@pytest.mark.parametrize("name", DOCS)
def test_summary_table_is_recomputed_from_results_json(name):
    data = RESULTS / name / "results.json"
    assert data.is_file(), f"docs/results/{name}/results.json is missing"
    ev = Evidence.load(data)
    assert ev.headlines, f"{name}: results.json states no headline"
    assert ev.recompute() == [], f"{name}: stored headline results differ from the raw values"
    table = table_in((RESULTS / f"{name}.md").read_text(encoding="utf-8"))
    assert table is not None, f"docs/results/{name}.md has no headline table"
    assert table == ev.table(), f"docs/results/{name}.md: the table differs from what results.json renders"
    for h in ev.headlines:
        assert h.result["verdict"] in ("holds", "fails", "not resolved")
