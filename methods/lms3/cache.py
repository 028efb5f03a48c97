"""A small append-only JSONL cache for expensive per-prompt results (gold NLL, decodes).

The experiment's NLL and decoding results are keyed by model hash and the exact
prompt and gold text, so an interrupted ``paperworks reproduce lms3`` resumes
without recomputing, and identical prompts across arms are scored once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class ResultCache:
    """``get/put`` of JSON values by a hashed key, persisted to one JSONL file (or memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = Path(path) if path else None
        self._data: dict[str, Any] = {}
        self._lock = threading.Lock()
        if self.path and self.path.exists():
            with self.path.open(encoding="utf-8") as fh:
                for line in fh:
                    try:
                        row = json.loads(line)
                        self._data[row["k"]] = row["v"]
                    except (ValueError, KeyError):  # a torn last line after a crash
                        continue
            log.info("loaded %d cached results from %s", len(self._data), self.path)

    @staticmethod
    def key(*parts: str) -> str:
        h = hashlib.sha256()
        for p in parts:
            h.update(p.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()[:32]

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def put(self, key: str, value: Any) -> None:
        with self._lock:
            self._data[key] = value
            if self.path:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps({"k": key, "v": value}) + "\n")

    def __len__(self) -> int:
        return len(self._data)
