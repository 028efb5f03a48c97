"""One source for every entry (issue #47): the CLI command, the API route, the UI form and the params model agree.

For every registered job, each field of its params model must appear

* in the generated CLI command (``paperworks <method> <job>``) with the same name (``--n-components``, or an
  argument), default, range and choices — or be filled by a declared upload, or fixed by the command;
* in the body schema of its generated API route ``POST /v1/<method>/<job>`` in the OpenAPI document, with the
  same default, bounds and enum;
* in the UI form built from the method's schema (``ui.components.schema_fields``), with the same default,
  bounds and choices.

Then a cross-field rule (SDR: d larger than the data's features) is refused with the same sentence by the
CLI and the API (the UI submits through the API and shows the API's sentence; its browser test is
tests/integration), listings print on stdout, and the hand-written CLI files stay small.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic.fields import FieldInfo
from typer.testing import CliRunner

from core.jobs import list_methods
from core.jobs.registry import MethodSpec

REPO = Path(__file__).resolve().parents[1]
MAX_OPTIONS = 30


# --- the model's view ----------------------------------------------------------------------------------
def _bounds(info: FieldInfo) -> tuple[float | None, float | None]:
    lo = hi = None
    for m in info.metadata:
        lo = next((v for k in ("ge", "gt") if (v := getattr(m, k, None)) is not None), lo)
        hi = next((v for k in ("le", "lt") if (v := getattr(m, k, None)) is not None), hi)
    return lo, hi


def _choices(info: FieldInfo) -> set[Any] | None:
    from services.cli.entries import choices

    c = choices(info)
    return set(c) if c else None


def _default(info: FieldInfo) -> Any:
    if info.is_required():
        return ...
    v = info.get_default(call_default_factory=True)
    return list(v) if isinstance(v, tuple) else v


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(float(a), float(b))
    return a == b


METHODS = list_methods()
IDS = [m.name for m in METHODS]


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    from services.api.main import create_app

    return create_app().openapi()


@pytest.fixture(scope="module")
def generated_paths() -> dict[str, list[str]]:
    from services.api.job_routes import job_routes
    from services.api.main import create_app

    return job_routes(create_app())


# --- the CLI --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_cli_command_has_every_field_with_the_models_default_and_range(spec: MethodSpec):
    from services.cli.entries import field_value, group_of, option_name

    group = group_of(spec.package)
    name, cmd = group.command_for(spec.name)
    entry = next((e for e in group.entries if e.method == spec.name and (not e.names or e.names[0] == name)), None)
    params = {p.name: p for p in cmd.params}
    uploads = {u.field: u for u in (entry.uploads if entry else ())}
    fixed = set(entry.fixed) | set(entry.hide) if entry else set()
    for field, info in spec.params_model.model_fields.items():
        where = f"paperworks {group.name} {name}: {field}"
        if field in uploads:
            assert uploads[field].dest in params, f"{where}: the upload {uploads[field].param} is missing"
            continue
        if field in fixed:
            assert field in entry.fixed or field in entry.hide, where
            continue
        assert field in params, f"{where}: no option"
        p = params[field]
        if p.param_type_name == "option":
            assert option_name(field) in p.opts or f"{option_name(field)}/--no-{field.replace('_', '-')}" in p.opts, (
                f"{where}: named {p.opts}"
            )
        model_default = _default(info)
        if model_default is ...:
            assert p.required, f"{where}: required in the model, optional here"
        else:
            got = p.default
            if got is not None and not isinstance(got, bool | int | float):  # lists, dicts, JSON as typed
                got = field_value(info, got)
            if isinstance(model_default, dict):
                assert got in (None, {}) or got == model_default, f"{where}: default {got!r} != {model_default!r}"
            elif not (model_default in (None, [], {}) and got in (None, [], {})):
                assert _same(got, model_default), f"{where}: default {got!r} != model {model_default!r}"
        lo, hi = _bounds(info)
        td = p.type_descriptor
        assert _same(td.parameter_info.min, lo) if lo is not None else td.parameter_info.min is None, where
        assert _same(td.parameter_info.max, hi) if hi is not None else td.parameter_info.max is None, where
        ch = _choices(info)
        if ch and typing.get_origin(info.annotation) is not list:
            shown = set(td.choices or ()) or set((p.metavar or "").split("|"))
            assert {str(c) for c in ch} == {str(c) for c in shown}, f"{where}: choices {shown} != {ch}"


# --- the API --------------------------------------------------------------------------------------------
def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _prop_view(root: dict[str, Any], prop: dict[str, Any]) -> dict[str, Any]:
    """default, bounds and enum of a JSON-schema property (through anyOf/$ref) of ``root``."""

    def deref(s: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in s:
            name = s["$ref"].rsplit("/", 1)[-1]
            s = (root.get("$defs") or root.get("components", {}).get("schemas", {}))[name]
        return s

    out = {"default": prop.get("default", ...)}
    parts = [deref(p) for p in prop.get("anyOf", [prop])]
    for p in parts:
        for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "enum", "const"):
            if k in p:
                out[k] = p[k]
        if "items" in p:
            items = deref(p["items"])
            if "enum" in items:
                out["items_enum"] = items["enum"]
    return out


@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_api_route_body_is_the_params_model(spec: MethodSpec, openapi, generated_paths):
    from services.api.job_routes import JOB_SUFFIX, method_path

    paths = generated_paths[spec.name]
    assert method_path(spec.name) in paths or method_path(spec.name) + JOB_SUFFIX in paths, paths
    model_schema = spec.json_schema()  # the model's schema as every entry serves it (factory defaults filled)
    for path in paths:
        op = openapi["paths"][path]["post"]
        assert {"201", "200", "401", "409", "413", "422"} <= set(op["responses"]), path
        names = {p["name"] for p in op.get("parameters", [])}
        assert {"Idempotency-Key", "idempotency_key"} <= names, f"{path}: no idempotency key"
        body = _resolve(openapi, op["requestBody"]["content"]["application/json"]["schema"])
        assert set(body["properties"]) == set(model_schema["properties"]), path
        assert set(body.get("required", [])) == set(model_schema.get("required", [])), path
        for field, prop in model_schema["properties"].items():
            want = _prop_view(model_schema, prop)
            got = _prop_view(openapi, body["properties"][field])
            assert got == want, f"POST {path} {field}: {got} != model {want}"


# --- the UI form ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", METHODS, ids=IDS)
def test_ui_form_fields_match_the_model(spec: MethodSpec):
    from ui.components import schema_fields

    fields = {f.name: f for f in schema_fields(spec.json_schema())}
    assert set(fields) == set(spec.params_model.model_fields)
    for name, info in spec.params_model.model_fields.items():
        f = fields[name]
        where = f"{spec.name} form: {name}"
        d = _default(info)
        assert f.required == (d is ...), where
        if d is not ... and not hasattr(d, "model_dump"):
            assert f.default == json.loads(json.dumps(d, default=str)), f"{where}: {f.default!r} != {d!r}"
        lo, hi = _bounds(info)
        assert _same(f.minimum if f.minimum is not None else f.exclusive_minimum, lo) or (lo is None), where
        assert _same(f.maximum if f.maximum is not None else f.exclusive_maximum, hi) or (hi is None), where
        ch = _choices(info)
        if ch and f.kind in ("enum", "list"):
            assert set(f.enum or ()) - {None} == ch, f"{where}: {f.enum} != {ch}"


# --- one sentence for a cross-field rule ------------------------------------------------------------------
SDR_SENTENCE = "n_components: d = 40 is larger than the 13 features of wine; choose d ≤ 13 (0 picks d by BIC)"


def test_sdr_d_larger_than_the_features_is_refused_with_one_sentence_everywhere(api_client):
    from methods.nonlinear_sdr.jobs import N_FEATURES, check_components
    from services.cli.main import app

    with pytest.raises(ValueError) as exc:
        check_components(40, N_FEATURES["wine"], "wine")
    assert str(exc.value) == SDR_SENTENCE
    # the CLI: the generated command and its `dataset` form; exit 2, the sentence, no job
    runner = CliRunner()
    for argv in (["sdr", "dataset", "wine", "--n-components", "40"], ["sdr", "fit", "--n-components", "40"]):
        r = runner.invoke(app, argv)
        assert r.exit_code == 2, r.output
        assert SDR_SENTENCE in " ".join(r.output.split()), r.output
    # the API: the generated route and POST /v1/jobs answer 422 with the same sentence (what the UI shows)
    before = api_client.get("/v1/jobs", params={"method": "nonlinear_sdr.fit"}).json()
    r = api_client.post("/v1/nonlinear_sdr/fit", json={"dataset": "wine", "n_components": 40})
    assert r.status_code == 422
    assert [e["msg"] for e in r.json()["errors"]] == [SDR_SENTENCE] and r.json()["detail"] == SDR_SENTENCE
    r = api_client.post("/v1/jobs", json={"method": "nonlinear_sdr.fit", "params": {"n_components": 40}})
    assert r.status_code == 422 and [e["msg"] for e in r.json()["detail"]["errors"]] == [SDR_SENTENCE]
    assert api_client.get("/v1/jobs", params={"method": "nonlinear_sdr.fit"}).json() == before
    # at the bound it is accepted
    assert api_client.post("/v1/nonlinear_sdr/fit", json={"dataset": "wine", "n_components": 13}).status_code == 201


RULES = [  # (method, params, CLI argv, API path): impossible combinations every entry refuses alike
    (
        "clinical_got.case",
        {"case_id": "case500", "n_cases": 133},
        ["clinical", "case", "case500"],
        "/v1/clinical/trace",
    ),
    (
        "rf.edit",
        {"digit_index": 3, "steps": 5, "inject": 9},
        ["rf", "edit", "--digit-index", "3", "--steps", "5", "--inject", "9"],
        "/v1/rf/edit",
    ),
]


@pytest.mark.parametrize("method,params,argv,path", RULES, ids=[r[0] for r in RULES])
def test_cross_field_rules_read_the_same_in_cli_and_api(method, params, argv, path, api_client):
    from core.jobs import get_method
    from core.jobs.registry import InvalidParams
    from services.cli.main import app

    with pytest.raises(InvalidParams) as exc:
        get_method(method).validate(params)
    (sentence,) = exc.value.sentences()
    r = CliRunner().invoke(app, argv)
    assert r.exit_code == 2 and sentence in " ".join(r.output.split()), r.output
    r = api_client.post(path, json=params)
    assert r.status_code == 422 and [e["msg"] for e in r.json()["errors"]] == [sentence]


def test_bundled_feature_counts_are_scikit_learns():
    from sklearn import datasets

    from methods.nonlinear_sdr.jobs import N_FEATURES

    assert {k: getattr(datasets, f"load_{k}")().data.shape[1] for k in N_FEATURES} == N_FEATURES


# --- listings on stdout; the hand-written CLI stays small ---------------------------------------------------
def test_methods_table_goes_to_stdout_and_json_parses():
    from services.cli.main import app

    r = CliRunner().invoke(app, ["methods"])
    assert r.exit_code == 0
    rows = [line for line in r.stdout.splitlines() if "sefe" in line]
    assert rows and "sefe.run" in rows[0] and "paperworks sefe run" in rows[0] and "POST /v1/sefe/run" in rows[0]
    listed = json.loads(CliRunner().invoke(app, ["methods", "--json"]).stdout)
    by_name = {m["name"]: m for m in listed}
    assert set(by_name) == {m.name for m in METHODS}
    assert by_name["nonlinear_sdr.fit"]["command"] == "paperworks sdr fit"
    # no description is cut: the table holds each one whole
    for m in METHODS:
        if m.description:
            assert m.description.split()[-1] in r.stdout, m.name


def test_paperworks_methods_piped_to_grep_finds_sefe():
    """The issue's command, in a shell: the table goes to stdout, one row per line."""
    r = subprocess.run(
        f"{sys.executable} -m services.cli.main methods | grep sefe",
        shell=True,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr
    assert "sefe.run" in r.stdout and "paperworks sefe run" in r.stdout


def test_hand_written_cli_files_declare_at_most_30_typer_options():
    files = sorted((REPO / "services" / "cli" / "commands").glob("*.py"))
    counts = {f.name: sum("typer.Option" in line for line in f.read_text().splitlines()) for f in files}
    assert sum(counts.values()) <= MAX_OPTIONS, counts
    # and no command module restates a job's fields: it runs its job through the generated command
    for f in files:
        assert not re.search(r"\brun_job\(", f.read_text()), f"{f.name} runs a job by hand"
