"""No test writes into the tracked docs/screenshots: ``make test`` leaves the work tree as it found it.

Browser tests save screenshots through ``tests/screenshots.py`` (a temporary folder unless
``make screenshots`` asks for a refresh)."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
# a path into docs/screenshots built in a test: "docs" / "screenshots", "docs/screenshots", os.path.join(..)
_DOCS_PATH = re.compile(
    r"""["']docs["']\s*/\s*["']screenshots["']|docs/screenshots|["']docs["']\s*,\s*["']screenshots["']"""
)


def test_no_test_builds_a_path_into_docs_screenshots():
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("screenshots.py", Path(__file__).name):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _DOCS_PATH.search(line) and not line.lstrip().startswith("#"):
                offenders.append(f"{path.relative_to(TESTS)}:{n}: {line.strip()}")
    assert not offenders, "save screenshots with tests/screenshots.py:screenshot_path:\n" + "\n".join(offenders)


def test_screenshots_go_to_a_temporary_folder_unless_refreshing(tmp_path, monkeypatch):
    from tests.screenshots import DOCS, REFRESH, screenshot_path

    monkeypatch.delenv(REFRESH, raising=False)
    assert screenshot_path("x.png", tmp_path) == tmp_path / "x.png"
    monkeypatch.setenv(REFRESH, "1")
    assert screenshot_path("x.png", tmp_path) == DOCS / "x.png"
