"""Every registered method and reproducer honours the platform's contract.

For each job type and each ``paperworks reproduce`` experiment: the default params
validate (or the required fields are exactly the schema's ``required``), the JSON schema
renders, a description exists, the UI form builds from the schema, and the CLI's
``run``/``reproduce`` help works.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from core.jobs import list_methods, list_reproducers, load_all
from core.jobs.registry import ReproducerOptions

load_all()
METHODS = [m.name for m in list_methods()]
REPRODUCERS = [r.name for r in list_reproducers()]
EXPECTED_REPRODUCERS = {
    "any4", "clinical_got", "defame", "dor", "double_filter", "dpcr", "ecolevels", "fourier_mamba", "gmail", "lada",
    "lms3", "long_short_alignment", "m3_jepa", "medcog", "nonlinear_sdr", "pae", "patch_scaling", "rf_solver",
    "rf_solver_ablation", "sefe", "vlm",
}  # fmt: skip


def _schema_fields():
    """``ui.components.schema_fields`` (a pure function; the module imports streamlit)."""
    components = pytest.importorskip("ui.components", reason="the UI's schema_fields needs streamlit installed")
    return components.schema_fields


def _defaults_or_required(model: type, schema: dict) -> None:
    try:
        model.model_validate({})
    except ValidationError as exc:
        errors = exc.errors()
        missing = {str(e["loc"][0]) for e in errors if e["type"] == "missing"}
        # a whole-model rule ("give exactly one of a, b, c") is a requirement the schema cannot express
        whole_model = [e for e in errors if not e["loc"]]
        other = [e for e in errors if e["loc"] and e["type"] != "missing"]
        assert not other, f"{model.__name__}: defaults fail for another reason than required fields: {exc}"
        assert missing == set(schema.get("required", [])), (model.__name__, missing, schema.get("required"))
        assert all(len(e["msg"]) > 20 for e in whole_model), whole_model


def test_discovery_finds_every_package():
    assert EXPECTED_REPRODUCERS <= set(REPRODUCERS)
    assert len(METHODS) >= 10


@pytest.mark.parametrize("name", METHODS)
def test_method_contract(name):
    from core.jobs import get_method

    spec = get_method(name)
    assert spec.description.strip(), f"{name} has no description"
    schema = spec.json_schema()
    assert schema.get("type") == "object"
    _defaults_or_required(spec.params_model, schema)
    fields = _schema_fields()(schema)
    assert {f.name for f in fields} == set(schema.get("properties", {}))


@pytest.mark.parametrize("name", REPRODUCERS)
def test_reproducer_contract(name):
    from core.jobs import InvalidOptions, get_reproducer

    spec = get_reproducer(name)
    assert spec.description.strip(), f"reproducer {name} has no description"
    assert issubclass(spec.options_model, ReproducerOptions)
    assert spec.options_model.model_config.get("extra") == "forbid"
    schema = spec.json_schema()
    assert schema.get("type") == "object"
    _defaults_or_required(spec.options_model, schema)
    with pytest.raises(InvalidOptions, match="unknown option"):
        spec.validate({"no_such_option_xyz": 1})
    if spec.options_model.PRESETS:
        presets = schema["properties"]["preset"]["enum"]
        assert set(presets) == set(spec.options_model.PRESETS), f"{name}: preset field vs PRESETS"
        for preset in presets:
            spec.validate({"preset": preset})
    fields = _schema_fields()(schema)
    assert {f.name for f in fields} == set(schema.get("properties", {}))


@pytest.mark.parametrize("name", METHODS)
def test_cli_run_help(name):
    from services.cli.main import app

    res = CliRunner().invoke(app, ["run", name, "--help"])
    assert res.exit_code == 0, res.output
    assert "METHOD" in res.output


@pytest.mark.parametrize("name", REPRODUCERS)
def test_cli_reproduce_lists_options(name):
    from core.jobs import get_reproducer
    from services.cli.main import app

    res = CliRunner().invoke(app, ["reproduce", name, "--list-options"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for field in get_reproducer(name).options_model.model_fields:
        assert field in res.output


def test_cli_reproduce_rejects_bad_options(tmp_path):
    from services.cli.main import app

    res = CliRunner().invoke(
        app, ["reproduce", "lms3", "--out", str(tmp_path), "-o", "speed=2"], env={"COLUMNS": "200"}
    )
    assert res.exit_code == 2
    assert "speed: unknown option" in res.output
    assert not list(tmp_path.iterdir())
