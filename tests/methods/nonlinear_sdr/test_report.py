"""The Report's headlines: computed from per-replication values, with the verdict the intervals give."""

from types import SimpleNamespace

import pytest

from core.evidence import Evidence
from methods.nonlinear_sdr.report import _dhat_at, evidence, raw_values


def _rep(dist: float, dhat: int, eig: list[float], rho: float = 0.95) -> dict:
    return {"dist": dist, "rho": rho, "dhat": float(dhat), "eig": eig, "seconds": 0.0}


OPTIONS = SimpleNamespace(
    ps=[10], ns=[200, 500], contamination=[0.3], contamination_models=["M1"], lam=1.0, ladle_boot=5, reps=5
)


def _studies(m1_dists: list[float], m1_dhat: int, psvm_increase: float) -> dict:
    main_s = [{"model": "M1", "p": 10, "n": n} for n in (200, 500)]
    main_r = [
        [{"PSVM": _rep(d + (0.3 if n == 200 else 0.0), m1_dhat, [1.0, 0.04, 0.01])} for d in m1_dists]
        for n in (200, 500)
    ]
    cont_s = [{"model": "M1", "contamination": e} for e in (0.0, 0.3)]
    cont_r = [
        [{"PSVM": _rep(0.8 + e * psvm_increase, 1, [1.0]), "pHd": _rep(1.1 + 2 * e, 1, [1.0])} for _ in m1_dists]
        for e in (0.0, 0.3)
    ]
    return {"main": (main_s, main_r), "contamination": (cont_s, cont_r), "lam": ([], [])}


def _verdicts(ev: Evidence):
    return lambda start: next(h.result["verdict"] for h in ev.headlines if h.claim.startswith(start))


def test_headlines_follow_the_replications():
    raw = raw_values(_studies([0.30, 0.32, 0.35, 0.31, 0.33], 2, 0.5), {}, OPTIONS)
    ev = evidence(raw, OPTIONS)
    verdict = _verdicts(ev)
    assert verdict("M1: linear PSVM") == "holds"
    assert verdict("M1: PSVM's error falls") == "holds"
    assert verdict("M1: BIC (c = 1)") == "holds"
    assert verdict("M1, ε = 0.3") == "holds"
    assert Evidence.from_json(ev.to_json()).recompute() == []
    # the same claims on replications that straddle or miss the targets
    raw = raw_values(_studies([0.30, 0.75, 0.35, 0.70, 0.45], 1, 12.0), {}, OPTIONS)
    verdict = _verdicts(evidence(raw, OPTIONS))
    assert verdict("M1: linear PSVM") == "not resolved"
    assert verdict("M1: BIC (c = 1)") == "fails"
    assert verdict("M1, ε = 0.3") == "fails"


@pytest.mark.parametrize(("c", "want"), [(1.0, 1), (0.1, 2), (0.01, 3)])
def test_order_at_another_constant_from_stored_ratios(c, want):
    # n = 500: keep k while λ̂_k/λ̂₁ > 0.278·c
    assert _dhat_at({"eig": [1.0, 0.05, 0.01, 0.0]}, 500, c) == want
