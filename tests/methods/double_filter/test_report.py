"""Aggregation over seeds and the §7.5 directional checks, on hand-made runs."""

from __future__ import annotations

import pytest

from methods.double_filter.checks import directional
from methods.double_filter.report import aggregate


def _arm(name, score, bg, patches="all", genome=None, flops=100.0, ms=1.0):
    return {
        "arm": name, "patches": patches, "rho": 0.5, "genome": genome, "score": score,
        "per_kind": {"background": bg, "colour": score}, "flops": {"total": flops}, "latency_ms": ms,
        "model_ms": ms, "kept": 16 if patches == "all" else 8, "patches_total": 16,
    }  # fmt: skip


def _run(seed, ipf, rand, fg, alf, rmask):
    return {
        "task": "vqa",
        "seed": seed,
        "arms": {
            "none": _arm("none", 0.8, 1.0),
            "ipf": _arm("ipf", ipf, 1.0, "ipf", flops=80.0),
            "alf": _arm("alf", alf, 1.0, genome=[1, 0, 1, 0], flops=60.0),
            "both": _arm("both", alf, 1.0, "ipf", [1, 0, 1, 0], flops=40.0),
            "random_patches": _arm("random_patches", rand, 0.9, "random", flops=70.0),
            "fg_only": _arm("fg_only", fg, 0.5, "fg_only", flops=80.0),
            "random_mask": _arm("random_mask", rmask, 1.0, genome=[0, 1, 1, 0], flops=60.0),
        },
    }


def test_aggregate_means_stds_and_zeros():
    runs = [_run(0, 0.7, 0.6, 0.65, 0.75, 0.5), _run(1, 0.9, 0.6, 0.65, 0.75, 0.5)]
    s = aggregate(runs)["vqa"]
    assert list(s)[:4] == ["none", "ipf", "alf", "both"]
    assert s["ipf"]["score"] == pytest.approx(0.8) and s["ipf"]["score_std"] == pytest.approx(0.1)
    assert s["alf"]["zeros"] == 2 and s["none"]["zeros"] == 0
    assert s["fg_only"]["bg"] == pytest.approx(0.5) and s["both"]["flops"] == 40.0
    assert s["ipf"]["kept"] == "8/16"


def test_directional_checks_compare_ipf_with_baselines():
    good = {c[0]: c[1] for c in directional(aggregate([_run(0, 0.8, 0.6, 0.7, 0.75, 0.5)]))}
    assert len(good) == 5 and all(good.values())
    bad = {c[0]: c[1] for c in directional(aggregate([_run(0, 0.5, 0.6, 0.7, 0.4, 0.5)]))}
    assert not bad["5. IPF (ρ = 0.5) beats random dropping on all questions"]
    assert not bad["5. GA mask beats a random mask with as many zeros"]
    assert bad["5. IPF (ρ = 0.5) beats foreground-first selection on background questions"]  # 1.0 vs 0.5
