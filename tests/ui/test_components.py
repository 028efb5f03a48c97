"""ui/components.py: the pure schema -> fields step, and (with Streamlit's AppTest, no server) the
schema form, the job follower and the markdown renderer against a scripted client kept in
session state."""

from __future__ import annotations

import enum
from typing import Literal

import pytest
from pydantic import BaseModel
from pydantic import Field as PField

from ui.components import Field, SchemaError, schema_fields

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


# --- schema_fields -----------------------------------------------------------------------------


class Colour(str, enum.Enum):
    red = "red"
    blue = "blue"


class Inner(BaseModel):
    a: int = 1


class Params(BaseModel):
    fmt: Literal["any4", "nf4", "int4"] = PField("nf4", description="Format.")
    group: Literal[32, 64, 128] = 64
    colour: Colour = Colour.blue
    windows: int = PField(4, ge=1, le=64)
    lr: float = PField(3e-4, gt=0, le=0.01)
    flag: bool = True
    prompts: list[str] = PField(["hi"], min_length=1, max_length=8)
    nfes: list[int] = [4, 10]
    sites: list[Literal["shop", "news"]] = ["news"]
    pairs: list[tuple[int, str]] = []
    pair: tuple[int, str] = (1, "a")
    inner: Inner = Inner()
    options: dict[str, float] = {}
    note: str | None = PField(None, max_length=20)
    limit: int | None = PField(None, ge=1, le=10)
    example: Literal["a.jpg", "b.jpg"] | None = None
    either: int | str = 3
    checkpoint: str


def _by_name(fields: list[Field]) -> dict[str, Field]:
    return {f.name: f for f in fields}


def test_every_property_becomes_a_field_in_schema_order():
    schema = Params.model_json_schema()
    assert [f.name for f in schema_fields(schema)] == list(schema["properties"])


def test_enums_including_integer_and_referenced_enum_classes():
    f = _by_name(schema_fields(Params.model_json_schema()))
    assert (f["fmt"].kind, f["fmt"].enum, f["fmt"].default, f["fmt"].help) == (
        "enum",
        ("any4", "nf4", "int4"),
        "nf4",
        "Format.",
    )
    assert (f["group"].kind, f["group"].enum, f["group"].default) == ("enum", (32, 64, 128), 64)
    assert (f["colour"].kind, f["colour"].enum, f["colour"].default) == ("enum", ("red", "blue"), "blue")


def test_numbers_with_bounds_and_booleans():
    f = _by_name(schema_fields(Params.model_json_schema()))
    w = f["windows"]
    assert (w.kind, w.minimum, w.maximum, w.default, w.required) == ("integer", 1, 64, 4, False)
    lr = f["lr"]
    assert (lr.kind, lr.minimum, lr.exclusive_minimum, lr.maximum, lr.default) == ("number", None, 0, 0.01, 3e-4)
    assert (f["flag"].kind, f["flag"].default) == ("boolean", True)


def test_arrays_scalar_lists_enum_lists_and_tuples():
    f = _by_name(schema_fields(Params.model_json_schema()))
    p = f["prompts"]
    assert (p.kind, p.item_kind, p.min_items, p.max_items, p.default) == ("list", "string", 1, 8, ["hi"])
    assert (f["nfes"].kind, f["nfes"].item_kind) == ("list", "integer")
    assert (f["sites"].kind, f["sites"].enum, f["sites"].default) == ("list", ("shop", "news"), ["news"])
    assert (f["pairs"].kind, f["pairs"].fallback) == ("json", "an array of array items")
    assert (f["pair"].kind, f["pair"].fallback, f["pair"].default) == ("json", "a tuple", [1, "a"])


def test_optional_anyof_null_and_the_json_fallback():
    f = _by_name(schema_fields(Params.model_json_schema()))
    note = f["note"]
    assert (note.kind, note.nullable, note.default, note.max_length, note.required) == ("string", True, None, 20, False)
    assert (f["limit"].kind, f["limit"].nullable, f["limit"].minimum, f["limit"].maximum) == ("integer", True, 1, 10)
    assert (f["example"].kind, f["example"].nullable, f["example"].enum) == ("enum", True, ("a.jpg", "b.jpg"))
    # nested model ($ref), free-form object, a union of two types: a JSON text area, saying why
    assert (f["inner"].kind, f["inner"].fallback, f["inner"].default) == ("json", "an object", {"a": 1})
    assert (f["options"].kind, f["options"].fallback) == ("json", "an object")
    assert (f["either"].kind, f["either"].fallback, f["either"].default) == ("json", "anyOf of 2 alternatives", 3)
    assert (f["checkpoint"].kind, f["checkpoint"].required, f["checkpoint"].default) == ("string", True, None)


def test_strict_refuses_what_only_a_json_area_can_hold():
    with pytest.raises(SchemaError, match=r"no widget for: .*inner \(an object\)"):
        schema_fields(Params.model_json_schema(), strict=True)

    class Flat(BaseModel):
        n: int = 1
        s: list[str] = []

    assert [f.kind for f in schema_fields(Flat.model_json_schema(), strict=True)] == ["integer", "list"]


def _obj(**props):
    return {"type": "object", "properties": props}


@pytest.mark.parametrize(
    "schema, needle",
    [
        ([], "must be a JSON object"),
        ({"type": "array"}, "type 'object'"),
        ({"type": "object", "properties": []}, "'properties' must be an object"),
        ({"type": "object", "properties": {}, "required": ["x"]}, r"required properties without a schema: \['x'\]"),
        (_obj(x="int"), "property 'x': its schema must be an object"),
        (_obj(x={"$ref": "#/$defs/Missing"}), "property 'x': \\$ref '#/\\$defs/Missing' does not resolve"),
        (_obj(x={"$ref": "https://example.org/s.json"}), "only local \\$ref"),
        (_obj(x={"type": "strnig"}), "unknown JSON type 'strnig'"),
        (_obj(x={"enum": []}), "enum must be a non-empty list"),
        (_obj(x={"enum": ["a", "b"], "default": "c"}), "default 'c' is not one of its enum"),
        (_obj(x={"type": "integer", "minimum": 1, "maximum": 5, "default": 9}), "default 9 is outside its bounds"),
        (_obj(x={"type": "number", "exclusiveMinimum": 0, "default": 0}), "default 0 is outside its bounds"),
        (_obj(x={"type": "integer", "minimum": 5, "maximum": 1}), "minimum 5 > maximum 1"),
        (_obj(x={"anyOf": [{"type": "null"}]}), "anyOf allows only null"),
        (_obj(x={"type": "array", "items": {"enum": ["a"]}, "default": ["b"]}), "outside its items enum"),
    ],
)
def test_malformed_schemas_raise_naming_the_property(schema, needle):
    with pytest.raises(SchemaError, match=needle):
        schema_fields(schema)


def test_type_lists_and_single_allof_are_understood():
    fields = schema_fields(
        {
            "type": "object",
            "$defs": {"N": {"type": "integer", "minimum": 0}},
            "properties": {
                "s": {"type": ["string", "null"]},
                "n": {"allOf": [{"$ref": "#/$defs/N"}], "default": 2},
                "u": {"type": ["string", "integer"]},
            },
        }
    )
    s, n, u = fields
    assert (s.kind, s.nullable) == ("string", True)
    assert (n.kind, n.minimum, n.default) == ("integer", 0, 2)
    assert (u.kind, u.fallback) == ("json", "a union of types ['string', 'integer']")


# --- schema_form ---------------------------------------------------------------------------------


def _form_app():
    import streamlit as st

    from ui.components import schema_form

    params = schema_form(st.session_state["schema"], key="t")
    if params is not None:
        st.session_state["submitted"] = params


def _form_test(schema):
    at = streamlit_testing.AppTest.from_function(_form_app, default_timeout=30)
    at.session_state["schema"] = schema
    return at.run()


def test_schema_form_renders_from_the_fields_and_submits_typed_params():
    class P(BaseModel):
        fmt: Literal["a", "b"] = "a"
        n: int = PField(4, ge=1, le=8)
        flag: bool = False
        nfes: list[int] = [4, 10]
        note: str | None = None
        limit: int | None = PField(None, ge=1)
        extra: dict[str, int] = {}

    at = _form_test(P.model_json_schema())
    assert not at.exception, at.exception
    assert at.selectbox(key="t-fmt").options == ["a", "b"]
    # the range is said below the input (the widget itself is unbounded, so a wrong value is explained, not ignored)
    assert "range: 1 to 8" in [c.value for c in at.caption]
    at.selectbox(key="t-fmt").set_value("b")
    at.number_input(key="t-n").set_value(6)
    at.checkbox(key="t-flag").check()
    at.text_area(key="t-nfes").input("2\n8")
    at.text_area(key="t-extra").input('{"k": 3}')
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    # the empty optional inputs (note, limit) are left to the API's defaults
    assert at.session_state["submitted"] == {"fmt": "b", "n": 6, "flag": True, "nfes": [2, 8], "extra": {"k": 3}}


def test_schema_form_bad_input_is_an_error_not_a_submission():
    class P(BaseModel):
        nfes: list[int] = [4]
        extra: dict[str, int] = {}

    at = _form_test(P.model_json_schema())
    at.text_area(key="t-nfes").input("4\nten")
    at.text_area(key="t-extra").input("{not json")
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    errors = " ".join(e.value for e in at.error)
    assert "nfes: every line must be an integer" in errors and "extra: not valid JSON" in errors
    assert "submitted" not in at.session_state


def test_labels_are_explicit_titles_or_the_field_names_and_descriptions_are_shown():
    class P(BaseModel):
        lam: float = PField(1.0, gt=0, description="λ of the penalty.")
        n_test: int = PField(10, ge=1, le=100, title="Test items", description="Held-out items.")

    f = _by_name(schema_fields(P.model_json_schema()))
    assert f["lam"].label == "lam"  # not pydantic's "Lam"
    assert f["n_test"].label == "Test items"
    at = _form_test(P.model_json_schema())
    assert not at.exception, at.exception
    assert [n.label for n in at.number_input] == ["lam", "Test items"]
    captions = [c.value for c in at.caption]
    assert "λ of the penalty. · range: more than 0" in captions
    assert "Held-out items. · range: 1 to 100" in captions


def test_an_out_of_range_value_is_said_visibly_and_blocks_the_button_saying_why():
    class P(BaseModel):
        n_components: int = PField(2, ge=0, le=50, description="d.")

    at = _form_test(P.model_json_schema())
    at.number_input(key="t-n_components").set_value(999)
    at.run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["n_components: must be 0 to 50 (got 999)."]
    button = at.button(key="t-submit")
    assert button.disabled
    assert any("is blocked until this is fixed: n_components: must be 0 to 50" in c.value for c in at.caption)
    assert "submitted" not in at.session_state
    at.number_input(key="t-n_components").set_value(3)
    at.run()
    assert not at.error and not at.button(key="t-submit").disabled
    at.button(key="t-submit").click()
    at.run()
    assert at.session_state["submitted"] == {"n_components": 3}


def test_changing_a_value_does_not_submit_only_the_button_does():
    class P(BaseModel):
        n: int = 4

    at = _form_test(P.model_json_schema())
    assert not [f for f in at.get("form")], "inputs in an st.form submit on Enter"
    at.number_input(key="t-n").set_value(5)
    at.run()  # what Enter in the field does: the value is set and the page reruns
    assert "submitted" not in at.session_state
    at.button(key="t-submit").click()
    at.run()
    assert at.session_state["submitted"] == {"n": 5}


def test_check_value_list_and_string_limits():
    from ui.components import check_value

    f = _by_name(schema_fields(Params.model_json_schema()))
    assert check_value(f["prompts"], []) == "prompts: needs at least 1 value(s) (got 0)."
    assert check_value(f["prompts"], ["a"] * 9) == "prompts: takes at most 8 value(s) (got 9)."
    assert check_value(f["note"], "x" * 21) == "note: at most 20 characters (got 21)."
    assert check_value(f["lr"], 0.0) == "lr: must be more than 0 and at most 0.01 (got 0)."
    assert check_value(f["lr"], 0.001) is None
    assert check_value(f["checkpoint"], None) == "checkpoint: required."
    assert check_value(f["limit"], None) is None


def test_api_errors_become_one_sentence_per_field():
    from ui.client import ApiError
    from ui.components import error_lines

    # POST /v1/jobs: detail is an object with the registry's errors
    submit = ApiError(
        422,
        {
            "message": "invalid params for nonlinear_sdr.fit: n_components: ...",
            "errors": [
                {"loc": ["n_components"], "msg": "Input should be less than or equal to 50", "type": "x"},
                {"loc": [], "msg": "Value error, d = 40 is larger than the 13 features of wine", "type": "value_error"},
            ],
        },
    )
    assert error_lines(submit, {"n_components": "Dimensions d"}) == [
        "Dimensions d: Input should be less than or equal to 50",
        "d = 40 is larger than the 13 features of wine",
    ]
    # a request body FastAPI refused: the errors are beside the detail text
    body = ApiError(422, "body.k: bad", [{"loc": ["body", "k"], "msg": "Input should be a valid integer"}])
    assert error_lines(body) == ["k: Input should be a valid integer"]
    # the registry's sentence alone (no structured list)
    plain = ApiError(422, "invalid params for m: a: too big; b: missing")
    assert error_lines(plain) == ["a: too big", "b: missing"]
    assert error_lines(ApiError(503, "the queue is down")) == ["the queue is down"]
    assert "{" not in str(submit)  # never a raw dict


def _error_app():
    import streamlit as st

    from ui.client import ApiError
    from ui.components import show_api_error

    show_api_error(
        ApiError(422, {"message": "m", "errors": [{"loc": ["n"], "msg": "too big"}, {"loc": ["k"], "msg": "bad"}]}),
        schema=st.session_state["schema"],
    )


def test_show_api_error_uses_the_forms_labels():
    class P(BaseModel):
        n: int = PField(1, title="Steps N")
        k: int = 1

    at = streamlit_testing.AppTest.from_function(_error_app, default_timeout=30)
    at.session_state["schema"] = P.model_json_schema()
    at.run()
    assert not at.exception, at.exception
    text = at.error[0].value
    assert "Steps N: too big" in text and "k: bad" in text and "{" not in text


class _ReadyClient:
    def __init__(self, ready):
        self.ready, self.asked = ready, []

    def readiness(self, method, params):
        self.asked.append((method, params))
        if self.ready:
            return {"ready": True}
        return {"ready": False, "notice": f"This {method} job first trains the digits RF model (about 160 s)."}


def _notice_app():
    import streamlit as st

    from ui.components import schema_form

    schema_form(
        st.session_state["schema"], key="t", client=st.session_state["client"], method="rf.edit", fixed={"x": 1}
    )


@pytest.mark.parametrize("ready", [False, True])
def test_a_job_that_first_trains_a_model_says_so_before_the_click(ready):
    class P(BaseModel):
        steps: int = 15

    client = _ReadyClient(ready)
    at = streamlit_testing.AppTest.from_function(_notice_app, default_timeout=30)
    at.session_state["schema"] = P.model_json_schema()
    at.session_state["client"] = client
    at.run()
    assert not at.exception, at.exception
    assert client.asked == [("rf.edit", {"steps": 15, "x": 1})]
    infos = [i.value for i in at.info]
    assert infos == ([] if ready else ["This rf.edit job first trains the digits RF model (about 160 s)."])


# --- follow_job ------------------------------------------------------------------------------------


class FakeClient:
    """Jobs by id; ``states`` is edited by the test between runs; calls are recorded."""

    def __init__(self, states):
        self.states = states
        self.cancelled: list[str] = []

    def job(self, job_id):
        from ui.client import ApiError

        if job_id not in self.states:
            raise ApiError(404, f"job {job_id} not found")
        return {"id": job_id, **self.states[job_id]}

    def cancel(self, job_id):
        self.cancelled.append(job_id)
        return {"id": job_id}

    def artifact(self, artifact_id):
        import io

        from PIL import Image

        buf = io.BytesIO()
        Image.new("L", (8, 8), 200).save(buf, format="PNG")
        return buf.getvalue()


def _follow_app():
    import streamlit as st

    from ui.components import follow_job

    args = st.session_state["args"]
    out = follow_job(st.session_state["client"], args.pop("ids"), **args)
    st.session_state["returned"] = out
    args["ids"] = st.session_state["ids"]


def _follow_test(client, ids, **kw):
    at = streamlit_testing.AppTest.from_function(_follow_app, default_timeout=30)
    at.session_state["client"] = client
    at.session_state["ids"] = ids
    at.session_state["args"] = {"ids": ids, **kw}
    return at.run()


def test_follow_job_shows_progress_log_and_cancel_then_returns_the_final_job():
    client = FakeClient({"j1": {"status": "running", "progress": 0.25, "message": "task 1/4 done"}})
    at = _follow_test(client, "j1", label="run", cancel="Cancel run", log=lambda m: "task" in m)
    assert not at.exception, at.exception
    assert at.session_state["returned"] is None
    assert (at.progress[0].value, at.progress[0].text) == (25, "run: running — task 1/4 done")
    client.states["j1"] = {"status": "running", "progress": 0.5, "message": "evaluating"}
    at.run()
    client.states["j1"] = {"status": "running", "progress": 0.5, "message": "task 2/4 done"}
    at.run()
    assert [c.value for c in at.caption] == ["✓ task 1/4 done", "✓ task 2/4 done"]  # "evaluating" filtered out
    at.button(key="follow-cancel-j1").click()
    at.run()
    assert client.cancelled == ["j1"]
    client.states["j1"] = {"status": "succeeded", "progress": 1.0, "message": "done"}
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["returned"] == {"id": "j1", "status": "succeeded", "progress": 1.0, "message": "done"}
    assert not at.progress and not at.button and not at.error


def test_follow_job_without_cancel_has_no_button():
    at = _follow_test(FakeClient({"j1": {"status": "queued", "progress": None, "message": ""}}), "j1")
    assert (at.progress[0].value, at.progress[0].text) == (0, "queued")
    assert not at.button


def test_follow_job_failed_job_shows_message_and_traceback():
    client = FakeClient(
        {"j1": {"status": "failed", "progress": 0.3, "message": "out of memory", "error": "Traceback ...\nMemoryError"}}
    )
    at = _follow_test(client, "j1", label="indexing")
    assert not at.exception, at.exception
    assert at.error[0].value == "indexing job failed: out of memory"
    assert at.expander[0].label == "Traceback" and "MemoryError" in at.code[0].value
    assert at.session_state["returned"]["status"] == "failed"


def test_follow_several_jobs_returns_those_that_ended():
    client = FakeClient(
        {
            "e": {"status": "succeeded", "progress": 1.0, "message": "done"},
            "r": {"status": "running", "progress": 0.5, "message": "NFE 10"},
        }
    )
    at = _follow_test(client, {"edit": "e", "recon": "r"})
    assert not at.exception, at.exception
    assert list(at.session_state["returned"]) == ["edit"]
    assert [p.text for p in at.progress] == ["recon: running — NFE 10"]
    client.states["r"] = {"status": "cancelled", "progress": 0.5, "message": "cancelled by user"}
    at.run()
    assert set(at.session_state["returned"]) == {"edit", "recon"}
    assert [e.value for e in at.error] == ["recon job cancelled: cancelled by user"]


def _stream_app():
    import streamlit as st

    from ui.components import follow_job

    st.session_state["returned"] = follow_job(st.session_state["client"], "j1", log=True)


class StreamingClient(FakeClient):
    """A client that pushes the job's states (``events``, as the API's SSE stream does)."""

    def __init__(self, states, pushed):
        super().__init__(states)
        self.pushed = pushed
        self.streamed: list[str] = []

    def events(self, job_id, timeout=30.0):
        self.streamed.append(job_id)
        for state in self.pushed:
            self.states[job_id] = state
            yield {"id": job_id, **state}


def test_follow_job_redraws_from_pushed_events_until_the_end():
    pushed = [
        {"status": "running", "progress": 0.5, "message": "task 1/2 done"},
        {"status": "running", "progress": 0.75, "message": "task 2/2 done"},
        {"status": "succeeded", "progress": 1.0, "message": "done"},
    ]
    client = StreamingClient({"j1": {"status": "queued", "progress": 0.0, "message": ""}}, pushed)
    at = streamlit_testing.AppTest.from_function(_stream_app, default_timeout=30)
    at.session_state["client"] = client
    at.run()
    assert not at.exception, at.exception
    assert client.streamed == ["j1"]  # pushed, not polled
    assert at.session_state["returned"] == {"id": "j1", "status": "succeeded", "progress": 1.0, "message": "done"}
    assert at.session_state["follow-log-j1"][:2] == ["task 1/2 done", "task 2/2 done"]  # each pushed state drawn


def test_follow_job_unreadable_job_is_an_error():
    at = _follow_test(FakeClient({}), "nope")
    assert not at.exception, at.exception
    assert at.error[0].value == "Cannot read job nope: job nope not found"
    assert at.session_state["returned"] is None


# --- markdown_with_images --------------------------------------------------------------------------


def _markdown_app():
    import streamlit as st

    from ui.components import markdown_with_images

    shown: set[str] = set()
    markdown_with_images(
        st.session_state["client"],
        st.session_state["text"],
        {"a.png": {"name": "a.png", "id": "id-a"}, "b.png": {"name": "b.png"}},
        shown=shown,
    )
    st.session_state["shown"] = shown


def test_markdown_with_images_resolves_artifact_refs():
    at = streamlit_testing.AppTest.from_function(_markdown_app, default_timeout=30)
    at.session_state["client"] = FakeClient({})
    at.session_state["text"] = "Before.\n\n![the plot](artifact:a.png)\n\nMiddle.\n\n![](artifact:b.png)\n\nAfter."
    at.run()
    assert not at.exception, at.exception
    texts = [m.value.strip() for m in at.main if getattr(m, "type", None) in ("markdown", "caption")]
    assert texts == ["Before.", "Middle.", "(image `b.png` is not stored)", "After."]
    images = [e for e in at.main if getattr(e, "type", None) == "image"]
    assert len(images) == 1 and "the plot" in str(images[0].proto)
    assert at.session_state["shown"] == {"a.png"}
