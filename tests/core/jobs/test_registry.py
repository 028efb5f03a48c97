"""The method registry: registration, discovery, parameter validation, schemas, reproducers."""

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from core.jobs import (
    InvalidOptions,
    InvalidParams,
    JobContext,
    Report,
    ReproducerOptions,
    UnknownMethod,
    get_method,
    get_reproducer,
    list_methods,
    list_reproducers,
    null_context,
    register_method,
    register_preparer,
    register_reproducer,
    registry,
    registry_snapshot,
)


class _P(BaseModel):
    n: int = Field(2, ge=1, le=5)
    name: str = Field("x", max_length=3)


def _echo(params: _P, progress: JobContext) -> Report:
    """Echo the params."""
    return Report(title="echo", metrics={"n": params.n})


@pytest.fixture(scope="module", autouse=True)
def _test_methods():
    with registry_snapshot():
        register_method("test.echo", title="Echo", queue="gpu")(_echo)
        yield


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
    with registry_snapshot(), pytest.raises(TypeError):

        @register_method("test.bad")
        def bad(params: dict, progress) -> Report:  # noqa: ARG001
            return Report(title="x")


def test_registry_snapshot_restores_every_table():
    before = ({m.name for m in list_methods()}, {r.name for r in list_reproducers()}, set(registry._PREPARERS))
    with registry_snapshot():
        register_method("test.temp")(_echo)
        register_reproducer("test_temp")(lambda options, progress: Report(title="t"))
        register_preparer("test.temp")(lambda: "ok")
        assert "test.temp" in {m.name for m in list_methods()} and get_reproducer("test_temp")
        del registry._METHODS["test.echo"]  # removals are undone too
    after = ({m.name for m in list_methods()}, {r.name for r in list_reproducers()}, set(registry._PREPARERS))
    assert after == before and "test.echo" in after[0]


class _Opts(ReproducerOptions):
    PRESETS = {"small": {"n": 2, "label": "s"}, "big": {"n": 40, "label": "b"}}
    preset: Literal["small", "big"] = "small"
    n: int = Field(1, ge=1, le=100)
    label: str = "none"
    flag: bool = False


def _repro(options: _Opts, progress: JobContext) -> Report:
    progress(0.5, "half")
    r = Report(title=f"n={options.n} label={options.label}")
    r.add_file("data.json", f'{{"n": {options.n}}}', kind="json")
    return r


def test_reproducer_presets_fill_unset_fields_and_unknown_options_fail():
    with registry_snapshot():
        register_reproducer("test_repro", options=_Opts)(_repro)
        spec = get_reproducer("test_repro")
        assert spec.validate({}).n == 2
        assert spec.validate({"preset": "big"}).model_dump() == {"preset": "big", "n": 40, "label": "b", "flag": False}
        assert spec.validate({"preset": "big", "n": 3}).n == 3  # the user's value wins over the preset
        with pytest.raises(InvalidOptions, match="nn: unknown option; known: flag, label, n, preset"):
            spec.validate({"nn": 3})
        with pytest.raises(InvalidOptions, match="invalid options for reproduce test_repro: n:"):
            spec.validate({"n": "many"})
        with pytest.raises(InvalidOptions, match="preset"):
            spec.validate({"preset": "huge"})
        assert (
            spec.validate({"preset": "big", "n": 3, "flag": True}).cli_options() == " -o preset=big -o n=3 -o flag=true"
        )
        assert spec.json_schema()["properties"]["preset"]["enum"] == ["small", "big"]


def test_reproducer_run_writes_name_md_and_its_folder(tmp_path):
    with registry_snapshot():
        register_reproducer("test_repro", options=_Opts, description="A test.")(_repro)
        spec = get_reproducer("test_repro")
        assert spec.description == "A test."
        seen = []
        path = spec.run(tmp_path / "out", JobContext(lambda f, m: seen.append(m)), {"n": 7})
        assert path == tmp_path / "out" / "test_repro.md"
        assert "n=7 label=s" in path.read_text()
        assert (tmp_path / "out" / "test_repro" / "data.json").read_text() == '{"n": 7}'
        assert seen == ["half"]
        with pytest.raises(InvalidOptions):
            spec.run(tmp_path / "bad", null_context(), {"n": 0})
        assert not (tmp_path / "bad").exists()


def test_reproducer_contract_is_enforced():
    class Loose(BaseModel):
        n: int = 1

    with registry_snapshot():
        with pytest.raises(TypeError, match="extra='forbid'"):
            register_reproducer("test_loose", options=Loose)
        with pytest.raises(TypeError, match="pydantic"):
            register_reproducer("test_dict", options=dict)  # type: ignore[arg-type]
        register_reproducer("test_path")(lambda options, progress: "docs/results/x.md")
        with pytest.raises(TypeError, match="not a Report"):
            get_reproducer("test_path").run(__import__("pathlib").Path("/nonexistent"), null_context())


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
