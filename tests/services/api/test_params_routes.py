"""Method-specific routes take their fields from the method's params models (form and JSON, OpenAPI included)."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from core.db.models import Job
from core.db.session import session_scope


@pytest.fixture(scope="module")
def openapi() -> dict:
    from services.api.main import create_app

    return create_app().openapi()


def _properties(openapi: dict, schema: dict) -> dict:
    """A schema's properties, following $ref and allOf."""
    if "$ref" in schema:
        schema = openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    props = dict(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        props.update(_properties(openapi, part))
    return props


def _body(openapi: dict, path: str, media: str) -> dict:
    return _properties(openapi, openapi["paths"][path]["post"]["requestBody"]["content"][media]["schema"])


@pytest.mark.parametrize(
    "path,model_name", [("/v1/rf/edit", "EditParams"), ("/v1/rf/reconstruct", "ReconstructParams")]
)
def test_rf_forms_carry_every_params_field_with_its_default(openapi, path, model_name):
    from methods.rf_solver import jobs
    from services.api.routes.rf_solver import UPLOAD_REPLACES

    model = getattr(jobs, model_name)
    props = _body(openapi, path, "multipart/form-data")
    expected = set(model.model_fields) - set(UPLOAD_REPLACES)
    assert expected <= set(props), expected - set(props)
    assert "image" in props and not set(UPLOAD_REPLACES) & set(props)
    for name in expected:
        default = model.model_fields[name].default
        assert props[name].get("default") == default, name
        assert props[name].get("description") == model.model_fields[name].description, name


def test_rf_edit_form_keeps_enums_and_bounds(openapi):
    props = _body(openapi, "/v1/rf/edit", "multipart/form-data")
    assert props["order"]["enum"] == [1, 2]
    assert props["model"]["enum"] == ["auto", "digits", "photo", "tiny"]
    assert (props["steps"]["minimum"], props["steps"]["maximum"]) == (1, 100)
    assert "offload" in props  # the hand-written form used to leave it out


def test_pae_run_body_is_the_train_params_model(openapi):
    from agents.pae.jobs import TrainParams

    props = _body(openapi, "/v1/webagent/runs", "application/json")
    assert set(props) == set(TrainParams.model_fields)
    assert props["iterations"]["default"] == TrainParams.model_fields["iterations"].default
    assert props["reward"]["enum"] == ["oracle", "llm", "random"]


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (16, 16)).save(buf, format="PNG")
    return buf.getvalue()


def _params(job_id: str) -> dict:
    with session_scope() as s:
        return dict(s.get(Job, job_id).params)


def test_rf_form_fields_reach_the_job(api_client):
    r = api_client.post(
        "/v1/rf/edit",
        files={"image": ("d.png", _png(), "image/png")},
        data={"source_label": "1", "target_label": "7", "order": "1", "offload": "true", "guidance": "3.5"},
    )
    assert r.status_code == 201, r.text
    p = _params(r.json()["id"])
    assert (p["order"], p["offload"], p["guidance"], p["steps"], p["shift"]) == (1, True, 3.5, 15, True)
    r = api_client.post(
        "/v1/rf/reconstruct", files={"image": ("d.png", _png(), "image/png")}, data={"label": "3", "nfes": ["8", "4"]}
    )  # repeated fields work as well as "8,4"
    assert r.status_code == 201, r.text
    assert _params(r.json()["id"])["nfes"] == [4, 8]
    r = api_client.post("/v1/rf/edit", files={"image": ("d.png", _png(), "image/png")}, data={"guidance": "99"})
    assert r.status_code == 422 and "guidance" in r.text


def test_pae_run_body_is_validated_before_submission(api_client):
    bad = api_client.post("/v1/webagent/runs", json={"reward": "vibes"})
    assert bad.status_code == 422 and "reward" in bad.text
    bad = api_client.post("/v1/webagent/runs", json={"iterations": -1})
    assert bad.status_code == 422 and "iterations" in bad.text


def test_form_model_refuses_unknown_exclusions():
    from methods.rf_solver.jobs import EditParams
    from services.api.forms import form_model

    with pytest.raises(ValueError, match="no fields"):
        form_model(EditParams, exclude=["image"])
