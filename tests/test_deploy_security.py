"""Deployment promises of docs/SECURITY.md that live in configuration files (issue #27 item 7)."""

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def test_compose_publishes_the_login_less_ui_on_loopback_only():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    ui = compose["services"]["ui"]
    assert ui["environment"]["PAPERWORKS_API_KEY"]  # it acts with a built-in key ...
    assert ui["ports"] and all(str(p).startswith("127.0.0.1:") for p in ui["ports"])  # ... so: host only
