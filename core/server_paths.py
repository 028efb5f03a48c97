"""Server-side paths named in job params must stay inside the app's data roots.

A job param that names a file or directory on the server (PAE's ``sft_adapter``, DEFAME's image
paths and dataset file) is read by the worker with the server's permissions — and, for an adapter,
packed into the artifact store where the client can download it. Unchecked, ``/etc`` or the app
home (its database holds the API keys' hashes) could be exfiltrated that way.

:func:`inside_roots` accepts a path only when it resolves (symlinks followed) inside one of
:func:`allowed_roots`: the artifact store, the data directory and ``<home>/uploads``. An artifact
id (32 hex digits) is accepted as such, for params that take stored artifacts.
"""

from __future__ import annotations

import re
from pathlib import Path

from core.config import get_settings

ARTIFACT_ID = re.compile(r"^[0-9a-f]{32}$")


def allowed_roots() -> list[Path]:
    s = get_settings()
    roots = [s.artifact_dir, s.data_dir, Path(s.home) / "uploads"]
    return [Path(r).expanduser().resolve() for r in roots if r is not None]


def is_artifact_id(value: str) -> bool:
    return bool(ARTIFACT_ID.match(value))


def inside_roots(value: str, *, kind: str = "any", allow_artifact_id: bool = False) -> str:
    """The resolved path (or the artifact id); ``ValueError`` naming the allowed roots otherwise.

    ``kind``: ``"dir"``, ``"file"`` or ``"any"`` (must exist either way).
    """
    if allow_artifact_id and is_artifact_id(value):
        return value
    if "\x00" in value:
        raise ValueError("a path may not contain NUL")
    p = Path(value).expanduser()
    if not p.is_absolute():
        raise ValueError(f"{value}: give an absolute path inside {', '.join(map(str, allowed_roots()))}")
    resolved = p.resolve()
    roots = allowed_roots()
    if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
        what = " or an artifact id" if allow_artifact_id else ""
        raise ValueError(f"{value}: server paths must lie inside {', '.join(map(str, roots))}{what}")
    if kind == "dir" and not resolved.is_dir():
        raise ValueError(f"{value}: no such directory")
    if kind == "file" and not resolved.is_file():
        raise ValueError(f"{value}: no such file")
    if kind == "any" and not resolved.exists():
        raise ValueError(f"{value}: no such file or directory")
    return str(resolved)
