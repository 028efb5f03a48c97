"""The frozen text encoder: SmolLM2-135M token features, cached once per caption in the vector store.

Token features = mean of the last two hidden-state layers (spec §3.1), per token, no pooling
(d_txt = 576). The model is ``core.llm.get_local_model()`` (transformers, fp32, eval mode) and
is only run under ``torch.no_grad``: nothing here can change its weights.

Cache layout: one Chroma collection per (model hash, feature version); one item per token with
id ``<caption sha1[:16]>:<pos>``, the token's 576-d vector as the embedding, the token text as
the document and ``{"caption": sha, "pos": i, "n": n_tokens}`` as metadata. A caption is
computed once per machine; later runs read the whole collection in one bulk call.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch

log = logging.getLogger(__name__)

FEATURE_VERSION = "v1-last2mean"
D_TXT = 576


def caption_id(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def collection(model_name: str | None = None) -> str:
    from core.llm import model_hash
    from core.vectorstore import collection_name

    return collection_name("m3jepa-text", model_hash(model_name), FEATURE_VERSION)


@torch.no_grad()
def encode(texts: Sequence[str], *, model_name: str | None = None, batch_size: int = 32) -> list[np.ndarray]:
    """(n_tokens_i, 576) per text: mean of the last two hidden layers of the frozen local LLM."""
    from core.llm import get_local_model
    from core.train import pin_threads

    lm = get_local_model(model_name)
    tok = lm.tokenizer
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    tok.padding_side = "right"
    base = getattr(lm.model, "model", lm.model)  # the decoder stack without the LM head (logits are not needed)
    out: list[np.ndarray] = []
    with pin_threads(1):  # one thread: on a shared, oversubscribed CPU more threads only spin
        for i in range(0, len(texts), batch_size):
            batch = list(texts[i : i + batch_size])
            enc = tok(batch, return_tensors="pt", padding=True)
            hs = base(**enc, output_hidden_states=True).hidden_states
            feats = 0.5 * (hs[-1] + hs[-2])
            for j, n in enumerate(enc["attention_mask"].sum(1).tolist()):
                out.append(feats[j, :n].float().numpy().copy())
    return out


def token_strings(texts: Sequence[str], model_name: str | None = None) -> list[list[str]]:
    from core.llm import get_local_model

    tok = get_local_model(model_name).tokenizer
    return [[tok.decode([t]) for t in tok(x)["input_ids"]] for x in texts]


def cached_features(
    texts: Sequence[str],
    *,
    store: Any = None,
    model_name: str | None = None,
    progress: Callable[[float, str], Any] | None = None,
    batch_size: int = 32,
) -> dict[str, np.ndarray]:
    """Token features of every distinct text, computing (and storing) only those the store lacks."""
    from core.vectorstore import get_vectorstore

    store = store or get_vectorstore()
    col = collection(model_name)
    wanted = {caption_id(t): t for t in dict.fromkeys(texts)}
    have = _read(store, col) if store.count(col) else {}
    feats = {t: have[cid] for cid, t in wanted.items() if cid in have}
    missing = [t for cid, t in wanted.items() if cid not in have]
    if missing:
        log.info("m3_jepa: encoding %d captions with the local LLM (once)", len(missing))
        pieces = token_strings(missing, model_name)
        for k in range(0, len(missing), batch_size * 4):
            chunk = missing[k : k + batch_size * 4]
            arrs = encode(chunk, model_name=model_name, batch_size=batch_size)
            _write(store, col, chunk, arrs, pieces[k : k + len(chunk)])
            feats.update(zip(chunk, arrs, strict=True))
            if progress is not None:
                progress(min(1.0, (k + len(chunk)) / len(missing)), f"text features {k + len(chunk)}/{len(missing)}")
    return feats


def _write(store: Any, col: str, texts: list[str], arrs: list[np.ndarray], pieces: list[list[str]]) -> None:
    ids, embs, metas, docs = [], [], [], []
    for text, arr, toks in zip(texts, arrs, pieces, strict=True):
        cid = caption_id(text)
        for pos in range(len(arr)):
            ids.append(f"{cid}:{pos:03d}")
            embs.append(arr[pos])
            metas.append({"caption": cid, "pos": pos, "n": len(arr), "text": text if pos == 0 else ""})
            docs.append(toks[pos] if pos < len(toks) else "")
    store.add(col, ids=ids, embeddings=np.stack(embs), metadatas=metas, documents=docs)


def _read(store: Any, col: str) -> dict[str, np.ndarray]:
    """Every complete caption in the collection: caption id → (n, 576)."""
    ids, emb, metas, _ = store.get_arrays(col)
    rows: dict[str, dict[int, int]] = {}
    sizes: dict[str, int] = {}
    for k, m in enumerate(metas):
        rows.setdefault(m["caption"], {})[int(m["pos"])] = k
        sizes[m["caption"]] = int(m["n"])
    out = {}
    for cid, pos in rows.items():
        if len(pos) == sizes[cid]:
            out[cid] = emb[[pos[i] for i in range(sizes[cid])]]
    return out


def pad(arrs: Sequence[np.ndarray], length: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack variable-length token features: (N, L, d) zeros-padded and the (N, L) bool mask."""
    length = length or max(len(a) for a in arrs)
    d = arrs[0].shape[1]
    x = np.zeros((len(arrs), length, d), dtype=np.float32)
    m = np.zeros((len(arrs), length), dtype=bool)
    for i, a in enumerate(arrs):
        n = min(len(a), length)
        x[i, :n] = a[:n]
        m[i, :n] = True
    return torch.from_numpy(x), torch.from_numpy(m)
