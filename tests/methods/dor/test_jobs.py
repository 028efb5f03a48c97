"""dor.tune (a real inline run) and ``reproduce dor`` (quick preset, small vocabulary) end to end."""

import pytest

from core.evidence import Evidence, table_in
from core.jobs import InvalidOptions, InvalidParams, get_method, get_reproducer, null_context
from methods.vlm.render import LEXICON

SMALL_VOCAB = [*LEXICON, "red", "circle", "square", "stripe", "apple", "cherry", "wall", "house", "sailboat"]


@pytest.fixture
def small_vocabulary(monkeypatch):
    """The WordNet scoring of ~58k nouns takes a minute on a busy CPU; tests score a short list."""
    import methods.dor.experiment as experiment

    monkeypatch.setattr(experiment, "wordnet_lemmas", lambda pos=("noun",): list(SMALL_VOCAB))


def _run(method, params):
    spec = get_method(method)
    return spec.run(spec.validate(params), null_context())


@pytest.mark.parametrize(
    "params", [{"host": "maple"}, {"epochs": 0}, {"pool": "nearest"}, {"n_base": 0}, {"clip_dir": "x" * 300}]
)
def test_tune_params_rejected(params):
    with pytest.raises(InvalidParams):
        get_method("dor.tune").validate(params)


def test_clip_dir_stays_inside_the_models_folder():
    from methods.dor.experiment import resolve_clip_dir

    with pytest.raises(ValueError):
        resolve_clip_dir("../../etc")
    assert resolve_clip_dir("my-clip").name == "my-clip"


def test_tune_inline_reports_calibration_with_reliability_diagrams(small_vocabulary):
    params = {"backbone": "test", "dataset": "digits", "n_base": 5, "shots": 4, "epochs": 3, "outlier_k": 20,
              "outlier_batch": 8, "views": 1, "seed": 2}  # fmt: skip
    report = _run("dor.tune", params)
    names = {a.name for a in report.artifacts}
    assert {"reliability.png", "loss.png", "config.json"} <= names
    for key in ("base_ece", "new_ece", "zeroshot_new_ece", "base_acc", "hm"):
        assert 0 <= report.metrics[key] <= 100
    pool_table = next(t for t in report.tables if t.title.startswith("Outlier pool"))
    assert not {r[0] for r in pool_table.rows} & {"zero", "one", "two", "three", "four"}


def test_reproduce_quick_writes_the_results_page(tmp_path, small_vocabulary):
    spec = get_reproducer("dor")
    with pytest.raises(InvalidOptions):
        spec.run(tmp_path, null_context(), {"seedz": 1})
    spec.run(
        tmp_path, null_context(), {"preset": "quick", "dataset": "digits", "n_base": 5, "shots": 4, "outlier_k": 10}
    )
    text = (tmp_path / "dor.md").read_text()
    for needle in ("paper new ECE", "What was shrunk", "Reading", "Outlier choice", "14.58", "per seed"):
        assert needle in text
    assert (tmp_path / "dor" / "reliability_new.png").is_file()
    # the headline table comes first and is recomputed from results.json's per-seed values
    ev = Evidence.load(tmp_path / "dor" / "results.json")
    assert ev.recompute() == [] and table_in(text) == ev.table()
    assert text.index("Summary: the headline claims") < text.index("Reading") < text.index("paper new ECE")
    assert len(ev.raw["coop"]["new_ece"]) == 2 and len(ev.raw["ablation"]["coop+dor@far"]["hm_ece"]) == 2
    claims = {h.claim: h for h in ev.headlines}
    first = claims["DOR lowers CoOp's new-class ECE"]
    diffs = [a - b for a, b in zip(ev.raw["coop+dor"]["new_ece"], ev.raw["coop"]["new_ece"], strict=True)]
    assert first.result["estimate"] == pytest.approx(sum(diffs) / 2) and first.result["n"] == 2
    assert "Near-OOD outliers beat far-OOD ones (HM of ECEs)" in claims
