"""A scripted stand-in for :class:`ui.client.ApiClient`, for page tests.

Streamlit's ``AppTest.from_function`` runs a page as a script of its own, so a test cannot hand it
objects: the scripted answers live in files next to ``base`` and the calls the page makes are
written back beside them.

* ``base``: the report (JSON) every job returns; ``base.schema``: the params schema of ``method``;
* ``base.get.json`` (optional): ``{path: answer}`` for ``get``; a path not in it is a 404;
* ``base.png``: the bytes of every artifact and image;
* recorded: the last ``post`` as ``{"path", "json"}`` in ``base.posted``, the last ``get_bytes`` path in
  ``base.preview``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ui.client import ApiError


class ScriptedClient:
    def __init__(self, base: str, method: str) -> None:
        self.base, self.method = base, method

    def _read(self, suffix: str) -> Any:
        return json.loads(Path(self.base + suffix).read_text())

    def methods(self) -> list[dict[str, Any]]:
        return [{"name": self.method, "params_schema": self._read(".schema")}]

    def post(self, path: str, json: Any = None, files: Any = None, data: Any = None) -> dict[str, Any]:
        Path(self.base + ".posted").write_text(_dumps({"path": path, "json": json}))
        return {"id": "job-1"}

    def get(self, path: str, **params: Any) -> Any:
        answers = self._read(".get.json") if Path(self.base + ".get.json").exists() else {}
        if path not in answers:
            raise ApiError(404, f"no scripted answer for GET {path}")
        return answers[path]

    def get_bytes(self, path: str) -> bytes:
        Path(self.base + ".preview").write_text(path)
        return Path(self.base + ".png").read_bytes()

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

    def report(self, job_id: str) -> Any:
        return self._read("")

    def artifact(self, artifact_id: str) -> bytes:
        return Path(self.base + ".png").read_bytes()


def _dumps(value: Any) -> str:
    return json.dumps(value)
