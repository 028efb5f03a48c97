"""Every page takes a job's inputs from its params model (ui.components.schema_form/schema_inputs), submits
only on its button, and follows jobs with the one shared follower (issue #47).

A typed input written by hand on a page is allowed only where a schema cannot say it (uploads, previews,
result views, a method's preset options); each one is listed here with the reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PAGES = Path(__file__).resolve().parents[2] / "ui" / "app_pages"
TYPED = {"number_input", "slider", "select_slider", "text_input", "text_area", "checkbox", "date_input"}
ALLOWED = {
    ("clinical_got", "select_slider", "Slice"): "a result view: which MRI slice to look at",
    ("continual", "text_area", "Options (JSON)"): "the chosen method's preset options (a schema per method)",
    ("evidence", "text_input", "Corpus"): "which evidence corpus to list (no job)",
    ("evidence", "date_input", "Published on (optional)"): "a document upload's date (no job)",
    ("gmail", "text_input", "Strengths (comma-separated, 0–2)"): "a preview of generated pairs (no job)",
    ("pae", "slider", "Step"): "a result view: the trajectory step shown",
    ("sefe", "slider", "X (% rewritten)"): "a preview of ASD rewriting (no job)",
    ("vlm", "number_input", "First image"): "the dataset browser's page (no job)",
}


def _calls(name: str) -> list[ast.Call]:
    tree = ast.parse((PAGES / f"{name}.py").read_text(encoding="utf-8"))
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def _pages() -> list[str]:
    return sorted(p.stem for p in PAGES.glob("*.py") if p.stem != "__init__")


def _label(call: ast.Call) -> str:
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "label"), None)
    return arg.value if isinstance(arg, ast.Constant) else ast.unparse(arg) if arg is not None else ""


def test_typed_inputs_come_from_the_params_schemas():
    found = {}
    for name in _pages():
        for call in _calls(name):
            attr = getattr(call.func, "attr", None)
            if attr in TYPED:
                found[(name, attr, _label(call))] = call.lineno
    unexplained = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not unexplained, (
        "inputs written by hand instead of schema_form/schema_inputs (add one to ALLOWED only for an upload, a "
        f"preview or a result view): {unexplained}"
    )
    assert set(ALLOWED) <= set(found), f"ALLOWED names inputs the pages no longer have: {set(ALLOWED) - set(found)}"


def test_every_job_page_builds_its_form_from_a_schema():
    no_job = {"evidence"}  # uploads documents, runs no job
    for name in _pages():
        if name in no_job:
            continue
        called = {getattr(c.func, "id", None) or getattr(c.func, "attr", None) for c in _calls(name)}
        assert called & {"schema_form", "schema_inputs"}, f"ui/app_pages/{name}.py builds no form from a schema"


def test_forms_submit_only_on_their_button():
    for name in _pages():
        for call in _calls(name):
            if getattr(call.func, "attr", None) == "form":
                kw = {k.arg: k.value for k in call.keywords}
                off = kw.get("enter_to_submit")
                assert isinstance(off, ast.Constant) and off.value is False, (
                    f"ui/app_pages/{name}.py:{call.lineno}: an st.form submits on Enter unless enter_to_submit=False"
                )


def test_one_job_follower():
    for name in _pages():
        tree = ast.parse((PAGES / f"{name}.py").read_text(encoding="utf-8"))
        defs = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
        assert "_follow" not in defs, f"ui/app_pages/{name}.py defines its own job follower; use follow_job"
        polls = [c.lineno for c in _calls(name) if ast.unparse(c.func).endswith("client.events")]
        assert not polls, f"ui/app_pages/{name}.py streams a job itself (lines {polls}); use follow_job"
