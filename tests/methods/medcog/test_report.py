"""The headlines judge levels on the outputs the rules read (issue #49): a padded random guess decides nothing."""

from core.evidence import Evidence
from methods.medcog.lowmid import LowMidResult
from methods.medcog.report import ModelResult, evidence, reading
from methods.medcog.scoring import TaskScore


def _task(task: str, norm_read: list[float | None], padded: float, read_share: float) -> TaskScore:
    items = [
        {"idx": i, "norm": padded, "norm_parsed": v, "parsed": 0.0 if v is None else 1.0}
        for i, v in enumerate(norm_read)
    ]
    r = 0.2 if task in ("MCQ", "MR") else 0.5
    return TaskScore("medqa", task, r, [0.0], 0.0, 0.0, padded, 0.0, len(items), 1 - read_share, items)


def _model(label: str, mcq: list[float | None], mid: list[float | None], mcq_padded: float) -> ModelResult:
    share = sum(v is not None for v in mcq) / len(mcq)
    scores = [_task("MCQ", mcq, mcq_padded, share)] + [_task(t, mid, 0.0, 1.0) for t in ("SV", "AE", "MR")]
    levels = {"medqa/low": {"norm": mcq_padded, "se": 0.1}, "medqa/mid": {"norm": 0.0, "se": 0.1}}
    return ModelResult(label, f"local/{label}", "model", lowmid=LowMidResult(label, "run", scores, levels, 0, 0, 0))


def test_an_unread_level_is_not_resolved_whatever_its_padded_score():
    # MCQ never read: the padded low score (+0.8) is the guess's; the read mid outputs sit at chance
    padded = _model("pad", [None] * 10, [0.05, -0.05] * 5, 0.8)
    ev = evidence([padded])
    res = {h.claim.rsplit(" (", 1)[0]: h.result for h in ev.headlines}
    assert res["Low level (MCQ) above chance on read answers"]["n"] == 0
    assert res["Low level (MCQ) above chance on read answers"]["verdict"] == "not resolved"
    assert res["Low > Mid, the paper's order"]["verdict"] == "not resolved"
    assert res["Mid level (SV, AE, MR) above chance on read answers"]["verdict"] == "not resolved"
    assert "MCQ outputs read 0%" in ev.headlines[0].context and "+0.800" in ev.headlines[0].context
    text = reading([padded], ev)
    assert "Low level (MCQ) above chance on read answers n/a over 0 items — not resolved" in text
    assert "has no verdict" in text


def test_read_answers_decide_and_the_json_recomputes():
    clear = _model("clear", [0.9, 1.0, 0.8, 1.0, 0.9, 0.7, 1.0, 0.8, 0.9, 1.0], [0.1, -0.1, 0.0, 0.05, -0.05] * 2, 0.9)
    ev = evidence([clear])
    res = {h.claim.rsplit(" (", 1)[0]: h.result for h in ev.headlines}
    assert res["Low level (MCQ) above chance on read answers"]["verdict"] == "holds"
    assert res["Low > Mid, the paper's order"]["verdict"] == "holds" and res["Low > Mid, the paper's order"]["n"] == 10
    assert res["Mid level (SV, AE, MR) above chance on read answers"]["verdict"] == "not resolved"
    back = Evidence.from_json(ev.to_json())
    assert back.recompute() == [] and back.table() == ev.table()
    # an item read in MCQ but not in one mid task leaves the pair (every task of a level must read it)
    partial = _model("partial", [0.9] * 10, [0.0] * 9 + [None], 0.9)
    res = {h.claim.rsplit(" (", 1)[0]: h.result for h in evidence([partial]).headlines}
    assert res["Low > Mid, the paper's order"]["n"] == 9
