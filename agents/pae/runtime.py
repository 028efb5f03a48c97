"""Per-process resources of rollout workers: the sites server and the policy checkpoints.

Each process (the orchestrator, every Celery worker) serves the sites itself on a
free loopback port; content is a pure function of the seed, so every process serves
identical sites. A policy is referenced by a small dict that travels in job params:

* ``{"kind": "model", "model": "<gateway model>"}`` — the base policy (or any hosted model);
* ``{"kind": "adapter", "sha256": "<artifact digest of the adapter archive>"}`` — a PAE
  update: the process merges it into a copy of the local model once and caches the
  transformers directory under ``<cache_dir>/pae/policies/`` for the gateway.
"""

from __future__ import annotations

import atexit
import logging
import threading
from pathlib import Path
from typing import Any

from agents.pae.sites.server import SiteServer
from core.config import get_settings

log = logging.getLogger(__name__)

_servers: dict[int, SiteServer] = {}
_lock = threading.Lock()


def sites_url(seed: int = 0) -> str:
    """Base URL of this process's sites server for ``seed`` (started on first use)."""
    with _lock:
        srv = _servers.get(seed)
        if srv is None:
            srv = SiteServer(seed=seed).start()
            _servers[seed] = srv
            if len(_servers) == 1:
                atexit.register(stop_sites)
        return srv.base_url


def stop_sites() -> None:
    with _lock:
        for srv in _servers.values():
            srv.stop()
        _servers.clear()


def policies_dir() -> Path:
    return Path(get_settings().cache_dir) / "pae" / "policies"


def base_policy_ref(model: str | None = None) -> dict[str, Any]:
    from agents.pae.policy import local_model_string

    return {"kind": "model", "model": model or local_model_string(None)}


def store_adapter(adapter_dir: Path) -> dict[str, Any]:
    """Archive an adapter into the artifact store; returns its policy reference."""
    from core.artifacts import get_artifact_store
    from methods.pae_learner.checkpoint import adapter_archive

    data = adapter_archive(adapter_dir)
    stored = get_artifact_store().put_bytes(data, name="adapter.tar.gz", mime="application/gzip")
    return {"kind": "adapter", "sha256": stored.sha256, "size": stored.size}


def adapter_ref(value: str) -> dict[str, Any]:
    """The policy reference of ``RunConfig.sft_adapter``: a stored adapter artifact's id, or a directory
    (already checked to lie inside the allowed roots by :func:`core.server_paths.inside_roots`)."""
    from core.server_paths import inside_roots, is_artifact_id

    if is_artifact_id(value):
        from core.db import crud
        from core.db.session import session_scope

        with session_scope() as s:
            row = crud.get_artifact(s, artifact_id=value)
            if row is None:
                raise ValueError(f"no artifact {value}")
            return {"kind": "adapter", "sha256": row.sha256, "size": row.size}
    return store_adapter(Path(inside_roots(value, kind="dir")))


_merge_lock = threading.Lock()


def policy_model(ref: dict[str, Any]) -> str:
    """The gateway model string of a policy reference (merging an adapter on first use)."""
    if ref.get("kind") == "model":
        return str(ref["model"])
    if ref.get("kind") != "adapter":
        raise ValueError(f"unknown policy reference {ref!r}")
    sha = str(ref["sha256"])
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise ValueError("bad adapter digest")
    out = policies_dir() / sha[:16]
    with _merge_lock:
        if not (out / ".complete").exists():
            import tempfile

            from core.artifacts import get_artifact_store
            from core.llm import get_local_model
            from methods.pae_learner.checkpoint import extract_adapter, merge_to_dir

            lm = get_local_model()
            with tempfile.TemporaryDirectory(prefix="pae-adapter-") as tmp:
                adapter = extract_adapter(get_artifact_store().read(sha), Path(tmp))
                merge_to_dir(lm.model, lm.tokenizer, adapter, out)
            log.info("merged policy %s into %s", sha[:12], out)
    from agents.pae.policy import local_model_string

    return local_model_string(str(out))
