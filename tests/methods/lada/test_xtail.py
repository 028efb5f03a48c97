"""The X-TAIL protocol (methods/continual/xtail.py): metric definitions and the union-label harness."""

import numpy as np
import pytest
import torch

from methods.continual.xtail import Inputs, XTailLearner, XTailStream, XTailTask, run_xtail_sequence, xtail_metrics


def test_metrics_on_a_hand_built_matrix():
    A = np.array([[0.9, 0.3, 0.2], [0.8, 0.95, 0.4], [0.7, 0.9, 0.85]])
    m = xtail_metrics(A)
    assert m["transfer"] == pytest.approx((0.3 + (0.2 + 0.4) / 2) / 2)  # d=2: A[1,2]; d=3: mean(A[1,3], A[2,3])
    assert m["average"] == pytest.approx(
        np.mean([(0.9 + 0.8 + 0.7) / 3, (0.3 + 0.95 + 0.9) / 3, (0.2 + 0.4 + 0.85) / 3])
    )
    assert m["last"] == pytest.approx((0.7 + 0.9 + 0.85) / 3)
    with pytest.raises(ValueError):
        xtail_metrics(np.tril(A) + np.triu(np.full((3, 3), np.nan), 1))


def _task(k, classes, n=4):
    y = torch.as_tensor(classes).repeat(n)
    x = Inputs(torch.zeros(len(y), 3, 2, 2), torch.nn.functional.one_hot(y, 6).float())
    return XTailTask(k, f"d{k}", tuple(classes), tuple(f"c{c}" for c in classes), x, y, x, y)


class _Oracle(XTailLearner):
    """Perfect on learned classes, always predicts class 0 on unseen ones (a fixed 'zero-shot' guess)."""

    heads = ("oracle",)

    def __init__(self):
        self.learned = set()

    def learn_task(self, task, progress):
        self.learned |= set(task.classes)

    def scores(self, x, head=None):
        s = x.features.clone()
        seen = torch.zeros(6, dtype=torch.bool)
        seen[list(self.learned)] = True
        s[:, ~seen] = 0
        s[:, 0] += 0.5
        return s


def test_harness_scores_every_domain_over_the_union_after_each_step():
    stream = XTailStream((_task(0, [0, 1]), _task(1, [2, 3]), _task(2, [4, 5])), tuple(f"c{i}" for i in range(6)))
    run = run_xtail_sequence(_Oracle(), stream)
    A = np.asarray(run.matrices["oracle"])
    # learned domains perfect; unseen domains: the class-0 guess is always wrong over the union ...
    assert np.allclose(np.tril(A), np.tril(np.ones((3, 3))))
    assert A[0, 1] == 0 and A[0, 2] == 0 and A[1, 2] == 0
    # ... but with the per-task label space (MTIL) an all-zero row picks the domain's first class: 50 %
    P = np.asarray(run.per_task_matrices["oracle"])
    assert P[0, 1] == pytest.approx(0.5) and P[2, 2] == 1.0
    assert run.summary("oracle") == {"transfer": 0.0, "average": pytest.approx(6 / 9), "last": 1.0}
