"""The CLI progress sink prints plain lines when stderr is not a terminal."""

from __future__ import annotations

import io

from rich.console import Console

from services.cli import progress


def test_plain_lines_when_not_a_terminal(monkeypatch):
    buf = io.StringIO()
    monkeypatch.setattr(progress, "console", Console(file=buf, force_terminal=False, width=200))
    with progress.progress_bar("reproduce x") as update:
        update(0.0, "loading")
        update(0.01, "loading")  # same message, < 5 % further: no line
        update(0.2, "loading")  # same message, 20 % further: a line
        update(0.21, "training")  # new message: a line
        update(1.0, "training")
    lines = buf.getvalue().splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("reproduce x:   0.0%") and lines[0].endswith("loading")
    assert "20.0%" in lines[1] and "training" in lines[2] and "100.0%" in lines[3]
