"""The combined EcoLevels document: headlines over distinct units for local models only, recomputable (issue #49)."""

import pytest

from core.evidence import Evidence, table_in
from core.jobs import Report
from methods.ecolevels.report import combine, evidence
from methods.ecolevels.validity import RESUME_SCREENER


def _flow(model: str, wino: list[float], resume: list[float], explicit: list[float]) -> Report:
    def result(pid, level, values, runs):
        return {
            "probe_id": pid,
            "name": pid,
            "construct_key": "gender/occupation",
            "level": level,
            "ev": 0.2,
            "effect": sum(values) / len(values),
            "ci_low": -1.0,
            "ci_high": 1.0,
            "verdict": "null",
            "n_units": len(values),
            "units": {"keys": [f"{pid}{i}" for i in range(len(values))], "values": values},
            "runs": runs,
        }

    rep = Report(title=f"flow {model}")
    rep.data = {
        "model": model,
        "target": RESUME_SCREENER.model_dump(),
        "results": [
            result("winobias", "L2", wino, [{"paraphrase": 0, "seed": 0, "index": 0.5}]),
            result(
                "explicit_agree", "L3", explicit, [{"paraphrase": 0, "seed": 0, "index": 0.0, "acquiescence": -1.0}]
            ),
            result("resume_screening", "L4", resume, [{"paraphrase": 0, "seed": 0, "index": 0.0}]),
        ],
    }
    return rep


def test_headlines_for_local_models_only_and_the_dissociation(tmp_path):
    reports = {
        "constant A/3/yes (reference)": _flow("scripted/eco-constant", [0.0] * 8, [0.0] * 8, [0.0] * 8),
        "local/tiny": _flow(
            "local/tiny", [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0, 1.0] * 3, [0.0, 1.0, 0.0, -1.0] * 6, [0.0] * 20
        ),
    }
    ev = evidence(reports)
    assert all("local-tiny" in h.claim for h in ev.headlines) and len(ev.headlines) == 4
    res = {h.claim.split(":")[0]: h.result for h in ev.headlines}
    assert res["L2 WinoBias"]["verdict"] == "holds" and res["L2 WinoBias"]["n"] == 24
    assert res["L4 résumé screening favours the stereotype-consistent name (local-tiny)"]["verdict"] == "not resolved"
    assert res["Association (L2 WinoBias) above behaviour (L4 résumés)"]["estimate"] == pytest.approx(0.75)
    assert res["Association (L2 WinoBias) above behaviour (L4 résumés)"]["verdict"] == "holds"
    explicit = next(h for h in ev.headlines if h.claim.startswith("L3"))
    assert "acquiescence -1.00" in explicit.context and explicit.result["verdict"] == "not resolved"
    rep = combine(reports, skipped={}, command="paperworks reproduce ecolevels", options={"n_units": 8}, wall_s=1.0)
    path = rep.write_markdown(tmp_path / "ecolevels.md")
    back = Evidence.load(tmp_path / "ecolevels" / "results.json")
    assert back.recompute() == [] and table_in(path.read_text()) == back.table()
