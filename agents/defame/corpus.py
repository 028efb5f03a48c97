"""Evidence corpora in Chroma: the AVeriTeC oracle corpus and any folder of documents and images.

Three collections per corpus ``C``:

* ``C``: text documents (``url``, ``title``, ``date``, optional ``claim_id``);
* ``C.images``: image captions / alt text with the image ``path`` (for ``image_search``);
* ``C.phash``: perceptual hashes of images (for ``reverse_search``).

**Oracle corpus.** AVeriTeC's knowledge store cannot be downloaded here, so the
corpus is built from the gold answers in ``dev.json`` (spec §6 (b)): one
document per answer, with its ``source_url``. Every claim's answers are
distractors for every other claim, so retrieval is not trivial. Results on it
are labelled "oracle corpus" and must never be compared with the paper's.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.defame.tools.filters import parse_date, unwrap_archive
from agents.defame.tools.images import phash_vector

log = logging.getLogger(__name__)

ORACLE_COLLECTION = "defame-averitec-oracle"
TEXT_SUFFIXES = {".txt", ".md", ".html", ".htm"}
IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp", ".tif", ".tiff"}
CHUNK_CHARS = 2000


def images_collection(corpus: str) -> str:
    return f"{corpus}.images"


def phash_collection(corpus: str) -> str:
    return f"{corpus}.phash"


@dataclass
class CorpusStats:
    documents: int = 0
    images: int = 0
    skipped: int = 0


def averitec_documents(claims: list[dict[str, Any]], ids: Iterable[int] | None = None) -> list[dict[str, Any]]:
    """One document per gold answer (``Unanswerable`` answers and empty texts skipped)."""
    docs = []
    for idx in ids if ids is not None else range(len(claims)):
        claim = claims[idx]
        for qi, q in enumerate(claim.get("questions") or []):
            for ai, a in enumerate(q.get("answers") or []):
                text = (a.get("answer") or "").strip()
                if a.get("answer_type") == "Boolean" and a.get("boolean_explanation"):
                    text = f"{text}. {a['boolean_explanation'].strip()}"
                if not text or a.get("answer_type") == "Unanswerable" or text.lower() == "no answer could be found.":
                    continue
                url = (a.get("source_url") or "").strip()
                if not url.startswith(("http://", "https://")):  # e.g. "Metadata": the claim's own metadata
                    url = f"averitec://dev/{idx}/{qi}/{ai}"
                docs.append(
                    {
                        "id": f"av-{idx}-{qi}-{ai}",
                        "text": text,
                        "url": url,
                        "title": unwrap_archive(url).split("//")[-1][:120],
                        "gold_for": str(idx),
                        "source_medium": a.get("source_medium") or "",
                    }
                )
    return docs


def build_averitec_oracle(
    store: Any, claims: list[dict[str, Any]], *, collection: str = ORACLE_COLLECTION, rebuild: bool = False
) -> int:
    """Fill ``collection`` with every claim's gold answers (idempotent: ids are stable; returns the count)."""
    docs = averitec_documents(claims)
    digest = hashlib.sha256(json.dumps([d["id"] for d in docs]).encode()).hexdigest()[:12]
    if rebuild:
        store.drop(collection)
    if not rebuild and store.count(collection) == len(docs):
        log.info("corpus %s already holds %d documents (%s)", collection, len(docs), digest)
        return len(docs)
    store.add(
        collection,
        ids=[d["id"] for d in docs],
        documents=[d["text"] for d in docs],
        metadatas=[
            {
                "url": d["url"],
                "title": d["title"],
                "gold_for": d["gold_for"],
                "source_medium": d["source_medium"],
                "corpus": "averitec-oracle",
            }
            for d in docs
        ],
    )
    return len(docs)


def _chunks(text: str, size: int = CHUNK_CHARS) -> list[str]:
    paras, out, cur = text.split("\n"), [], ""
    for p in paras:
        if len(cur) + len(p) + 1 > size and cur:
            out.append(cur.strip())
            cur = ""
        cur += p + "\n"
        while len(cur) > size:
            out.append(cur[:size].strip())
            cur = cur[size:]
    if cur.strip():
        out.append(cur.strip())
    return out


def _sidecar(path: Path) -> dict[str, Any]:
    """Optional ``<file>.json`` beside a file: ``url``, ``title``, ``date``, ``caption``."""
    side = path.with_name(path.name + ".json")
    if side.exists():
        try:
            return dict(json.loads(side.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            log.warning("ignoring unreadable sidecar %s", side)
    return {}


def add_folder(
    store: Any,
    folder: str | Path,
    *,
    collection: str = "defame-default",
    max_files: int = 10_000,
    max_bytes: int = 20_000_000,
) -> CorpusStats:
    """Index a folder: text files (chunked) into ``collection``; images into its image and hash indexes.

    A file may have a ``<name>.json`` sidecar with ``url``, ``title``, ``date`` and
    (for images) ``caption``; an image without a caption is described by its file name.
    """
    from agents.defame.tools.web import html_to_text

    folder = Path(folder).expanduser().resolve()
    if not folder.is_dir():
        raise ValueError(f"not a folder: {folder}")
    stats = CorpusStats()
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".json"))[:max_files]
    for path in files:
        suffix = path.suffix.lower()
        if path.stat().st_size > max_bytes:
            stats.skipped += 1
            continue
        meta = _sidecar(path)
        url = str(meta.get("url") or path.as_uri())
        date = parse_date(meta.get("date"))
        base = {"url": url, "title": str(meta.get("title") or path.stem), "corpus": collection}
        if date:
            base["date"] = date.isoformat()
        key = hashlib.sha256(str(path).encode()).hexdigest()[:16]
        if suffix in TEXT_SUFFIXES:
            raw = path.read_text(encoding="utf-8", errors="replace")
            if suffix in (".html", ".htm"):
                title, raw = html_to_text(raw)
                base["title"] = str(meta.get("title") or title or path.stem)
            pieces = _chunks(raw)
            if not pieces:
                stats.skipped += 1
                continue
            store.add(
                collection,
                ids=[f"{key}-{i}" for i in range(len(pieces))],
                documents=pieces,
                metadatas=[dict(base, chunk=i) for i in range(len(pieces))],
            )
            stats.documents += 1
        elif suffix in IMAGE_SUFFIXES:
            try:
                vec = phash_vector(path)
            except Exception as exc:  # not a readable image
                log.warning("skipping %s: %s", path, exc)
                stats.skipped += 1
                continue
            caption = str(meta.get("caption") or path.stem.replace("_", " ").replace("-", " "))
            img_meta = dict(base, image=str(path), caption=caption)
            store.add(images_collection(collection), ids=[key], documents=[caption], metadatas=[img_meta])
            store.add(phash_collection(collection), ids=[key], embeddings=[vec], metadatas=[img_meta])
            stats.images += 1
        else:
            stats.skipped += 1
    return stats
