"""The vector store's bulk array read agrees with its per-item read."""

from __future__ import annotations

import numpy as np


def test_get_arrays_matches_get(ephemeral_store):
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((5, 7)).astype(np.float32)
    ids = [f"d{i}" for i in range(5)]
    ephemeral_store.add(
        "vecs-test",
        ids=ids,
        embeddings=vecs.tolist(),
        documents=[f"doc {i}" for i in range(5)],
        metadatas=[{"index": i} for i in range(5)],
    )
    got_ids, emb, metas, docs = ephemeral_store.get_arrays("vecs-test", documents=True)
    assert emb.dtype == np.float32 and emb.shape == (5, 7)
    by_id = {h.id: h for h in ephemeral_store.get("vecs-test", include_embeddings=True)}
    for row, i in enumerate(got_ids):
        np.testing.assert_allclose(emb[row], by_id[i].embedding, rtol=0, atol=0)
        assert metas[row] == by_id[i].metadata and docs[row] == by_id[i].document
    assert ephemeral_store.get_arrays("vecs-test")[3] == [None] * 5  # documents only when asked
