"""The protocol on a toy learner whose accuracy matrix is known exactly."""

import json

import numpy as np
import pytest
from pydantic import BaseModel, Field

from core.jobs import JobContext
from methods.continual.data import LabelledSplit, register_dataset
from methods.continual.harness import run_experiment, run_sequence
from methods.continual.learner import ContinualLearner, get_learner, register_learner
from methods.continual.report import experiment_report


def blobs() -> LabelledSplit:
    """6 well separated Gaussian blobs in 2-D: nearest class mean is always right."""
    rng = np.random.RandomState(0)
    centres = np.array([[100.0 * c, 50.0 * (c % 2)] for c in range(6)])

    def draw(n):
        y = np.repeat(np.arange(6), n)
        return (centres[y] + rng.randn(len(y), 2)).astype(np.float32), y

    x_tr, y_tr = draw(20)
    x_te, y_te = draw([5, 6, 7, 8, 9, 10][0])
    return LabelledSplit(x_tr, y_tr, x_te, y_te, name="blobs")


class ToyOptions(BaseModel):
    unused: int = Field(0, ge=0, le=3)


class NCM(ContinualLearner):
    """Class means of every seen class (``ncm``) and of the latest task only (``recent``)."""

    heads = ("ncm", "recent")

    def __init__(self) -> None:
        self.means: dict[int, np.ndarray] = {}
        self.latest: tuple[int, ...] = ()
        self.tasks_seen = 0

    def learn_task(self, task, progress: JobContext) -> None:
        for c in task.classes:
            self.means[c] = task.x_train[task.y_train == c].mean(axis=0)
        self.latest = task.classes
        self.tasks_seen += 1
        progress(1.0, "learned")

    def predict(self, x, head=None):
        labels = sorted(self.means) if (head or "ncm") == "ncm" else list(self.latest)
        d = np.stack([np.linalg.norm(x - self.means[c], axis=1) for c in labels], axis=1)
        return np.asarray(labels)[d.argmin(axis=1)]

    def diagnostics(self):
        return {"tasks_seen": self.tasks_seen}


@register_learner("toy_ncm", options=ToyOptions, heads=NCM.heads, description="test-only NCM")
def make_toy(options, *, seed, stream):
    return NCM()


register_dataset("blobs", blobs)


def test_run_sequence_builds_the_exact_accuracy_matrix():
    from methods.continual.data import make_stream

    stream = make_stream(blobs(), classes_per_task=2, seed=3)
    res = run_sequence(NCM(), stream, seed=3)
    ncm, recent = res.matrix("ncm"), res.matrix("recent")
    np.testing.assert_array_equal(np.tril(ncm), np.tril(np.ones((3, 3))))
    assert np.isnan(ncm[np.triu_indices(3, 1)]).all()
    np.testing.assert_array_equal(np.diag(recent), [1, 1, 1])
    assert recent[1, 0] == recent[2, 0] == recent[2, 1] == 0.0
    s = res.summary("recent")
    assert s["forgetting"] == pytest.approx(1.0) and s["A_f"] == pytest.approx(1 / 3)
    assert s["old_acc"] == 0.0 and s["gap"] == pytest.approx(1.0)
    assert res.summary("ncm")["A_f"] == 1.0 and res.summary("ncm")["forgetting"] == 0.0
    assert [d["tasks_seen"] for d in res.diagnostics] == [1, 2, 3]


def test_run_experiment_over_seeds_reports_progress_per_task_and_a_report():
    messages = []
    ctx = JobContext(lambda f, m: messages.append((f, m)) or False, min_interval_s=0.0)
    exp = run_experiment("toy_ncm", seeds=[1, 2], dataset="blobs", classes_per_task=2, progress=ctx)
    assert [r.seed for r in exp.runs] == [1, 2]
    assert exp.runs[0].class_order != exp.runs[1].class_order
    agg = exp.aggregate()
    assert agg["ncm"]["A_f"] == (1.0, 0.0)
    assert agg["recent"]["A_f"][0] == pytest.approx(1 / 3)
    done = [m for _, m in messages if "task" in m and "done" in m]
    assert len(done) == 6 and "seed 2/2" in done[-1] and "task 3/3" in done[-1]
    fracs = [f for f, _ in messages]
    assert fracs == sorted(fracs) and fracs[-1] == pytest.approx(1.0)

    report = experiment_report(exp)
    assert report.metrics["best_head"] == "ncm" and report.metrics["A_f"] == 1.0
    assert report.metrics["method"] == "ncm" and report.summary.startswith("**ncm**: A_f 100.0 ± 0.0 %")
    assert len(report.metrics) == 6
    exp.heads = ["recent", "ncm"]  # the method's own arm first, a better one beside it: headed by its own
    headed = experiment_report(exp)
    assert headed.metrics["method"] == "recent" and headed.metrics["A_f"] == pytest.approx(1 / 3, abs=1e-6)
    assert headed.metrics["best_head"] == "ncm" and "Best A_f: ncm." in headed.summary
    exp.heads = ["ncm", "recent"]
    md = report.to_markdown()
    assert "| recent | 33.3 ± 0.0 |" in md and "run_matrix.png" in md
    files = report.pending_files()
    assert files["run_matrix.png"][:4] == b"\x89PNG" and files["run_curves.png"][:4] == b"\x89PNG"
    raw = json.loads(files["run.json"])
    assert raw["runs"][0]["matrices"]["recent"][2][:2] == [0.0, 0.0]


def test_unknown_methods_and_bad_options_are_refused():
    with pytest.raises(KeyError, match="unknown continual method"):
        get_learner("no-such-method")
    with pytest.raises(ValueError, match="invalid options for toy_ncm"):
        get_learner("toy_ncm").validate_options({"unused": 9})


def test_device_goes_to_factories_that_take_it_and_cpu_only_learners_refuse_others():
    import torch

    from methods.continual.data import make_stream
    from methods.continual.jobs import ContinualParams

    seen = {}

    @register_learner("toy_ncm_dev", options=ToyOptions, heads=NCM.heads, description="test-only NCM with a device")
    def make_dev(options, *, seed, stream, device="cpu", amp="off"):
        seen.update(device=device, amp=amp)
        return NCM()

    stream = make_stream(blobs(), classes_per_task=2, seed=0)
    spec, dev_spec = get_learner("toy_ncm"), get_learner("toy_ncm_dev")
    assert not spec.takes_device and dev_spec.takes_device and get_learner("dpcr").takes_device
    dev_spec.build({}, seed=0, stream=stream, device=torch.device("meta"), amp="bf16")
    assert seen == {"device": torch.device("meta"), "amp": "bf16"}
    assert isinstance(spec.build({}, seed=0, stream=stream, device=torch.device("cpu")), NCM)  # the CPU is fine
    with pytest.raises(ValueError, match="runs on the CPU only"):
        spec.build({}, seed=0, stream=stream, device=torch.device("meta"))
    with pytest.raises(ValueError, match="runs on the CPU only"):
        ContinualParams(method="toy_ncm", dataset="blobs", device="cuda")
    assert ContinualParams(method="toy_ncm", dataset="blobs", device="auto").device == "auto"  # falls back to CPU
    assert ContinualParams(method="toy_ncm_dev", dataset="blobs", device="cuda", amp="bf16").amp == "bf16"


def test_continual_run_records_where_it_ran():
    from core.jobs import null_context
    from methods.continual.jobs import ContinualParams, run

    report = run(ContinualParams(method="toy_ncm", dataset="blobs", device="auto"), null_context())
    assert report.metrics["device"] == "cpu" and report.metrics["dtype"] == "float32"
