"""The Chroma demonstration pool: caching, resuming, exact scans and per-subject MATH pools."""

from __future__ import annotations

import numpy as np
import pytest

from methods.lms3 import Lms3Service, PoolSpec, RepresentationConfig, SelectionConfig
from methods.lms3.pool import collection_for
from methods.lms3.scores import similarity


@pytest.fixture
def svc(tiny_llama_dir, ephemeral_store):
    return Lms3Service(model_name=str(tiny_llama_dir), store=ephemeral_store, batch_size=8)


def test_second_index_does_no_forward_passes(svc, data_dir):
    spec = PoolSpec("mawps", 12, seed=0)
    first = svc.index(spec)
    assert first.encoded == 12 and first.forward_passes > 0
    second = svc.index(spec)
    assert second.skipped and second.forward_passes == 0 and svc.encoder.forward_passes == first.forward_passes
    # a different mode is a different collection and does need encoding
    other = svc.index(spec, keys=[("eos_appended", "final_norm_output")])
    assert other.encoded == 12


def test_resume_encodes_only_missing_items(svc, data_dir):
    spec = PoolSpec("mawps", 10, seed=1)
    svc.index(spec)
    col = collection_for(svc.model_hash, spec.name, svc.key, "p-reference")
    victims = [h.id for h in svc.store.get(col)][:3]
    svc.store.delete(col, ids=victims)
    again = svc.index(spec)
    assert again.encoded == 3
    assert svc.store.count(col) == 10


def test_stored_vectors_and_chroma_l2_order(svc, data_dir):
    spec = PoolSpec("mawps", 15, seed=0)
    svc.index(spec)
    pool = svc.pool(spec)
    assert len(pool) == 15 and list(pool.indices) == sorted(pool.indices)
    x = svc.encode(list(pool.texts[:2]))
    np.testing.assert_allclose(pool.x[:2], x, atol=1e-5)
    np.testing.assert_allclose(pool.p["reference"], pool.x @ svc.projections.p_reference.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pool.p["attention"], pool.x @ svc.projections.p_attention.T, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(pool.stab, svc.projections.stability(pool.x), rtol=1e-5)
    # Chroma's nearest neighbours of x_q in the p collection follow the exact Sim order
    xq = svc.encode(["Tom has 3.0 apples and buys 4.0 more . How many apples does he have ?"])[0]
    hits = svc.store.query(
        collection_for(svc.model_hash, spec.name, svc.key, "p-reference"), embedding=xq.tolist(), k=5
    )
    sim = similarity(xq, pool.p["reference"])
    exact = [pool.ids[i] for i in np.argsort(sim, kind="stable")[:5]]
    assert [h.id for h in hits] == exact


def test_math_selection_stays_within_subject(svc, data_dir):
    spec = PoolSpec("math", 3, seed=0)
    svc.index(spec)
    assert len(svc.pool(spec)) == 21
    for subject in ("geometry", "number_theory"):
        for arm in ("lms3", "cosine", "random", "stab_only", "score_no_reject"):
            res = svc.select(
                "What is the remainder when 2^10 is divided by 7?",
                spec,
                subject=subject,
                arm=arm,
                selection=SelectionConfig(k=3, l=1.0),
            )
            assert res.pool_size == 3 and res.demos
            assert {d.subject for d in res.demos} == {subject}
    with pytest.raises(ValueError):
        svc.select("x?", spec)  # MATH needs a subject


def test_unindexed_pool_is_a_clear_error(svc, data_dir):
    with pytest.raises(LookupError, match="not indexed"):
        svc.select("2 + 2 ?", PoolSpec("gsm8k", 5))


def test_service_rejection_gives_zero_shot_prompt(svc, data_dir):
    spec = PoolSpec("mawps", 12, seed=0)
    svc.index(spec)
    q = "A farmer has 12.0 cows and sells 5.0 . How many cows are left ?"
    rejected = svc.select(q, spec, selection=SelectionConfig(k=2, l=0.01))  # λ = int(0.12) = 0
    assert rejected.lam == 0 and rejected.rejected and rejected.demos == []
    assert rejected.prompt == "Let's think step by step: " + q + "\nA: "
    assert len(rejected.candidates) == 2
    kept = svc.select(q, spec, selection=SelectionConfig(k=2, l=1.0))
    assert not kept.rejected and [d.index for d in kept.demos] == [d.index for d in kept.candidates]
    assert kept.prompt.startswith("Here are some examples you can refer to.\n\nQ: " + kept.demos[0].problem)
    scores = [d.score for d in kept.demos]
    assert scores == sorted(scores) and all(abs(d.score - d.sim * d.stab) < 1e-3 * d.score for d in kept.demos)


def test_attention_orientation_changes_sim(tiny_llama_dir, ephemeral_store, data_dir):
    spec = PoolSpec("mawps", 12, seed=0)
    a = Lms3Service(model_name=str(tiny_llama_dir), store=ephemeral_store)
    b = Lms3Service(
        model_name=str(tiny_llama_dir),
        store=ephemeral_store,
        representation=RepresentationConfig(orientation="attention"),
    )
    a.index(spec)
    assert b.index(spec).skipped  # both orientations were stored by one indexing
    q = "Sam has 5.0 marbles and finds 2.0 more . How many now ?"
    sa = [d.sim for d in a.select(q, spec, arm="sim_only", selection=SelectionConfig(k=3)).demos]
    sb = [d.sim for d in b.select(q, spec, arm="sim_only", selection=SelectionConfig(k=3)).demos]
    assert not np.allclose(sa, sb)


def test_experiment_keeps_an_empty_persistent_cache(tiny_llama_dir, ephemeral_store, tmp_path):
    """Regression: an empty ResultCache is falsy and must not be swapped for a memory-only one."""
    from methods.lms3.cache import ResultCache
    from methods.lms3.config import PRESETS
    from methods.lms3.experiment import Experiment

    cache = ResultCache(tmp_path / "r.jsonl")
    exp = Experiment(PRESETS["tiny"], store=ephemeral_store, model_name=str(tiny_llama_dir), cache=cache)
    assert exp.cache is cache
    exp._nll([("Q: 1+1\nA: ", "2.0")])
    assert len(ResultCache(tmp_path / "r.jsonl")) == 1
