"""Chroma behind ``add / query / get / delete``.

The embedded default is a persistent client under ``settings.chroma_path``; with
``PAPERWORKS_CHROMA_HOST`` set, the HTTP client talks to a Chroma server. Text is
embedded with MiniLM (from site-packages) unless the caller passes its own vectors
(e.g. LMS3's model representations), in which case the collection has no
embedding function at all: Chroma's default one would try to download a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.config import get_settings
from core.lazy import locked_cache

_NAME_OK = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


def collection_name(*parts: str) -> str:
    """A valid Chroma collection name (3-512 chars of [a-zA-Z0-9._-]) from parts."""
    raw = "-".join(p for p in parts if p)
    name = re.sub(r"[^a-zA-Z0-9._-]+", "-", raw).strip("-._")[:512]
    if len(name) < 3:
        name = (name + "---col")[:3] if name else "col"
        name = name.ljust(3, "x")
    if not _NAME_OK.match(name):
        raise ValueError(f"cannot make a Chroma collection name from {parts!r}")
    return name


class MiniLMEmbeddingFunction:
    """A Chroma embedding function backed by :func:`core.llm.embeddings.embed`."""

    def __init__(self) -> None:
        pass

    def __call__(self, input: list[str]) -> list[Any]:  # noqa: A002 - Chroma's signature
        from core.llm.embeddings import embed

        return list(embed(list(input)))

    def embed_query(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    def embed_documents(self, input: list[str]) -> list[Any]:  # noqa: A002
        return self(input)

    @staticmethod
    def name() -> str:
        return "paperworks-minilm"

    def is_legacy(self) -> bool:
        return False

    def default_space(self) -> str:
        return "cosine"

    def supported_spaces(self) -> list[str]:
        return ["cosine", "l2", "ip"]

    def get_config(self) -> dict[str, Any]:
        return {}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
        return MiniLMEmbeddingFunction()


@dataclass
class Hit:
    """One query result."""

    id: str
    document: str | None
    metadata: dict[str, Any]
    distance: float
    embedding: list[float] | None = None


class VectorStore:
    """Collections of documents or vectors with metadata."""

    def __init__(self, client: Any) -> None:
        self.client = client

    def _collection(self, name: str, *, text: bool, space: str = "cosine"):
        kwargs: dict[str, Any] = {"name": name, "metadata": {"hnsw:space": space}}
        kwargs["embedding_function"] = MiniLMEmbeddingFunction() if text else None
        return self.client.get_or_create_collection(**kwargs)

    def add(
        self,
        collection: str,
        *,
        ids: list[str],
        documents: list[str] | None = None,
        embeddings: list[list[float]] | Any | None = None,
        metadatas: list[dict[str, Any]] | None = None,
        batch_size: int = 2000,
        space: str = "cosine",
    ) -> int:
        """Upsert items; text is embedded with MiniLM unless ``embeddings`` is given.

        ``space`` (``cosine``, ``l2`` or ``ip``) applies when this call creates the collection.
        """
        if not ids:
            return 0
        col = self._collection(collection, text=embeddings is None, space=space)
        for i in range(0, len(ids), batch_size):
            sl = slice(i, i + batch_size)
            kw: dict[str, Any] = {"ids": ids[sl]}
            if documents is not None:
                kw["documents"] = documents[sl]
            if embeddings is not None:
                kw["embeddings"] = [list(map(float, e)) for e in embeddings[sl]]
            if metadatas is not None:
                kw["metadatas"] = [_clean_meta(m) for m in metadatas[sl]]
            col.upsert(**kw)
        return len(ids)

    def query(
        self,
        collection: str,
        *,
        text: str | None = None,
        embedding: list[float] | None = None,
        k: int = 5,
        where: dict[str, Any] | None = None,
        include_embeddings: bool = False,
    ) -> list[Hit]:
        """Nearest items to ``text`` (embedded with MiniLM) or to ``embedding``."""
        if (text is None) == (embedding is None):
            raise ValueError("query needs exactly one of text or embedding")
        col = self._collection(collection, text=text is not None)
        n = col.count()
        if n == 0:
            return []
        include = ["documents", "metadatas", "distances"] + (["embeddings"] if include_embeddings else [])
        kw: dict[str, Any] = {"n_results": min(k, n), "include": include}
        if where:
            kw["where"] = where
        if text is not None:
            kw["query_texts"] = [text]
        else:
            kw["query_embeddings"] = [list(map(float, embedding))]
        res = col.query(**kw)
        hits = []
        for j, id_ in enumerate(res["ids"][0]):
            emb = res.get("embeddings")
            hits.append(
                Hit(
                    id=id_,
                    document=(res.get("documents") or [[None]])[0][j],
                    metadata=(res.get("metadatas") or [[{}]])[0][j] or {},
                    distance=float(res["distances"][0][j]),
                    embedding=list(emb[0][j]) if emb is not None and len(emb) else None,
                )
            )
        return hits

    def get(
        self,
        collection: str,
        *,
        ids: list[str] | None = None,
        where: dict[str, Any] | None = None,
        include_embeddings: bool = False,
        limit: int | None = None,
    ) -> list[Hit]:
        col = self._collection(collection, text=False)
        include = ["documents", "metadatas"] + (["embeddings"] if include_embeddings else [])
        res = col.get(ids=ids, where=where, include=include, limit=limit)
        embs = res.get("embeddings")
        return [
            Hit(
                id=i,
                document=(res.get("documents") or [None] * len(res["ids"]))[j],
                metadata=(res.get("metadatas") or [{}] * len(res["ids"]))[j] or {},
                distance=0.0,
                embedding=list(embs[j]) if embs is not None and len(embs) else None,
            )
            for j, i in enumerate(res["ids"])
        ]

    def get_arrays(
        self, collection: str, *, documents: bool = False
    ) -> tuple[list[str], np.ndarray, list[dict[str, Any]], list[str | None]]:
        """Every item of a vector collection at once: (ids, embeddings as one fp32 array, metadatas, documents).

        The bulk read for callers that scan vectors in numpy: :meth:`get` turns each vector into a
        Python list, which takes most of a minute for a few thousand items.
        """
        res = self._collection(collection, text=False).get(
            include=["embeddings", "metadatas"] + (["documents"] if documents else [])
        )
        ids = list(res["ids"])
        emb = np.asarray(res["embeddings"] if len(ids) else [], dtype=np.float32).reshape(len(ids), -1)
        metas = [m or {} for m in (res.get("metadatas") or [{}] * len(ids))]
        docs = list(res.get("documents") or [None] * len(ids))
        return ids, emb, metas, docs

    def count(self, collection: str) -> int:
        if collection not in self.list_collections():
            return 0
        return self._collection(collection, text=False).count()

    def delete(self, collection: str, *, ids: list[str] | None = None, where: dict[str, Any] | None = None) -> None:
        if ids is None and where is None:
            raise ValueError("delete needs ids or where; use drop() to remove a collection")
        self._collection(collection, text=False).delete(ids=ids, where=where)

    def drop(self, collection: str) -> None:
        if collection in self.list_collections():
            self.client.delete_collection(collection)

    def list_collections(self) -> list[str]:
        cols = self.client.list_collections()
        return [c if isinstance(c, str) else c.name for c in cols]

    def heartbeat(self) -> int:
        return int(self.client.heartbeat())


def _clean_meta(m: dict[str, Any]) -> dict[str, Any]:
    """Chroma accepts str/int/float/bool metadata values only; drop None, stringify the rest."""
    out = {}
    for k, v in (m or {}).items():
        if v is None:
            continue
        out[k] = v if isinstance(v, (str, int, float, bool)) else str(v)
    return out or {"_": 1}  # Chroma rejects empty metadata dicts


def make_client(
    *, path: str | None = None, host: str | None = None, port: int | None = None, ephemeral: bool = False
) -> Any:
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    cs = ChromaSettings(anonymized_telemetry=False, allow_reset=True)
    if ephemeral:
        return chromadb.EphemeralClient(settings=cs)
    if host:
        return chromadb.HttpClient(host=host, port=port or 8000, settings=cs)
    return chromadb.PersistentClient(path=path, settings=cs)


@locked_cache(maxsize=4)
def _cached(path: str, host: str | None, port: int) -> VectorStore:
    return VectorStore(make_client(path=path, host=host, port=port))


def get_vectorstore() -> VectorStore:
    """The configured store: Chroma server when ``chroma_host`` is set, else the embedded directory."""
    s = get_settings()
    return _cached(str(s.chroma_path), s.chroma_host, s.chroma_port)
