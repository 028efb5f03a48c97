"""Where browser tests save their screenshots: a temporary folder, never the tracked ``docs/screenshots``.

``make test`` must leave the work tree as it found it. The tracked pictures in ``docs/screenshots`` are
refreshed on purpose, by ``make screenshots`` (it runs the browser tests with
``PAPERWORKS_REFRESH_SCREENSHOTS=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
REFRESH = "PAPERWORKS_REFRESH_SCREENSHOTS"


def screenshot_path(name: str, tmp_dir: str | Path) -> Path:
    """``tmp_dir/name`` (a test's temporary folder), or ``docs/screenshots/name`` when refreshing on purpose."""
    folder = DOCS if os.environ.get(REFRESH) == "1" else Path(tmp_dir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name
