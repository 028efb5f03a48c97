"""Caption states: the frozen local LLM (mean of the last two layers), computed once and read back from Chroma."""

import numpy as np
import pytest

from methods.m3_jepa import textenc


def test_features_are_cached_per_caption_in_the_vector_store(ephemeral_store, monkeypatch):
    caps = ["a thin upright seven", "the digit 3, written boldly and slanting left"]
    first = textenc.cached_features(caps, store=ephemeral_store)
    arrs = [first[c] for c in caps]
    assert [a.shape[1] for a in arrs] == [576, 576] and arrs[0].shape[0] < arrs[1].shape[0]
    col = textenc.collection()
    assert ephemeral_store.count(col) == sum(len(a) for a in arrs)  # one item per token

    def boom(*a, **k):
        raise AssertionError("the LLM ran again for a cached caption")

    monkeypatch.setattr(textenc, "encode", boom)
    again = textenc.cached_features(list(reversed(caps)) + caps, store=ephemeral_store)
    for c in caps:
        np.testing.assert_allclose(again[c], first[c], rtol=1e-6, atol=1e-6)  # float32 round trip
    with pytest.raises(AssertionError, match="ran again"):
        textenc.cached_features(["a new caption"], store=ephemeral_store)


def test_llm_weights_are_untouched_by_encoding():
    from core.llm import get_local_model
    from methods.m3_jepa.data import state_digest

    model = get_local_model().model
    before = state_digest(model)
    textenc.encode(["a bold nine"])
    assert state_digest(model) == before
    assert not model.training
