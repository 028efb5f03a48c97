"""Spec §7: the reconciler on fixtures (R1–R4) and generalisation predictions."""

from methods.ecolevels.reconcile import predict, reconcile
from methods.ecolevels.result import ProbeResult
from methods.ecolevels.validity import RESUME_SCREENER


def res(pid, level, ev, effect, lo, hi, moderators=None, runs=None):
    return ProbeResult(
        probe_id=pid,
        name=pid,
        construct_key="gender-occupation:female/male",
        level=level,
        ev=ev,
        effect=effect,
        ci_low=lo,
        ci_high=hi,
        n_units=20,
        moderators=moderators or {},
        runs=runs or [],
    )


def test_association_bias_with_null_behaviour_is_a_cross_level_dissociation():
    (c,) = reconcile([res("iat", "L2", 0.2, 0.6, 0.4, 0.8), res("resume", "L4", 0.8, 0.02, -0.1, 0.14)])
    assert c.label == "R1"


def test_same_level_different_ev_is_an_ecological_gap():
    (c,) = reconcile([res("resume", "L4", 1.0, 0.3, 0.1, 0.5), res("letter", "L4", 0.4, 0.0, -0.1, 0.1)])
    assert c.label == "R2" and c.weight_to == "resume"


def test_same_level_equal_ev_different_moderator_is_a_boundary_condition():
    a = res("resume_amb", "L4", 0.8, 0.3, 0.1, 0.5, {"information_ambiguity": "high"})
    b = res("resume_clear", "L4", 0.8, 0.0, -0.1, 0.1, {"information_ambiguity": "low"})
    (c,) = reconcile([a, b])
    assert c.label == "R3" and c.moderators == ["information_ambiguity"]
    assert "information_ambiguity" in c.proposal and "No-lose" in c.proposal


def test_identical_probes_with_opposite_signs_and_overlapping_cis_are_a_measurement_problem():
    a = res("resume", "L4", 0.8, 0.12, -0.05, 0.3, runs=[{"index": 0.2}, {"index": 0.04}])
    b = res("resume", "L4", 0.8, -0.1, -0.25, 0.06, runs=[{"index": -0.2}, {"index": 0.0}])
    (c,) = reconcile([a, b])
    assert c.label == "R4" and "reliability" in c.explanation


def test_agreeing_results_do_not_conflict():
    assert reconcile([res("a", "L2", 0.2, 0.5, 0.3, 0.7), res("b", "L4", 0.8, 0.4, 0.2, 0.6)]) == []


def test_predictions_follow_level_match_and_ev():
    s = predict(res("resume", "L4", 0.8, 0.3, 0.1, 0.5), RESUME_SCREENER)
    assert s.strength == "likely to generalise" and s.falsifier
    assert predict(res("resume", "L4", 0.4, 0.3, 0.1, 0.5), RESUME_SCREENER).strength.startswith("uncertain")
    assert predict(res("iat", "L2", 0.2, 0.5, 0.3, 0.7), RESUME_SCREENER).strength.startswith("indicates risk")
