"""``POST /v1/factcheck``: submit a DEFAME fact-check (multipart: claim, optional images and metadata);
``/v1/evidence``: what evidence a fact-check can reach, and the documents of a corpus.

* ``GET /v1/evidence?corpus=C``: counts, search backend, and a ``warning`` with the two ways
  out when the store is empty and no backend is configured (the factcheck response carries
  the same ``evidence`` object, so a client learns it before the job runs);
* ``GET /v1/evidence/documents?corpus=C``: one row per document (chunks grouped by url);
* ``POST /v1/evidence/documents`` (multipart ``files`` + ``corpus``): add .txt/.md/.html files
  (each at most 2 MB, UTF-8; 415 otherwise, 413 when larger);
* ``DELETE /v1/evidence/documents/{id}?corpus=C``: remove a document (404 if unknown).

Returns the job (201); poll ``GET /v1/jobs/{id}`` (its message names each stage as
it finishes) and read the result at ``GET /v1/jobs/{id}/report`` (JSON body with
verdict, justification, evidence and per-stage usage, plus the Markdown document
with images as artifact links). Bad input is a 4xx with a message: empty claim or
malformed date 422, a non-image upload 415, an oversized upload or image 413.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, File, Form, HTTPException, Path, Query, UploadFile, status
from pydantic import BaseModel

from services.api.deps import ApiKeyDep, is_admin, submit
from services.api.schemas import JobPublic
from services.api.uploads import read_image, read_upload, record_server_file

router = APIRouter(tags=["defame"])
MAX_IMAGES = 8
BENCHMARKS = ("default", "averitec", "mocheg", "verite", "claimreview")
CORPUS_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{2,199}$"
MAX_DOCUMENTS = 20
CorpusQuery = Annotated[str, Query(pattern=CORPUS_PATTERN, description="Evidence collection.")]


class EvidencePublic(BaseModel):
    """What a fact-check on ``corpus`` can use as evidence."""

    corpus: str
    chunks: int
    images: int
    search_backend: str
    backend_ready: bool
    empty: bool
    warning: str | None = None
    ways_out: list[str] = []


class FactcheckJobPublic(JobPublic):
    """The submitted job, plus the evidence status (``evidence.warning`` set when nothing can be found)."""

    evidence: EvidencePublic


class DocumentPublic(BaseModel):
    id: str
    url: str
    title: str
    date: str | None = None
    chunks: int
    chars: int
    preview: str
    shared: bool = True  # in the operator's shared corpus (read-only to ordinary keys), else the key's own


def _own_collection(corpus: str, key) -> str:
    """Where ``key`` adds and deletes documents of ``corpus``: the shared collection for an admin key, else
    the key's own (:func:`core.ownership.private_collection`), which only its fact-checks search."""
    from core.ownership import private_collection

    return corpus if is_admin(key) else private_collection(corpus, key.id)


def _status(corpus: str, key) -> dict[str, Any]:
    """The evidence a fact-check of ``key`` on ``corpus`` reaches: the shared corpus and the key's own documents."""
    from agents.defame.evidence import evidence_status
    from core.config import get_settings
    from core.vectorstore import get_vectorstore

    store = get_vectorstore()
    out = evidence_status(store, corpus, get_settings().defame).to_json()
    own = _own_collection(corpus, key)
    if own != corpus and (n := store.count(own)):
        out.update(chunks=out["chunks"] + n, warning=None, ways_out=[], empty=False)
    return out


@router.post("/factcheck", response_model=FactcheckJobPublic, status_code=status.HTTP_201_CREATED)
async def factcheck(
    key: ApiKeyDep,
    claim: Annotated[str, Form(max_length=5000, description="The claim text.")],
    images: Annotated[list[UploadFile], File(description="Images in the claim.")] = [],  # noqa: B006
    date: Annotated[str | None, Form(description="Claim date, YYYY-MM-DD.")] = None,
    author: Annotated[str | None, Form(max_length=300)] = None,
    benchmark: Annotated[str, Form()] = "default",
    corpus: Annotated[str, Form(max_length=200)] = "defame-default",
    max_iterations: Annotated[int, Form(ge=1, le=3)] = 3,
    verdict: Annotated[
        Literal["generate", "likelihood", "calibrated"],
        Form(description="Judge's option: generated (the paper) or scored by (calibrated) likelihood."),
    ] = "generate",
) -> JobPublic:
    from agents.defame.media import store_image

    if not claim.strip():
        raise HTTPException(422, "the claim text is empty")
    day = None
    if date:
        try:
            day = dt.date.fromisoformat(date.strip())
        except ValueError:
            raise HTTPException(422, f"malformed date {date!r}: use YYYY-MM-DD") from None
    if benchmark not in BENCHMARKS:
        raise HTTPException(422, f"unknown benchmark {benchmark!r}; choose one of {', '.join(BENCHMARKS)}")
    if len(images) > MAX_IMAGES:
        raise HTTPException(422, f"at most {MAX_IMAGES} images per claim")
    paths = []
    for f in images:
        img = await read_image(f)  # 413 / 415 on bad uploads
        try:
            paths.append(record_server_file(str(store_image(img.data)), owner=key.id))
        except ValueError as exc:
            raise HTTPException(415, str(exc)) from None
    params = {
        "claim": claim,
        "images": paths,
        "date": day.isoformat() if day else None,
        "author": author,
        "benchmark": benchmark,
        "corpus": corpus,
        "max_iterations": max_iterations,
        "verdict": verdict,
    }
    if not re.fullmatch(CORPUS_PATTERN, corpus):
        raise HTTPException(422, f"invalid corpus name {corpus!r}")
    evidence = _status(corpus, key)
    job, _ = submit("defame.check", params, key=key)
    return FactcheckJobPublic(**JobPublic.model_validate(job).model_dump(), evidence=EvidencePublic(**evidence))


@router.get("/evidence", response_model=EvidencePublic)
def evidence(key: ApiKeyDep, corpus: CorpusQuery = "defame-default") -> EvidencePublic:
    return EvidencePublic(**_status(corpus, key))


@router.get("/evidence/documents", response_model=list[DocumentPublic])
def documents(key: ApiKeyDep, corpus: CorpusQuery = "defame-default") -> list[DocumentPublic]:
    """The shared corpus's documents (``shared``), then the ones this key added (only the key sees those)."""
    from agents.defame.evidence import list_documents
    from core.vectorstore import get_vectorstore

    store, own = get_vectorstore(), _own_collection(corpus, key)
    rows = [DocumentPublic(**d) for d in list_documents(store, corpus)]
    if own != corpus:
        rows += [DocumentPublic(**d, shared=False) for d in list_documents(store, own)]
    return rows


@router.post("/evidence/documents", response_model=list[DocumentPublic], status_code=status.HTTP_201_CREATED)
async def add_documents(
    key: ApiKeyDep,
    files: Annotated[list[UploadFile], File(description="Text, Markdown or HTML documents (UTF-8).")],
    corpus: Annotated[str, Form(pattern=CORPUS_PATTERN)] = "defame-default",
    date: Annotated[str | None, Form(description="Publication date of these documents, YYYY-MM-DD.")] = None,
) -> list[DocumentPublic]:
    from agents.defame.evidence import MAX_DOCUMENT_BYTES, add_document
    from core.vectorstore import get_vectorstore

    if not files or len(files) > MAX_DOCUMENTS:
        raise HTTPException(422, f"send 1 to {MAX_DOCUMENTS} files")
    if date:
        try:
            dt.date.fromisoformat(date.strip())
        except ValueError:
            raise HTTPException(422, f"malformed date {date!r}: use YYYY-MM-DD") from None
    out, own = [], _own_collection(corpus, key)
    for f in files:
        data = await read_upload(f, max_bytes=MAX_DOCUMENT_BYTES)  # 413 when larger
        try:
            row = add_document(
                get_vectorstore(), own, filename=f.filename or "document.txt", data=data, date=date, corpus_label=corpus
            )
        except ValueError as exc:
            raise HTTPException(415, str(exc)) from None
        out.append(DocumentPublic(**row, shared=own == corpus))
    return out


@router.delete("/evidence/documents/{document_id}")
def delete_document(
    key: ApiKeyDep,
    document_id: Annotated[str, Path(pattern=r"^[0-9a-f]{16}$")],
    corpus: CorpusQuery = "defame-default",
) -> dict[str, str]:
    from agents.defame.evidence import delete_document as delete
    from core.vectorstore import get_vectorstore

    if not delete(get_vectorstore(), _own_collection(corpus, key), document_id):  # shared ones: admin keys only
        raise HTTPException(404, f"no document {document_id} in {corpus}")
    return {"deleted": document_id, "corpus": corpus}
