"""Simulation models, contamination and the metrics of the study."""

import numpy as np
import pytest

from methods.nonlinear_sdr.simulate import MODELS, chance_distance, generate, replicate, subspace_distance


def test_classification_models_are_balanced_as_specified():
    rng = np.random.default_rng(0)
    _, y1 = generate(MODELS["C1"], 20_000, 3, rng)  # 1{χ²₂ > its median}
    assert y1.mean() == pytest.approx(0.5, abs=0.02)
    _, y2 = generate(MODELS["C2"], 30_000, 3, rng)  # tertiles of |X1| + |X2|
    assert np.bincount(y2) / len(y2) == pytest.approx([1 / 3] * 3, abs=0.02)


def test_contamination_changes_exactly_the_share_asked():
    x0, y0 = generate(MODELS["M1"], 200, 4, np.random.default_rng(5))
    x1, y1 = generate(MODELS["M1"], 200, 4, np.random.default_rng(5), contamination=0.2)
    assert np.array_equal(x0, x1) and (y0 != y1).sum() == 40
    assert np.abs(y1[y0 != y1]).max() > 20  # gross (100 × Cauchy) outliers
    _, c0 = generate(MODELS["C2"], 300, 4, np.random.default_rng(6))
    _, c1 = generate(MODELS["C2"], 300, 4, np.random.default_rng(6), contamination=0.1)
    assert (c0 != c1).sum() == 30 and set(np.unique(c1)) == {0, 1, 2}  # moved to another class


def test_distance_and_chance():
    b = MODELS["M1"].basis(10)
    assert subspace_distance(b, b) == pytest.approx(0.0, abs=1e-12)
    assert subspace_distance(b @ np.array([[2.0, 1.0], [0.0, 3.0]]), b) == pytest.approx(0.0, abs=1e-12)
    other = np.zeros((10, 2))
    other[2, 0] = other[3, 1] = 1.0
    assert subspace_distance(other, b) == pytest.approx(2.0)  # orthogonal planes: ‖P − Q‖² = 2d
    assert chance_distance(2, 10) == pytest.approx(np.sqrt(3.2))


def test_one_replication_reports_every_metric():
    res = replicate("C3", 200, 5, 0, estimators=["SIR", "PSVM", "kernel PSVM"], ladle_boot=3)
    assert set(res) == {"SIR", "PSVM", "kernel PSVM"}
    assert {"dist", "rho", "dhat", "seconds", "dhat_ladle"} <= set(res["PSVM"])
    assert "dist" not in res["kernel PSVM"]  # a function, not a subspace
    assert res["PSVM"]["rho"] > 0.9 and res["PSVM"]["dist"] < 0.5
