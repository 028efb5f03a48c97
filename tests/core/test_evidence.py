"""core.evidence: headline claims computed from raw values, rendered, stored and recomputed."""

from __future__ import annotations

import json

import pytest

from core.evidence import BEGIN, END, Evidence, EvidenceError, replace_table, table_in

RAW = {
    "coop": {"ece": [17.0, 18.0, 17.5, 18.2, 17.9]},
    "dor": {"ece": [11.0, 12.5, 11.8, 10.9, 11.4]},
    "noisy": {"ece": [16.0, 19.5, 17.0, 18.9, 18.0]},
    "answers": [1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1],
    "majority": 0.5,
    "one": [3.2],
}


def test_verdicts_follow_the_interval_and_the_claimed_direction():
    ev = Evidence(RAW)
    lower = ev.headline("DOR lowers ECE", stat="paired_diff", a="dor/ece", b="coop/ece", direction="less")
    higher = ev.headline("DOR raises ECE", stat="paired_diff", a="dor/ece", b="coop/ece", direction="greater")
    unclear = ev.headline("noisy arm differs", stat="paired_diff", a="noisy/ece", b="coop/ece", direction="less")
    assert lower.result["verdict"] == "holds" and lower.result["estimate"] == pytest.approx(-6.2)
    assert higher.result["verdict"] == "fails"
    assert unclear.result["verdict"] == "not resolved"
    assert lower.result["low"] < lower.result["estimate"] < lower.result["high"] < 0
    assert ev.counts() == {"holds": 1, "fails": 1, "not resolved": 1}


def test_a_proportion_against_a_baseline_in_raw_and_a_single_run():
    ev = Evidence(RAW)
    p = ev.headline("accuracy above the majority class", stat="proportion", a="answers", null="majority")
    assert p.result["estimate"] == pytest.approx(0.85) and p.result["null"] == 0.5
    assert p.result["verdict"] == "holds" and p.result["interval"] == "wilson"
    one = ev.headline("one run clears 3 dB", stat="mean", a="one", null=3.0)
    assert one.result["n"] == 1 and one.result["verdict"] == "not resolved"


def test_bootstrap_intervals_are_seeded_and_t_is_wider_than_bootstrap_on_few_seeds():
    t = Evidence(RAW).headline("x", stat="mean", a="coop/ece", null=17.0)
    b1 = Evidence(RAW).headline("x", stat="mean", a="coop/ece", null=17.0, interval="bootstrap")
    b2 = Evidence(RAW).headline("x", stat="mean", a="coop/ece", null=17.0, interval="bootstrap")
    assert b1.result == b2.result
    assert (t.result["high"] - t.result["low"]) > (b1.result["high"] - b1.result["low"])


def test_errors_name_the_missing_path_and_mismatched_arms():
    with pytest.raises(EvidenceError, match="no value at 'coop/acc'"):
        Evidence(RAW).headline("x", stat="mean", a="coop/acc")
    with pytest.raises(EvidenceError, match="differ in length"):
        Evidence(RAW).headline("x", stat="paired_diff", a="coop/ece", b="one")
    with pytest.raises(EvidenceError, match="0/1"):
        Evidence(RAW).headline("x", stat="proportion", a="coop/ece")


def test_json_round_trip_recomputes_and_catches_a_drifted_number(tmp_path):
    ev = Evidence(RAW)
    ev.headline("DOR lowers ECE", stat="paired_diff", a="dor/ece", b="coop/ece", direction="less", paper="-6.36")
    path = tmp_path / "results.json"
    path.write_text(json.dumps(ev.to_json(options={"seeds": 5})))
    back = Evidence.load(path)
    assert back.recompute() == [] and back.table() == ev.table()
    data = json.loads(path.read_text())
    data["raw"]["dor"]["ece"][0] = 14.0  # the data changed, the stored headline did not
    assert any("estimate" in p for p in Evidence.from_json(data).recompute())


def test_the_table_sits_between_markers_and_replaces_in_place():
    ev = Evidence(RAW)
    ev.headline("DOR lowers ECE", stat="paired_diff", a="dor/ece", b="coop/ece", direction="less", unit="pts")
    table = ev.table()
    assert table.startswith(BEGIN) and table.endswith(END) and "**holds**" in table and "pts" in table
    doc = "# DOR\n\nSome text.\n"
    once = replace_table(doc, table)
    assert table_in(once) == table and once.startswith("# DOR\n")
    ev.headlines[0].claim = "DOR lowers new-class ECE"
    twice = replace_table(once, ev.table())
    assert twice.count(BEGIN) == 1 and "new-class" in table_in(twice)


def test_section_is_a_report_section_holding_the_table():
    from core.jobs.report import Report

    ev = Evidence(RAW)
    ev.headline("DOR lowers ECE", stat="paired_diff", a="dor/ece", b="coop/ece", direction="less")
    report = Report(title="DOR")
    report.sections.insert(0, ev.section())
    assert report.sections[0].markdown == ev.table() and table_in(report.to_markdown()) == ev.table()
