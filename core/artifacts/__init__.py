"""Content-addressed artifact files on disk (PNG images, plots, JSON, checkpoints)."""

from core.artifacts.store import ArtifactStore, StoredFile, get_artifact_store

__all__ = ["ArtifactStore", "StoredFile", "get_artifact_store"]
