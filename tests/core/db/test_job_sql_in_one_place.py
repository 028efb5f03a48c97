"""Issue #48 part 4: every statement on the job tables lives in ``core/db``, behind one interface.

Before, a job's state changed along two paths: ``core.db.crud`` and raw PostgreSQL statements built
inside ``core/jobs/lifecycle.py`` on a second engine. These tests read the source (``ast``) of every
application module and fail where job-table SQL is built outside ``core/db``:

* a job-table model (``Job``, ``ReportRow``, ``ArtifactRow``) used as anything but a type annotation
  (``select(Job…)``, ``Job.status == …``, ``Job.__table__``, ``Job(...)`` added to a session, ``s.get(Job, …)``);
* a SQL string naming one of those tables (``UPDATE jobs``, ``FROM reports``, …);
* any ``sqlalchemy`` import in ``core/jobs`` (the lifecycle talks to the job store only).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
SCANNED = ("core", "services", "agents", "methods", "ui", "bench")
JOB_MODELS = {"Job", "ReportRow", "ArtifactRow"}
MODEL_MODULES = {"core.db.models", "core.db"}
SQL_ON_JOB_TABLES = re.compile(
    r"\b(?:SELECT\b.*\bFROM|UPDATE|INSERT\s+INTO|DELETE\s+FROM|JOIN|LISTEN\s+ON)\s+\"?(?:jobs|reports|artifacts)\b",
    re.DOTALL,
)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module and of its classes and functions (prose, not SQL)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _type_only(tree: ast.AST) -> set[int]:
    """ids of the nodes inside annotations and inside subscripts (``Callable[[Job], None]``): types, not SQL."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg | ast.AnnAssign) and node.annotation is not None:
            roots.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.returns is not None:
            roots.append(node.returns)
        elif isinstance(node, ast.Subscript):
            roots.append(node.slice)
    return {id(n) for r in roots for n in ast.walk(r)}


def job_sql_offences(path: Path) -> list[str]:
    """Where ``path`` builds SQL on the job tables (empty when it does not)."""
    rel = path.relative_to(REPO).as_posix()
    tree = ast.parse(path.read_text(), filename=rel)
    models: set[str] = set()  # local names bound to job-table model classes
    modules: set[str] = set()  # local names bound to core.db.models
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in MODEL_MODULES:
            models |= {a.asname or a.name for a in node.names if a.name in JOB_MODELS}
            if node.module == "core.db":
                modules |= {a.asname or a.name for a in node.names if a.name == "models"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname for a in node.names if a.name == "core.db.models" and a.asname}
        if rel.startswith("core/jobs/") and isinstance(node, ast.Import | ast.ImportFrom):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            if any(n == "sqlalchemy" or n.startswith("sqlalchemy.") for n in names):
                out.append(f"{rel}:{node.lineno}: imports sqlalchemy")
    docs, types = _docstrings(tree), _type_only(tree)
    for node in ast.walk(tree):
        if id(node) in types:
            continue
        if isinstance(node, ast.Name) and node.id in models and isinstance(node.ctx, ast.Load):
            out.append(f"{rel}:{node.lineno}: uses the model {node.id}")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in JOB_MODELS
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
        ):
            out.append(f"{rel}:{node.lineno}: uses the model {node.attr}")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docs
            and SQL_ON_JOB_TABLES.search(node.value)
        ):
            out.append(f"{rel}:{node.lineno}: SQL on a job table: {node.value[:60]!r}")
    return sorted(out, key=lambda o: int(o.split(":")[1]))


def _application_modules() -> list[Path]:
    files = [p for top in SCANNED for p in sorted((REPO / top).rglob("*.py"))]
    return [p for p in files if not p.relative_to(REPO).as_posix().startswith("core/db/")]


def test_job_table_sql_lives_only_in_core_db():
    offences = [o for p in _application_modules() for o in job_sql_offences(p)]
    assert offences == [], "job-table SQL outside core/db:\n" + "\n".join(offences)


def test_the_checker_catches_each_kind_of_offence(tmp_path, monkeypatch):
    """The scan is not vacuous: each pattern the old lifecycle used is caught, annotations are not."""
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    bad = tmp_path / "core" / "jobs" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        '"""SELECT * FROM jobs in a docstring is prose."""\n'
        "from sqlalchemy import update\n"
        "from core.db.models import Job, ReportRow\n"
        "from core.db import models as m\n"
        "def f(s, job: Job) -> Job:\n"
        "    s.get(Job, job.id).heartbeat_at = None\n"
        "    s.execute(update(ReportRow.__table__))\n"
        "    s.add(m.Job(method='x'))\n"
        "    return s.execute('UPDATE jobs SET status = 1')\n"
    )
    found = job_sql_offences(bad)
    assert [o.split(": ", 1)[1] for o in found] == [
        "imports sqlalchemy",
        "uses the model Job",
        "uses the model ReportRow",
        "uses the model Job",
        "SQL on a job table: 'UPDATE jobs SET status = 1'",
    ], found
    ok = tmp_path / "services" / "ok.py"
    ok.parent.mkdir(parents=True)
    ok.write_text(
        "from collections.abc import Callable\n"
        "from core.db.models import Job\n"
        "Sender = Callable[[Job], None]\n"
        "def send(job: Job) -> None:\n"
        "    '''UPDATE jobs in prose.'''\n"
    )
    assert job_sql_offences(ok) == []
