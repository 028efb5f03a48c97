"""Artifact files on local disk, addressed by their SHA-256.

The database keeps a row per artifact (name, kind, mime, size, owner job); this
module only writes and reads bytes. Files are stored as
``<artifact_dir>/<sha[:2]>/<sha>`` so identical files are stored once.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from core.config import get_settings
from core.lazy import locked_cache


@dataclass(frozen=True)
class StoredFile:
    """Where the bytes of one artifact went."""

    sha256: str
    path: Path
    size: int
    mime: str


class ArtifactStore:
    """Write-once store of files under one root directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def put_bytes(self, data: bytes, *, name: str = "", mime: str | None = None) -> StoredFile:
        """Store ``data`` (atomically) and return where it went."""
        sha = hashlib.sha256(data).hexdigest()
        path = self.root / sha[:2] / sha
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        return StoredFile(sha, path, len(data), mime or guess_mime(name))

    def put_file(self, src: Path, *, mime: str | None = None) -> StoredFile:
        return self.put_bytes(Path(src).read_bytes(), name=Path(src).name, mime=mime)

    def path_for(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError("not a sha256 digest")
        return self.root / sha256[:2] / sha256

    def read(self, sha256: str) -> bytes:
        return self.path_for(sha256).read_bytes()


def guess_mime(name: str) -> str:
    mime, _ = mimetypes.guess_type(name)
    return mime or "application/octet-stream"


@locked_cache(maxsize=4)
def _store(root: str) -> ArtifactStore:
    return ArtifactStore(Path(root))


def get_artifact_store() -> ArtifactStore:
    """The store under the configured artifact directory."""
    return _store(str(get_settings().artifact_dir))
