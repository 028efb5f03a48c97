"""The shape of the house: layer contracts, deployment files, graph registry."""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import typer
import yaml

REPO = Path(__file__).resolve().parents[1]


def test_import_layers_hold():
    """ARCHITECTURE.md's layer rules, as import-linter contracts in pyproject.toml."""
    lint = Path(sys.executable).with_name("lint-imports")
    res = subprocess.run([str(lint)], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "broken" not in res.stdout.split("Contracts:")[-1].replace("0 broken", "")


def test_a_wrong_way_import_is_caught(tmp_path):
    """The contracts really bite: a kernel importing the platform breaks them."""
    bad = REPO / "paperworks_kernels" / "_contract_probe.py"
    bad.write_text("import core.config\n")
    try:
        lint = Path(sys.executable).with_name("lint-imports")
        res = subprocess.run([str(lint), "--no-cache"], cwd=REPO, capture_output=True, text=True, timeout=120)
        assert res.returncode != 0 and "kernels import nothing of ours BROKEN" in res.stdout
    finally:
        bad.unlink()


def test_our_top_level_packages_are_ours_alone():
    """No installed distribution ships a top-level module named like one of our packages.

    transformers 5.25 began to require Hugging Face's ``kernels``; our old top-level ``kernels``
    shadowed it and broke every ``transformers`` model import (and the other way round).
    """
    import importlib.metadata
    import tomllib

    ours = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
    owners = importlib.metadata.packages_distributions()
    clashes = {name: owners[name] for name in ours if set(owners.get(name, [])) - {"paperworks"}}
    assert not clashes, f"installed distributions also provide these top-level names: {clashes}"
    for name in ours:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None and Path(spec.origin).is_relative_to(REPO), (name, spec)


def _resolve_cli(args: list[str]) -> None:
    """Parse ``paperworks ARGS`` down to the leaf command without running it."""
    from services.cli.main import app

    cmd = typer.main.get_command(app)
    ctx = cmd.make_context("paperworks", list(args), resilient_parsing=False)
    while hasattr(cmd, "resolve_command"):  # a group (typer vendors its own click)
        protected = getattr(ctx, "protected_args", None) or getattr(ctx, "_protected_args", [])
        name, sub, rest = cmd.resolve_command(ctx, list(protected) + list(ctx.args))
        cmd = sub
        ctx = sub.make_context(name, rest, parent=ctx)


def test_compose_services_run_real_entrypoints():
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "chroma", "api", "worker-cpu", "worker-gpu", "ui"} <= set(services)
    gpu = services["worker-gpu"]
    assert gpu["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]
    assert "gpu" in gpu["command"] and "cpu" not in gpu["command"][gpu["command"].index("--queues") + 1]
    for name, svc in services.items():
        cmd = svc.get("command")
        if isinstance(cmd, list) and cmd and cmd[0] == "paperworks":
            _resolve_cli(cmd[1:])  # raises on an unknown command or option
            assert svc.get("build") or svc.get("image", "").startswith("paperworks"), name
    df = (REPO / "Dockerfile").read_text()
    assert "torch==2.13.0" in df and "pip install -e ." in df


def test_cli_resolver_rejects_unknown_commands():
    with pytest.raises(Exception, match="No such command"):
        _resolve_cli(["no-such-command"])
    with pytest.raises(Exception, match="No such option"):
        _resolve_cli(["worker", "--no-such-option", "x"])


def test_langgraph_json_graphs_load():
    spec = json.loads((REPO / "langgraph.json").read_text())
    assert spec["dependencies"] == ["."]
    for name, target in spec["graphs"].items():
        path, attr = target.split(":")
        modname = "agents." + ".".join(Path(path).with_suffix("").parts[1:]) if path.startswith("./agents") else None
        if modname:
            mod = importlib.import_module(modname)
        else:
            loader = importlib.util.spec_from_file_location(name, REPO / path)
            mod = importlib.util.module_from_spec(loader)
            loader.loader.exec_module(mod)
        graph = getattr(mod, attr)
        assert hasattr(graph, "invoke") and hasattr(graph, "get_graph"), f"{name} is not a compiled graph"


def test_readme_documents_the_two_commands_and_ci_runs_the_second():
    readme = (REPO / "README.md").read_text()
    ci = (REPO / ".ci" / "run").read_text()
    assert "make up" in readme and "make test" in readme
    assert "make test" in ci
    assert shlex.split("make test")  # the command exists in the Makefile too
    assert "\ntest:" in (REPO / "Makefile").read_text()
