"""The task-incremental harness: the stage matrices and MFT / MFN / MAA / BWT from them."""

import math

import numpy as np

from core.jobs import null_context
from methods.continual.task_incremental import (
    TaskEval,
    TaskIncrementalLearner,
    TIExperiment,
    run_sequence,
    summarize_matrix,
)


def test_summary_metrics_of_a_known_matrix():
    nan = math.nan
    A = np.array([[0.9, nan, nan], [0.6, 0.8, nan], [0.3, 0.7, 1.0]])
    s = summarize_matrix(A)
    assert math.isclose(s["MFT"], (0.9 + 0.8 + 1.0) / 3)
    assert math.isclose(s["MFN"], (0.3 + 0.7 + 1.0) / 3)
    assert math.isclose(s["MAA"], (0.9 + 0.7 + 2.0 / 3) / 3)
    assert math.isclose(s["BWT"], ((0.3 - 0.9) + (0.7 - 0.8)) / 2)
    assert math.isclose(s["forgetting"], ((0.9 - 0.3) + (0.8 - 0.7)) / 2)


def test_task_eval_ratios():
    e = TaskEval(n=10, correct=3, compliant=6)
    assert (e.accuracy, e.compliance, e.essential) == (0.3, 0.6, 0.5)
    assert math.isnan(TaskEval(n=4, correct=0, compliant=0).essential)


class _StyleDrift(TaskIncrementalLearner):
    """Answers every task in the style of the last learned task: right format only for that one."""

    def __init__(self):
        self.last = None

    def learn_task(self, t, task, progress):
        self.last = task
        return {"t": t}

    def evaluate(self, t, tasks, progress):
        return {
            k: TaskEval(n=4, correct=4 if k == self.last else 0, compliant=4 if k == self.last else 1) for k in tasks
        }


def test_run_sequence_fills_the_lower_triangle_per_stage():
    run = run_sequence(_StyleDrift(), ["a", "b", "c"], null_context(), seed=7)
    acc, comp = run.matrix("accuracy"), run.matrix("compliance")
    assert np.allclose(np.diag(acc), 1.0) and acc[2, 0] == 0 and math.isnan(acc[0, 1])
    assert comp[1, 0] == 0.25 and comp[2, 2] == 1.0
    assert run.summary()["BWT"] == -1.0 and run.summary("compliance")["BWT"] == -0.75
    assert [d["t"] for d in run.diagnostics] == [0.0, 1.0, 2.0]
    exp = TIExperiment(arm="drift", tasks=["a", "b", "c"], runs=[run, run])
    assert exp.aggregate()["MFT"] == (1.0, 0.0)
    back = TIExperiment.from_dict(exp.to_dict())
    assert np.allclose(np.nan_to_num(back.mean_matrix()), np.nan_to_num(exp.mean_matrix()))
