"""Presets of ``paperworks reproduce nonlinear_sdr`` and the limits of the fit job.

``quick`` (the default) runs the simulation grid of spec §6 at p = 10, n ∈ {200, 500} with 5
replications (every estimator but the kernel loss-ensemble), contamination on M1/M4/C1 at
n = 200, a λ sweep (0.1 to 1000 around the spec's λ = 1, with the hinge SVMs' regularisation profile), the §7 checks and the five real datasets (digits subsampled to 600 rows):
about ten minutes on two idle CPU cores.
``full`` is the spec's scale: p ∈ {10, 20}, n ∈ {100, 200, 500}, 100 replications, every model
contaminated, all of digits, the C3 rate up to n = 6400.
"""

from __future__ import annotations

from typing import Any

# the names only (simulate.MODELS / simulate.ESTIMATORS / realdata.DATASETS hold the definitions and are
# checked against these when imported), so that registering the jobs imports neither scikit-learn nor scipy
MODELS = ("M1", "M2", "M3", "M4", "C1", "C2", "C3")
ESTIMATORS = ("SIR", "SAVE", "DR", "pHd", "PSVM", "PM-ensemble", "kernel PSVM", "kernel PM-ensemble", "neural PSVM")
DATASETS = ("diabetes", "breast_cancer", "wine", "iris", "digits")

ALL_MODELS = list(MODELS)
CONTAMINATION_ESTIMATORS = ["SIR", "DR", "pHd", "PSVM", "PM-ensemble", "kernel PSVM", "neural PSVM"]

PRESETS: dict[str, dict[str, Any]] = {
    "quick": {
        "models": ALL_MODELS,
        "ns": [200, 500],
        "ps": [10],
        "reps": 5,
        "estimators": [e for e in ESTIMATORS if e != "kernel PM-ensemble"],  # the full preset runs it too
        "contamination": [0.1, 0.2, 0.3],
        "contamination_models": ["M1", "M4", "C1"],
        "contamination_n": 200,
        "lam_sweep": [0.1, 1.0, 10.0, 100.0, 1000.0],
        "datasets": ["diabetes", "breast_cancer", "wine", "iris", "digits"],
        "digits_n": 600,
        "c3_ns": [100, 200, 400, 800, 1600],
        "c3_reps": 10,
        "ladle_boot": 20,
    },
    "full": {
        "models": ALL_MODELS,
        "ns": [100, 200, 500],
        "ps": [10, 20],
        "reps": 100,
        "estimators": list(ESTIMATORS),
        "contamination": [0.1, 0.2, 0.3],
        "contamination_models": ALL_MODELS,
        "contamination_n": 200,
        "lam_sweep": [0.1, 1.0, 10.0, 100.0, 1000.0],
        "datasets": ["diabetes", "breast_cancer", "wine", "iris", "digits"],
        "digits_n": 0,
        "c3_ns": [100, 400, 1600, 6400],
        "c3_reps": 100,
        "ladle_boot": 50,
    },
    # test-sized: two models, one small n, two replications, no real data
    "smoke": {
        "models": ["M1", "M4"],
        "ns": [120],
        "ps": [6],
        "reps": 2,
        "estimators": ["SIR", "PSVM", "kernel PSVM"],
        "contamination": [0.2],
        "contamination_models": ["M1"],
        "contamination_n": 120,
        "lam_sweep": [1.0, 10.0],
        "datasets": ["iris"],
        "digits_n": 300,
        "c3_ns": [100, 200],
        "c3_reps": 2,
        "ladle_boot": 3,
    },
}

# limits of the nonlinear_sdr.fit job (uploaded CSVs)
MAX_ROWS = 20_000
MAX_COLUMNS = 500
MAX_KERNEL_ROWS = 3_000  # the kernel machine's n×n Gram matrix
MAX_NEURAL_ROWS = 20_000
