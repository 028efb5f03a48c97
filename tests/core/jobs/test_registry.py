"""The method registry: registration, discovery, parameter validation, schemas."""

import pytest
from pydantic import BaseModel, Field

from core.jobs import (
    InvalidParams, JobContext, Report, UnknownMethod, get_method, list_methods, register_method,
)


class _P(BaseModel):
    n: int = Field(2, ge=1, le=5)
    name: str = Field("x", max_length=3)


@register_method("test.echo", title="Echo", queue="gpu")
def _echo(params: _P, progress: JobContext) -> Report:
    """Echo the params."""
    return Report(title="echo", metrics={"n": params.n})


def test_registered_method_is_listed_with_schema():
    spec = get_method("test.echo")
    assert spec.queue == "gpu" and spec.title == "Echo" and spec.description == "Echo the params."
    assert spec.json_schema()["properties"]["n"]["maximum"] == 5
    assert "test.echo" in [m.name for m in list_methods()]


def test_discovery_finds_platform_methods():
    names = {m.name for m in list_methods()}
    assert {"llm.complete", "diag.sleep"} <= names


def test_validation_errors_name_the_field():
    spec = get_method("test.echo")
    assert spec.validate({"n": 3}).n == 3
    with pytest.raises(InvalidParams) as exc:
        spec.validate({"n": 9, "name": "toolong"})
    assert "n:" in str(exc.value) and "name:" in str(exc.value)


def test_unknown_method_lists_known_ones():
    with pytest.raises(UnknownMethod) as exc:
        get_method("nope.nothing")
    assert "llm.complete" in str(exc.value)


def test_params_model_must_be_pydantic():
    with pytest.raises(TypeError):
        @register_method("test.bad")
        def bad(params: dict, progress) -> Report:  # noqa: ARG001
            return Report(title="x")


def test_progress_context_maps_subranges_and_cancels():
    seen = []
    cancel = {"flag": False}

    def sink(frac, msg):
        seen.append((round(frac, 3), msg))
        return cancel["flag"]

    ctx = JobContext(sink, min_interval_s=0)
    ctx.sub(0.5, 1.0)(0.5, "half of second half")
    assert seen[-1] == (0.75, "half of second half")
    list(ctx.sub(0.0, 0.5).iter([1, 2], "item"))
    assert seen[-1] == (0.5, "item 2/2")
    cancel["flag"] = True
    from core.jobs import JobCancelled

    with pytest.raises(JobCancelled):
        ctx(1.0, "done")
