"""What evidence a fact-check can reach, and the document store behind the UI's Evidence page.

A fresh machine has an empty evidence corpus and no search backend, so DEFAME can
only answer from the model's own knowledge. :func:`evidence_status` says so before a
run (CLI, API response, UI) with the two ways out: add documents (``paperworks corpus
add DIR`` or the Evidence page) or configure a search backend (SearxNG or Serper).

Documents in a corpus are chunks of one source (same ``url``); a document's id is a
hash of its url, so the page can list and delete whole documents.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any

from agents.defame.config import DefameSettings

MAX_DOCUMENT_BYTES = 2_000_000
MAX_LISTED_CHUNKS = 20_000
DOCUMENT_SUFFIXES = (".txt", ".md", ".html", ".htm")


@dataclass
class EvidenceStatus:
    """The evidence a fact-check on ``corpus`` can use."""

    corpus: str
    chunks: int
    images: int
    search_backend: str  # "corpus", "searxng" or "serper"
    backend_ready: bool  # a web backend is configured (a key or URL is set)
    warning: str | None = None
    ways_out: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return self.warning is not None

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"empty": self.empty}


def backend_ready(ext: DefameSettings) -> bool:
    """A web search backend is selected and configured."""
    if ext.search_backend == "serper":
        return ext.serper_api_key is not None
    if ext.search_backend == "searxng":
        return bool(getattr(ext, "searxng_url", None))
    return False


def evidence_status(store: Any, corpus: str, ext: DefameSettings) -> EvidenceStatus:
    """Count the corpus and check the backend; ``warning`` is set when no evidence can be found at all."""
    from agents.defame.corpus import images_collection

    chunks, images = store.count(corpus), store.count(images_collection(corpus))
    ready = backend_ready(ext)
    st = EvidenceStatus(corpus, chunks, images, ext.search_backend, ready)
    if chunks == 0 and images == 0 and not ready:
        st.warning = (
            f"The evidence store '{corpus}' is empty and no web search backend is configured, so the "
            "fact-check can only use what the model already knows (expect 'not enough information')."
        )
        st.ways_out = [
            f"Add documents: `paperworks corpus add DIR --collection {corpus}` (text, Markdown, HTML, images), "
            "or upload them on the UI's Evidence page.",
            "Or configure a search backend: PAPERWORKS_DEFAME__SEARCH_BACKEND=searxng with "
            "PAPERWORKS_DEFAME__SEARXNG_URL (a self-hosted SearxNG, `docker compose --profile search up searxng`), "
            "or =serper with PAPERWORKS_DEFAME__SERPER_API_KEY.",
        ]
    return st


def doc_id(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:16]


def list_documents(store: Any, corpus: str) -> list[dict[str, Any]]:
    """One row per source document (its chunks grouped by url), newest uploads first."""
    if store.count(corpus) == 0:
        return []
    docs: dict[str, dict[str, Any]] = {}
    for hit in store.get(corpus, limit=MAX_LISTED_CHUNKS):
        m = hit.metadata or {}
        url = str(m.get("url") or f"corpus://{corpus}/{hit.id}")
        d = docs.setdefault(
            url,
            {
                "id": doc_id(url),
                "url": url,
                "title": str(m.get("title") or ""),
                "date": m.get("date"),
                "chunks": 0,
                "chars": 0,
                "preview": "",
            },
        )
        d["chunks"] += 1
        d["chars"] += len(hit.document or "")
        if not d["preview"] or m.get("chunk") == 0:
            d["preview"] = (hit.document or "")[:200]
    return sorted(docs.values(), key=lambda d: (d["title"].lower(), d["url"]))


def add_document(
    store: Any,
    corpus: str,
    *,
    filename: str,
    data: bytes,
    title: str | None = None,
    date: str | None = None,
    corpus_label: str | None = None,
) -> dict[str, Any]:
    """Index one uploaded text/Markdown/HTML document (chunked like ``corpus add``) into collection ``corpus``;
    returns its row. ``corpus_label`` is the corpus name recorded with it when the collection is a key's own.

    Raises:
        ValueError: unsupported type, too large, not UTF-8 text, or no text in it.
    """
    from agents.defame.corpus import _chunks
    from agents.defame.tools.filters import parse_date
    from agents.defame.tools.web import html_to_text

    name = filename.rsplit("/", 1)[-1].strip() or "document.txt"
    if not name.lower().endswith(DOCUMENT_SUFFIXES):
        raise ValueError(f"{name}: only {', '.join(DOCUMENT_SUFFIXES)} documents can be added")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{name}: larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{name}: not UTF-8 text") from None
    page_title = ""
    if name.lower().endswith((".html", ".htm")):
        page_title, raw = html_to_text(raw)
    pieces = _chunks(raw)
    if not pieces:
        raise ValueError(f"{name}: no text in it")
    url = f"upload://{hashlib.sha256(data).hexdigest()[:16]}/{name}"
    meta: dict[str, Any] = {"url": url, "title": title or page_title or name, "corpus": corpus_label or corpus}
    day = parse_date(date) if date else None
    if day:
        meta["date"] = day.isoformat()
    key = doc_id(url)
    store.add(
        corpus,
        ids=[f"{key}-{i}" for i in range(len(pieces))],
        documents=pieces,
        metadatas=[dict(meta, chunk=i) for i in range(len(pieces))],
    )
    return next(d for d in list_documents(store, corpus) if d["id"] == key)


def delete_document(store: Any, corpus: str, document_id: str) -> bool:
    """Delete every chunk of the document with this id; False when there is none."""
    for d in list_documents(store, corpus):
        if d["id"] == document_id:
            store.delete(corpus, where={"url": d["url"]})
            return True
    return False
