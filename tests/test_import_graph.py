"""No import circles among our modules, function-level imports included (issue #47).

Every module of core, services, agents, methods, paperworks_kernels and ui is parsed with ``ast``; every
``import``/``from ... import`` anywhere in it (module level, inside functions and classes, under
``TYPE_CHECKING``) becomes an edge to the module it names (``from a.b import c`` names ``a.b.c`` when that
is a module, else ``a.b``; relative imports are resolved). A strongly connected component of more than one
module is a circle: two modules that need each other, however late one of them imports the other. A circle
is broken by moving the shared piece down a layer or into its own module, not by hiding the import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOPS = ("core", "services", "agents", "methods", "paperworks_kernels", "ui")

Graph = dict[str, dict[str, tuple[Path, int]]]


def modules(root: Path, tops: Iterable[str]) -> dict[str, Path]:
    """Dotted module name → file, for every ``.py`` under the top-level packages (packages by their ``__init__``)."""
    out = {}
    for top in tops:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root: Path = REPO, tops: Iterable[str] = TOPS) -> Graph:
    """module → {imported module: (file, line of the first such import)}, our modules only, every import."""
    known = modules(root, tops)
    graph: Graph = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, tuple[Path, int]] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
            for target in targets:
                hit = _resolve(target, known)
                if hit is not None and hit != name:
                    edges.setdefault(hit, (path, node.lineno))
        graph[name] = edges
    return graph


def circles(graph: Graph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            advanced = False
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(graph[w])))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _describe(graph: Graph, component: list[str]) -> str:
    members = set(component)
    lines = [" <-> ".join(component)]
    for a in component:
        for b, (path, line) in sorted(graph[a].items()):
            if b in members:
                lines.append(
                    f"    {a} -> {b}  ({path.relative_to(REPO) if path.is_relative_to(REPO) else path}:{line})"
                )
    return "\n".join(lines)


def test_no_import_circles_function_level_imports_included():
    graph = import_graph()
    assert len(graph) > 500  # every module was parsed
    found = circles(graph)
    assert not found, f"{len(found)} import circle(s):\n" + "\n".join(_describe(graph, c) for c in found)


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_a_circle_through_a_function_level_import_is_found(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/jobs.py": "from pkg.config import PRESETS\n\ndef run():\n    from pkg.report import build\n",
            "pkg/report.py": "def build():\n    from pkg.jobs import Params\n",
            "pkg/config.py": "PRESETS = {}\n",
            "pkg/sub/__init__.py": "",
            "pkg/sub/a.py": "from . import b\n",
            "pkg/sub/b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..sub import a\n",
            "pkg/ok.py": "import pkg.config\nfrom pkg import config\n",
        },
    )
    graph = import_graph(tmp_path, ["pkg"])
    assert circles(graph) == [["pkg.jobs", "pkg.report"], ["pkg.sub.a", "pkg.sub.b"]]
    assert set(graph["pkg.ok"]) == {"pkg.config"}
    assert graph["pkg.report"]["pkg.jobs"][1] == 2  # the line of the function-level import
    text = _describe(graph, ["pkg.jobs", "pkg.report"])
    assert "pkg.jobs -> pkg.report" in text and "pkg.report -> pkg.jobs" in text


def test_moving_the_shared_piece_down_breaks_the_circle(tmp_path):
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/params.py": "class Params: ...\n",
            "pkg/jobs.py": "from pkg.params import Params\n\ndef run():\n    from pkg.report import build\n",
            "pkg/report.py": "def build():\n    from pkg.params import Params\n",
        },
    )
    assert circles(import_graph(tmp_path, ["pkg"])) == []
