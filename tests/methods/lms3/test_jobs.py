"""End to end through the registered jobs with the real local model (20 pool items, 3 queries)."""

from __future__ import annotations

import pytest

from core.jobs import InvalidOptions, InvalidParams, get_method, get_reproducer, null_context


@pytest.fixture
def store(ephemeral_store, monkeypatch):
    import methods.lms3.selection as selection

    monkeypatch.setattr(selection, "get_vectorstore", lambda: ephemeral_store)
    return ephemeral_store


def test_index_then_select_with_smollm2(store, data_dir):
    index = get_method("lms3.index")
    params = {"dataset": "mawps", "pool_size": 20, "seed": 0}
    first = index.run(index.validate(params), null_context())
    assert first.metrics["items"] == 20 and first.metrics["encoded"] == 20 and first.metrics["forward_passes"] >= 2
    again = index.run(index.validate(params), null_context())
    assert again.metrics["encoded"] == 0 and again.metrics["forward_passes"] == 0

    select = get_method("lms3.select")
    from methods.lms3.data import load_split

    queries = load_split("mawps", "queries")[:3]
    seen = []
    for q, l_frac in zip(queries, (0.01, 0.2, 0.5)):  # λ = 0 (reference: reject all), 4, 10
        rep = select.run(select.validate({**params, "query": q.text, "k": 2, "l": l_frac}), null_context())
        data = rep.data
        assert data["pool_size"] == 20 and data["lam"] == int(l_frac * 20)
        assert len(data["candidates"]) == 2
        cand = [c["score"] for c in data["candidates"]]
        assert cand == sorted(cand) and all(c["sim"] > 0 and c["stab"] > 0 for c in data["candidates"])
        if data["lam"] == 0:
            assert data["rejected"] and data["prompt"] == "Let's think step by step: " + q.text + "\nA: "
        else:
            chosen = [d["index"] for d in data["demos"]]
            assert chosen == [c["index"] for c in data["candidates"] if c["in_sim_top_lambda"]]
            assert data["rejected"] == (not chosen)
            if chosen:
                assert data["prompt"].startswith("Here are some examples you can refer to.\n\nQ: ")
                assert data["prompt"].endswith("\n\nQ: " + q.text + "\nA: ")
        seen.append(data["candidates"][0]["index"])
    assert all(0 <= i < 1537 for i in seen)
    # the pool index is a line of the train split, and the shown problem is that line's
    pool = load_split("mawps", "pool")
    assert data["candidates"][0]["problem"] == pool[data["candidates"][0]["index"]].text


def test_select_params_validation():
    select = get_method("lms3.select")
    with pytest.raises(InvalidParams, match="subject"):
        select.validate({"dataset": "math", "query": "1+1?"})
    with pytest.raises(InvalidParams):
        select.validate({"dataset": "mawps", "query": "   "})
    with pytest.raises(InvalidParams):
        select.validate({"dataset": "mawps", "query": "x" * 9000})
    with pytest.raises(InvalidParams):
        select.validate({"dataset": "mawps", "query": "1+1?", "k": 0})
    with pytest.raises(InvalidParams):
        select.validate({"dataset": "nope", "query": "1+1?"})
    ok = select.validate({"dataset": "math", "subject": "geometry", "query": "Area of a unit circle?"})
    assert ok.arm == "lms3" and ok.l == 0.01 and ok.k == 1 and ok.min_lambda == 0


def test_reproducer_rejects_unknown_options(tmp_path):
    rep = get_reproducer("lms3")
    with pytest.raises(InvalidOptions, match="preset"):
        rep.run(tmp_path, null_context(), {"preset": "huge"})
    with pytest.raises(
        InvalidOptions,
        match="speed: unknown option; known: accuracy, all_modes, amp, datasets, device, nll_queries, preset, "
        "theory_queries",
    ):
        rep.run(tmp_path, null_context(), {"speed": "fast"})
    assert rep.validate({"datasets": "gsm8k, math"}).datasets == ["gsm8k", "math"]
    with pytest.raises(InvalidOptions, match="nll_queries"):
        rep.run(tmp_path, null_context(), {"nll_queries": 0})
    assert not list(tmp_path.iterdir())  # nothing is written for invalid options
