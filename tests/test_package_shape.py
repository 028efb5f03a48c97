"""One package shape (docs/PLATFORM.md, "The package shape"; issue #47), checked on every method package.

A package that registers jobs (it has ``jobs.py``) reads the same way everywhere::

    config.py  (presets)  →  jobs.py  (params models + registration)  →  experiment.py  (runs, reproduction,
    fan-out)  →  report.py  (builds the Report, nothing else)

* where the package registers a reproducer, ``config.py``, ``report.py`` and ``experiment.py`` exist (for a
  graph's package in ``agents/<name>/``, in it or in its twin ``methods/<name>/``: a graph's reproduction runs
  the graph, so it stays in ``agents/``; its presets and Report builder may sit beside the method's other
  code); a package with jobs only (no reproducer) needs only ``jobs.py``;
* only ``jobs.py`` registers (``register_method`` / ``register_reproducer`` / ``register_component`` ...);
* no second home for job bodies or reproductions: no ``service.py``, ``run.py``, ``experiments.py``,
  ``jobs_impl.py``, ``runner.py``;
* arrows point one way: ``config.py`` imports none of the other three, ``report.py`` neither ``jobs.py``
  nor ``experiment.py``, ``experiment.py`` not ``jobs.py`` (function-level imports included);
* graphs in ``agents/<name>/`` (a ``graph.py``), everything else in ``methods/<name>/``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FORBIDDEN = ("service.py", "run.py", "experiments.py", "jobs_impl.py", "runner.py")
REGISTER = ("register_method", "register_reproducer", "register_component", "register_preparer", "register_learner")
ORDER = {"config": 0, "jobs": 3, "experiment": 2, "report": 1}  # who may import whom: higher imports lower


def _packages() -> list[Path]:
    out = []
    for layer in ("methods", "agents"):
        out += sorted(p.parent for p in (REPO / layer).glob("*/jobs.py"))
    return out


def _imports(path: Path, pkg: str) -> set[str]:
    """The sibling modules of ``pkg`` that ``path`` imports anywhere (function bodies included)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level == 1:
                out.add(mod.split(".")[0] if mod else "")
                if not mod:
                    out.update(a.name for a in node.names)
            elif mod.startswith(pkg + "."):
                out.add(mod[len(pkg) + 1 :].split(".")[0])
            elif mod == pkg:
                out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(pkg + "."):
                    out.add(a.name[len(pkg) + 1 :].split(".")[0])
    return out


def _registers(path: Path) -> bool:
    """Whether the module registers something when imported (a module-level call or decorator of REGISTER)."""

    def named(call: ast.AST) -> bool:
        f = call.func if isinstance(call, ast.Call) else call
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in REGISTER

    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if any(named(d) for d in node.decorator_list):
                return True
        elif any(isinstance(n, ast.Call) and named(n) for n in ast.walk(node)):
            return True
    return False


@pytest.mark.parametrize("pkg_dir", _packages(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_package_shape(pkg_dir: Path):
    pkg = f"{pkg_dir.parent.name}.{pkg_dir.name}"
    files = {p.name for p in pkg_dir.glob("*.py")}
    twin = REPO / "methods" / pkg_dir.name
    if pkg_dir.parent.name == "agents" and twin.is_dir():
        files |= {p.name for p in twin.glob("*.py")}
    problems = [f"{f}: a second home for job bodies (use jobs.py / experiment.py)" for f in FORBIDDEN if f in files]
    if "register_reproducer" in (pkg_dir / "jobs.py").read_text(encoding="utf-8"):
        missing = [f for f in ("config.py", "experiment.py", "report.py") if f not in files]
        problems += [f"registers a reproducer but has no {f}" for f in missing]
    for p in sorted(pkg_dir.glob("*.py")):
        if p.name != "jobs.py" and _registers(p):
            problems.append(f"{p.name} registers (only jobs.py may)")
    for name, rank in ORDER.items():
        path = pkg_dir / f"{name}.py"
        if not path.exists():
            continue
        for other in _imports(path, pkg) & set(ORDER):
            if other != name and ORDER[other] >= rank:
                problems.append(f"{name}.py imports {other}.py (arrows run config → report → experiment → jobs)")
    assert not problems, f"{pkg}: " + "; ".join(problems)


def test_graphs_live_in_agents_and_only_there():
    for layer in ("agents", "methods"):
        for pkg_dir in sorted(p for p in (REPO / layer).iterdir() if (p / "__init__.py").exists()):
            has_graph = (pkg_dir / "graph.py").exists()
            if layer == "agents":
                assert has_graph, f"agents/{pkg_dir.name} has no graph.py (non-graph code belongs in methods/)"
            else:
                assert not has_graph, f"methods/{pkg_dir.name}/graph.py: graphs live in agents/"
