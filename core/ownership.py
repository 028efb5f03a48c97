"""Stored objects named in job params belong to a key: a key may name only its own (issue #48).

Some params name something already stored on the server: an uploaded image by its SHA-256
(``image_sha256``), a server file (DEFAME's ``images``, ``defame.batch``'s ``path``), a checkpoint made by
an earlier job (any4's ``checkpoint``), an adapter (PAE's ``sft_adapter``). Such a field declares what it
names in its JSON schema, ``Field(..., json_schema_extra=owned("upload"))``, and :func:`check_params`
(called by the API and the MCP server before a job is recorded) answers whether the submitting key owns
every value it names:

* ``upload`` — a SHA-256 in the artifact store: the key uploaded those bytes (:func:`record`), or one of its
  jobs produced an artifact of them;
* ``artifact`` — an artifact id: one of the key's jobs produced it;
* ``path`` — a server file or directory: inside the data directory (public data shipped with the project),
  or recorded for the key when the API stored it;
* ``artifact-or-path`` — an artifact id if it looks like one, else a path;
* anything else (``any4-checkpoint``) — recorded for the key, by the job that made it (:func:`record_for_job`).

The operator (owner ``"local"``: the CLI's in-process runs, MCP over stdio) and admin-scoped keys may name
anything. An object a key does not own answers exactly like one that does not exist.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

log = logging.getLogger(__name__)

OWNED = "x-paperworks-owned"
"""The JSON-schema key of a field naming a stored object; its value is the kind of object."""
LOCAL = "local"


class NotOwned(LookupError):
    """A param names a stored object the submitting key does not own (or that does not exist)."""

    def __init__(self, field: str, kind: str, value: str) -> None:
        self.field, self.kind, self.value = field, kind, value
        super().__init__(f"params.{field}: no {kind.replace('-', ' ')} {value!r}")


def owned(kind: str) -> dict[str, str]:
    """``json_schema_extra`` for a field that names a stored object of ``kind``."""
    return {OWNED: kind}


def record(kind: str, ref: str, *, owner: str) -> None:
    """Record that ``owner`` stored ``ref`` (an upload's digest, a server file's resolved path, a checkpoint id)."""
    from core.db import owned as q
    from core.db.session import session_scope

    with session_scope() as s:
        q.record(s, kind=kind, ref=_normal(kind, ref), owner=owner)


def record_for_job(kind: str, ref: str, job_id: str | None) -> None:
    """Record ``ref`` for the owner of job ``job_id`` (a job that made a checkpoint); no job: the operator's."""
    from core.db import owned as q
    from core.db.session import session_scope

    with session_scope() as s:
        owner = q.job_owner(s, job_id=job_id) if job_id else None
        q.record(s, kind=kind, ref=_normal(kind, ref), owner=owner or LOCAL)


def _normal(kind: str, ref: str) -> str:
    return str(Path(ref).expanduser().resolve()) if kind == "path" else ref


def _public_path(value: str) -> bool:
    from core.config import get_settings

    root = Path(get_settings().data_dir).expanduser().resolve()
    p = Path(value).expanduser().resolve()
    return p == root or p.is_relative_to(root)


def owns(kind: str, value: str, owner: str) -> bool:
    """Whether ``owner`` may name ``value``, a stored object of ``kind``."""
    from core.db import owned as q
    from core.db.session import session_scope
    from core.server_paths import is_artifact_id

    if kind == "artifact-or-path":
        kind = "artifact" if is_artifact_id(value) else "path"
    if kind == "path" and _public_path(value):
        return True
    with session_scope() as s:
        if kind == "upload":
            return q.owns_digest(s, sha256=value, owner=owner)
        if kind == "artifact":
            return q.artifact_owner(s, artifact_id=value) == owner
        return q.recorded(s, kind=kind, ref=_normal(kind, value), owner=owner)


def references(model: BaseModel, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """``(field path, kind, value)`` of every stored object the validated params name (nested models too)."""
    for name, info in type(model).model_fields.items():
        value = getattr(model, name, None)
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        kind = extra.get(OWNED)
        path = f"{prefix}{name}"
        items = value if isinstance(value, list | tuple) else [value]
        for i, item in enumerate(items):
            where = f"{path}.{i}" if isinstance(value, list | tuple) else path
            if kind and isinstance(item, str):
                yield where, str(kind), item
            elif isinstance(item, BaseModel):
                yield from references(item, f"{where}.")


def check_params(model: BaseModel, *, owner: str, admin: bool = False) -> None:
    """Raise :class:`NotOwned` for the first stored object the params name that ``owner`` does not own."""
    if admin or owner == LOCAL:
        return
    for field, kind, value in references(model):
        if not owns(kind, value, owner):
            log.info("refused params.%s: %s %r is not %s's", field, kind, value, owner)
            raise NotOwned(field, kind, value)


def private_collection(corpus: str, owner: str) -> str:
    """The Chroma collection holding the documents ``owner`` added to ``corpus`` (one per key and corpus).

    The collection named ``corpus`` itself is the operator's shared corpus (the CLI, admin keys); what an
    ordinary key adds through the API goes here, is listed and deleted by that key only, and is searched
    only by that key's fact-checks (beside the shared corpus).
    """
    from core.vectorstore import collection_name

    return collection_name(corpus, "key", _digest(owner))


def _digest(owner: str) -> str:
    import hashlib

    return hashlib.sha256(f"owner\x00{owner}".encode()).hexdigest()[:12]


def job_owner(job_id: str | None) -> str | None:
    """The owner of job ``job_id`` (``None`` for no job or an unknown one)."""
    if not job_id:
        return None
    from core.db import owned as q
    from core.db.session import session_scope

    with session_scope() as s:
        return q.job_owner(s, job_id=job_id)


def check(method: str, params: dict[str, Any] | None, *, owner: str, admin: bool = False) -> None:
    """:func:`check_params` on a method's params; params that do not validate are left to the submission."""
    from core.jobs.registry import InvalidParams, UnknownMethod, get_method

    try:
        model = get_method(method).validate(params)
    except (UnknownMethod, InvalidParams):
        return
    check_params(model, owner=owner, admin=admin)
