"""Discovered CLI and API plug-in modules are named after the package they serve (or are generic)."""

from __future__ import annotations

import pkgutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {p.parent.name for root in ("methods", "agents") for p in (REPO / root).glob("*/__init__.py")}
GENERIC = {
    "api": {"jobs", "methods", "health", "artifacts", "agent_protocol", "examples", "readiness"},
    "cli": set(),
}


def _modules(pkg: str) -> list[str]:
    import importlib

    return [m.name for m in pkgutil.iter_modules(importlib.import_module(pkg).__path__)]


@pytest.mark.parametrize("kind,pkg", [("api", "services.api.routes"), ("cli", "services.cli.commands")])
def test_plugin_files_are_named_after_packages(kind, pkg):
    names = _modules(pkg)
    assert names, pkg
    stray = sorted(set(names) - PACKAGES - GENERIC[kind])
    assert not stray, f"{pkg}: {stray} match no package in methods/ or agents/ ({sorted(PACKAGES)})"


def test_renamed_plugins_keep_their_public_names():
    from typer.main import get_command

    from services.api.main import create_app
    from services.cli.main import app

    groups = set(get_command(app).commands)
    assert {"rf", "pae", "lms3", "continual"} <= groups and "rf_solver" not in groups
    paths = set(create_app().openapi()["paths"])
    assert {"/v1/webagent/runs", "/v1/webagent/sites", "/v1/rf/edit", "/v1/rf/reconstruct"} <= paths
