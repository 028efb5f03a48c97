"""The demonstration pool in Chroma (spec §6.1 item 1) and its in-memory view.

Per (model hash, representation mode, layer, pool) three collections hold every
pool item once:

* ``…-x``: ``x_X`` as the embedding (cosine space), the problem as document, and
  metadata (dataset, index, subject, answer, ``Stab(X)``);
* ``…-p-reference`` and ``…-p-attention``: ``p_X = P x_X`` as the embedding in L2
  space, so Chroma's nearest-neighbour order for ``x_q`` is the Sim order.

Indexing is idempotent and resumable: items already stored are never encoded
again, so a second index of the same pool does no forward passes. Selection
itself is an exact numpy scan over the loaded arrays (:class:`DemoPool`), because
the global top-k by Score is not a nearest-neighbour query.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from core.vectorstore import VectorStore, collection_name
from methods.lms3.config import ORIENTATIONS, RepresentationLayer, RepresentationMode
from methods.lms3.data import Problem
from methods.lms3.projections import AttentionProjections
from methods.lms3.representation import Encoder

log = logging.getLogger(__name__)

Key = tuple[RepresentationMode, RepresentationLayer]
Progress = Callable[[float, str], None]


def collection_for(model_hash: str, pool_name: str, key: Key, kind: str) -> str:
    """The Chroma collection of one pool, representation and kind (``x``, ``p-reference``, ``p-attention``)."""
    mode, layer = key
    return collection_name("lms3", model_hash, mode, layer, pool_name, kind)


@dataclass
class IndexStats:
    """What one indexing call did."""

    pool: str
    items: int
    encoded: int
    forward_passes: int
    seconds: float
    collections: list[str] = field(default_factory=list)

    @property
    def skipped(self) -> bool:
        return self.encoded == 0

    @property
    def items_per_s(self) -> float:
        return self.encoded / self.seconds if self.seconds > 0 and self.encoded else 0.0


def _stored_ids(store: VectorStore, col: str) -> set[str]:
    if store.count(col) == 0:
        return set()
    return {h.id for h in store.get(col)}


def index_pool(
    problems: Sequence[Problem],
    pool_name: str,
    *,
    store: VectorStore,
    encoder: Encoder,
    projections: AttentionProjections,
    model_hash: str,
    keys: Iterable[Key] = (("reference", "final_norm_output"),),
    chunk_size: int = 32,
    progress: Progress | None = None,
) -> IndexStats:
    """Embed every pool item not yet stored, for every representation in ``keys``.

    Writes ``x``, ``P x`` (both orientations) and ``Stab`` per item, in chunks, so an
    interrupted run resumes where it stopped.
    """
    t0 = time.perf_counter()
    keys = list(dict.fromkeys(keys))
    passes0 = encoder.forward_passes
    by_uid = {p.uid: p for p in problems}
    if len(by_uid) != len(problems):
        raise ValueError("pool items must have distinct ids")
    cols = {
        k: {kind: collection_for(model_hash, pool_name, k, kind) for kind in ("x", *[f"p-{o}" for o in ORIENTATIONS])}
        for k in keys
    }
    missing: dict[Key, set[str]] = {}
    for k in keys:
        counts = {store.count(c) for c in cols[k].values()}
        if counts == {len(problems)}:
            stored = _stored_ids(store, cols[k]["x"])
            if stored >= set(by_uid):
                continue
        have = set.intersection(*(_stored_ids(store, c) for c in cols[k].values()))
        missing[k] = set(by_uid) - have
    todo = [p for p in problems if any(p.uid in m for m in missing.values())]
    if not todo:
        log.info("pool %s already indexed for %s: nothing to encode", pool_name, keys)
    need_keys = [k for k in keys if missing.get(k)]
    for c0 in range(0, len(todo), chunk_size):
        chunk = todo[c0 : c0 + chunk_size]
        reps = encoder.encode([p.text for p in chunk], need_keys)
        for k in need_keys:
            x = reps[k]
            stab = projections.stability(x)
            ids = [p.uid for p in chunk]
            meta = [
                {
                    "dataset": p.dataset,
                    "index": p.index,
                    "subject": p.subject,
                    "file_id": p.file_id,
                    "answer": p.answer,
                    "gold": p.gold,
                    "stab": float(s),
                }
                for p, s in zip(chunk, stab)
            ]
            store.add(
                cols[k]["x"], ids=ids, documents=[p.text for p in chunk], embeddings=x, metadatas=meta, space="cosine"
            )
            slim = [{"index": p.index, "subject": p.subject, "stab": float(s)} for p, s in zip(chunk, stab)]
            for o in ORIENTATIONS:
                store.add(cols[k][f"p-{o}"], ids=ids, embeddings=projections.project(x, o), metadatas=slim, space="l2")
        if progress is not None:
            done = min(c0 + chunk_size, len(todo))
            progress(done / len(todo), f"indexed {done}/{len(todo)} items of {pool_name}")
    stats = IndexStats(
        pool=pool_name,
        items=len(problems),
        encoded=len(todo),
        forward_passes=encoder.forward_passes - passes0,
        seconds=time.perf_counter() - t0,
        collections=[c for k in keys for c in cols[k].values()],
    )
    log.info(
        "indexed pool %s: %d items, %d encoded, %d forward passes, %.1fs",
        pool_name,
        stats.items,
        stats.encoded,
        stats.forward_passes,
        stats.seconds,
    )
    return stats


@dataclass
class DemoPool:
    """A pool's vectors and texts in memory, in pool order (exact scans happen here)."""

    name: str
    ids: list[str]
    texts: list[str]
    answers: list[str]
    golds: list[str]
    subjects: np.ndarray
    indices: np.ndarray
    file_ids: list[str]
    x: np.ndarray
    p: dict[str, np.ndarray]
    stab: np.ndarray

    def __len__(self) -> int:
        return len(self.ids)

    def restrict(self, subject: str) -> DemoPool:
        """The items of one subject (MATH selects within the query's subject)."""
        rows = np.flatnonzero(self.subjects == subject)
        if rows.size == 0:
            raise ValueError(f"pool {self.name} has no items of subject {subject!r}")
        return self.take(rows, name=f"{self.name}/{subject}")

    def take(self, rows: np.ndarray, *, name: str | None = None) -> DemoPool:
        r = rows.tolist()
        return DemoPool(
            name=name or self.name,
            ids=[self.ids[i] for i in r],
            texts=[self.texts[i] for i in r],
            answers=[self.answers[i] for i in r],
            golds=[self.golds[i] for i in r],
            subjects=self.subjects[rows],
            indices=self.indices[rows],
            file_ids=[self.file_ids[i] for i in r],
            x=self.x[rows],
            p={o: v[rows] for o, v in self.p.items()},
            stab=self.stab[rows],
        )

    def demo(self, i: int) -> tuple[str, str]:
        return self.texts[i], self.answers[i]


_CACHE: dict[tuple[int, str], tuple[int, DemoPool]] = {}
_CACHE_LOCK = threading.Lock()


def load_pool(pool_name: str, key: Key, *, store: VectorStore, model_hash: str) -> DemoPool:
    """Read an indexed pool from Chroma into numpy (cached per store while the count is unchanged)."""
    cols = {kind: collection_for(model_hash, pool_name, key, kind) for kind in ("x", *[f"p-{o}" for o in ORIENTATIONS])}
    n = store.count(cols["x"])
    if n == 0:
        raise LookupError(
            f"pool {pool_name} is not indexed for {key} under model {model_hash}; "
            f"run `paperworks lms3 index {pool_name.split('-')[0]}` first"
        )
    cache_key = (id(store), cols["x"])
    with _CACHE_LOCK:
        hit = _CACHE.get(cache_key)
        if hit is not None and hit[0] == n:
            return hit[1]
    ids, x, metas, docs = store.get_arrays(cols["x"], documents=True)
    order = np.argsort([int(m.get("index", 0)) for m in metas], kind="stable")
    ids, x = [ids[i] for i in order], x[order]
    metas, docs = [metas[i] for i in order], [docs[i] for i in order]
    p: dict[str, np.ndarray] = {}
    for o in ORIENTATIONS:
        pids, pvec, _, _ = store.get_arrays(cols[f"p-{o}"])
        row = {pid: r for r, pid in enumerate(pids)}
        if set(row) != set(ids):
            raise LookupError(f"pool {pool_name}: collection {cols[f'p-{o}']} is incomplete; re-run indexing")
        p[o] = pvec[[row[i] for i in ids]]
    pool = DemoPool(
        name=pool_name,
        ids=ids,
        texts=[d or "" for d in docs],
        answers=[str(m.get("answer", "")) for m in metas],
        golds=[str(m.get("gold", "")) for m in metas],
        subjects=np.asarray([str(m.get("subject", "")) for m in metas]),
        indices=np.asarray([int(m.get("index", 0)) for m in metas], dtype=np.int64),
        file_ids=[str(m.get("file_id", "")) for m in metas],
        x=x,
        p=p,
        stab=np.asarray([float(m["stab"]) for m in metas], dtype=np.float32),
    )
    with _CACHE_LOCK:
        _CACHE[cache_key] = (n, pool)
    return pool


@dataclass(frozen=True)
class IndexedPool:
    """A pool found in the store: its name (``mawps-full``), representation and size."""

    pool: str
    mode: str
    layer: str
    items: int


def indexed_pools(store: VectorStore, model_hash: str) -> list[IndexedPool]:
    """Every pool indexed for ``model_hash`` (read from the ``…-x`` collection names)."""
    from methods.lms3.config import LAYERS, MODES

    prefix = f"lms3-{model_hash}-"
    out = []
    for name in sorted(store.list_collections()):
        if not (name.startswith(prefix) and name.endswith("-x")):
            continue
        rest = name[len(prefix) : -2]
        mode = next((m for m in MODES if rest.startswith(m + "-")), None)
        layer = next((la for la in LAYERS if mode and rest[len(mode) + 1 :].startswith(la + "-")), None)
        if mode is None or layer is None:
            continue
        out.append(IndexedPool(rest[len(mode) + len(layer) + 2 :], mode, layer, store.count(name)))
    return out
