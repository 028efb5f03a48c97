"""The 89 WebArena map tasks (``shared/data/pae/``), re-targeted to the local MiniMap as a held-out test set.

Each line keeps its question and its string-match reference; the start URL (Google
Maps in the file) becomes ``/map/`` on the local sites server.
"""

from __future__ import annotations

import json
from pathlib import Path

from agents.pae.sites.base import SiteTask

FILENAME = "webarena_map_google_fixed_eval.jsonl"
MAX_LINE_BYTES = 20_000


def default_path(data_dir: Path) -> Path:
    return Path(data_dir) / "pae" / FILENAME


def load_map_tasks(path: Path) -> list[SiteTask]:
    """Parse the JSONL file; malformed lines raise (this is curated data, not model output)."""
    tasks: list[SiteTask] = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(f"{path}:{n}: line too long")
            d = json.loads(line)
            ref = dict(d.get("eval", {}).get("reference_answers") or {})
            if not ref:
                raise ValueError(f"{path}:{n}: no reference answers")
            tasks.append(
                SiteTask(
                    id=str(d["id"]),
                    site="map",
                    question=str(d["ques"]),
                    start_path="/map/",
                    reference=ref,
                    template="webarena-map",
                    proposer="heldout",
                )
            )
    return tasks
