"""``paperworks mcp``: options reach the transports; bad options exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner


@pytest.fixture
def calls(monkeypatch):
    from core.db import migrate
    from services.mcp import transports

    seen: list[tuple[str, dict]] = []
    monkeypatch.setattr(migrate, "upgrade", lambda *a, **k: seen.append(("migrate", {})))
    monkeypatch.setattr(transports, "serve_stdio", lambda **kw: seen.append(("stdio", kw)))
    monkeypatch.setattr(transports, "serve_http", lambda **kw: seen.append(("http", kw)))
    return seen


def test_mcp_command_wiring(calls):
    from services.cli.main import app

    runner = CliRunner()
    assert runner.invoke(app, ["mcp"]).exit_code == 0
    r = runner.invoke(app, ["mcp", "--transport", "http", "--port", "8123", "--dispatch", "queue"])
    assert r.exit_code == 0, r.output
    assert calls == [
        ("migrate", {}),
        ("stdio", {"dispatch": "inline"}),
        ("migrate", {}),
        ("http", {"host": "127.0.0.1", "port": 8123, "dispatch": "queue"}),
    ]
    assert runner.invoke(app, ["mcp", "--transport", "sse"]).exit_code == 2
    assert runner.invoke(app, ["mcp", "--dispatch", "celery"]).exit_code == 2
