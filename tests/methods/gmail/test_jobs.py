"""gmail.align (a real inline run on the test tiny CLIP), ``reproduce gmail`` (quick preset), params validation."""

import pytest

from core.evidence import Evidence, table_in
from core.jobs import InvalidOptions, InvalidParams, get_method, get_reproducer, null_context

TINY = {"backbone": "test", "n_train": 64, "n_test": 32, "stage1_steps": 3, "stage2_steps": 2, "caption_steps": 2,
        "batch_size": 16}  # fmt: skip


@pytest.mark.parametrize(
    "params",
    [{"artifact_strength": 3}, {"rank": 0}, {"tau": 0}, {"n_train": 10}, {"generator": "sd2"},
     {"real_inference_encoder": "both"}, {"unknown": 1}],
)  # fmt: skip
def test_align_params_rejected(params):
    with pytest.raises(InvalidParams):
        get_method("gmail.align").validate(params)


def test_align_inline_reports_gap_arms_and_embedding_map():
    spec = get_method("gmail.align")
    report = spec.run(spec.validate({**TINY, "artifact_strength": 1.5, "seed": 1}), null_context())
    names = {a.name for a in report.artifacts}
    assert {"embeddings.png", "losses.png", "config.json"} <= names
    coords = report.data["embedding_map"]
    assert set(coords) == {"naive", "dual-noalign", "gmail"}
    assert len(coords["gmail"]["real"]) == len(coords["gmail"]["generated"]) == 32
    m = report.data["metrics"]
    assert set(m) >= {"zero-shot", "real-only", "naive", "dual-noalign", "gmail", "constant"}
    for arm in ("naive", "gmail"):
        assert -1 <= m[arm]["paired_cosine"] <= 1 and 0 <= m[arm]["separability"] <= 100
        assert 0 <= m[arm]["i2t_r@1"] <= m[arm]["i2t_r@5"] <= m[arm]["i2t_r@10"] <= 100
    # zero-shot and GMAIL at step 0 share f_r: the zero-shot arm's retrieval does not depend on stage 1
    assert report.metrics["gmail_paired_cosine"] != report.metrics["naive_paired_cosine"]
    assert all(len(row) == len(t.columns) for t in report.tables for row in t.rows)
    titles = [t.title for t in report.tables]
    assert any(t.startswith("Modality gap") for t in titles) and any(t.startswith("Captioning demo") for t in titles)


def test_reproduce_quick_writes_the_results_page(tmp_path):
    spec = get_reproducer("gmail")
    with pytest.raises(InvalidOptions):
        spec.run(tmp_path, null_context(), {"seedz": 1})
    with pytest.raises(InvalidOptions):
        spec.run(tmp_path, null_context(), {"strengths": [1.0, 0.5]})
    opts = {"preset": "quick", "n_train": 64, "n_test": 32, "strengths": [0.5, 1.0], "seeds": 2}
    spec.run(tmp_path, null_context(), opts)
    text = (tmp_path / "gmail.md").read_text()
    ev = Evidence.load(tmp_path / "gmail" / "results.json")
    assert ev.recompute() == [] and table_in(text) == ev.table()
    assert text.index("Summary: the headline claims") < text.index("## Reading") < text.index("## Command")
    claims = [h.claim for h in ev.headlines]  # both probes at both strengths, in the table and the summary line
    for s in ("0.5", "1"):
        assert f"strength {s}: §7.6 plotted PCA plane: the clouds overlap more with GMAIL (plane probe lower)" in claims
        assert f"strength {s}: all 64 dimensions: GMAIL makes real and generated less separable (probe lower)" in claims
    first = text.split("\n\n")[1]
    assert "plotted PCA plane" in first and "all 64 dimensions" in first
    drop = ev.raw["derived"]["r1_drop_gmail_minus_naive"]
    lo, hi = ev.raw["s0.5"], ev.raw["s1"]
    assert drop[1] == pytest.approx(
        (lo["gmail"]["r@1"][1] - hi["gmail"]["r@1"][1]) - (lo["naive"]["r@1"][1] - hi["naive"]["r@1"][1])
    )
    for needle in ("Spec §7 checks", "What was shrunk", "Reading", "0.52 → 0.89", "'artifact' generator",
                   "§7.2 asymmetry", "strength 1.0"):  # fmt: skip
        assert needle in text, needle
    assert text.count("| PASS |") >= 4  # §7.1–§7.4 are mechanical and must hold on any backbone
    assert {p.name for p in (tmp_path / "gmail").iterdir()} >= {
        "embeddings.png",
        "strength.png",
        "pairs.png",
        "results.json",
    }
    gap = next(line for line in text.splitlines() if line.startswith("| f_r (no alignment; = naive)"))
    assert gap.count("|") == 5  # four cells: encoder, cosine, 64-d probe, plane probe
