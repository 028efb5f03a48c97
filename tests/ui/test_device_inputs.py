"""The UI's one device / mixed-precision input (``ui.components.device_inputs``).

* its choices are ``core.device``'s;
* ``schema_form`` over a torch job's schema shows them last (also when ``only`` leaves them out)
  and submits only values other than the defaults;
* every page of a torch method uses it (directly or through ``schema_form``);
* a hand-written page passes the choice on to the job it submits.
"""

from __future__ import annotations

import ast
import json
import typing
from pathlib import Path

import pytest
from pydantic import BaseModel
from pydantic import Field as PField

from core.device import AmpName, DeviceName, DeviceParams
from ui.components import AMPS, DEVICES

streamlit_testing = pytest.importorskip("streamlit.testing.v1")

PAGES = Path(__file__).resolve().parents[2] / "ui" / "app_pages"
# pages whose jobs are torch jobs (tests/test_devices.py: not in NO_TORCH)
TORCH_PAGES = {
    "any4", "continual", "dor", "double_filter", "fourier_mamba", "gmail", "lada", "lms3", "long_short_alignment",
    "m3_jepa", "nonlinear_sdr", "pae", "patch_scaling", "rf_solver", "sefe", "vlm",
}  # fmt: skip


def test_the_choices_are_core_devices():
    assert DEVICES == typing.get_args(DeviceName) and DEVICES[0] == DeviceParams.model_fields["device"].default
    assert AMPS == typing.get_args(AmpName) and AMPS[0] == DeviceParams.model_fields["amp"].default


def test_every_torch_page_offers_a_device():
    for name in sorted(TORCH_PAGES):
        tree = ast.parse((PAGES / f"{name}.py").read_text(encoding="utf-8"))
        called = {getattr(n.func, "id", None) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert called & {"device_inputs", "schema_form", "schema_inputs"}, f"ui/app_pages/{name}.py: no device input"


class _TorchParams(DeviceParams):
    steps: int = PField(4, ge=1, le=8)
    note: str = "x"


def _form_app():
    import streamlit as st

    from ui.components import schema_form

    params = schema_form(st.session_state["schema"], key="t", only=st.session_state.get("only"), columns=2)
    if params is not None:
        st.session_state["submitted"] = params


def _form(only=None):
    at = streamlit_testing.AppTest.from_function(_form_app, default_timeout=30)
    at.session_state["schema"] = _TorchParams.model_json_schema()
    at.session_state["only"] = only
    return at.run()


@pytest.mark.parametrize("only", [None, ["steps"]])
def test_schema_form_shows_the_device_last_and_submits_only_changes(only):
    at = _form(only)
    assert not at.exception, at.exception
    labels = [w.label for w in at.main if getattr(w, "label", None) and w.type != "button"]
    assert labels[-2:] == ["Device", "Mixed precision"], labels
    assert at.selectbox(key="t-device").options == list(DEVICES)
    assert at.selectbox(key="t-amp").options == list(AMPS)
    at.button[0].click()
    at.run()
    first = at.session_state["submitted"]
    assert "device" not in first and "amp" not in first and first["steps"] == 4
    at.selectbox(key="t-device").set_value("cuda")
    at.selectbox(key="t-amp").set_value("bf16")
    at.button[0].click()
    at.run()
    assert not at.exception, at.exception
    second = at.session_state["submitted"]
    assert second["device"] == "cuda" and second["amp"] == "bf16" and second["steps"] == 4


def test_a_schema_without_a_device_gets_no_device_input():
    class Plain(BaseModel):
        steps: int = 3

    at = streamlit_testing.AppTest.from_function(_form_app, default_timeout=30)
    at.session_state["schema"] = Plain.model_json_schema()
    at.run()
    assert not at.exception, at.exception
    assert not [s for s in at.selectbox if s.label == "Device"]


def _vlm_app():
    import os

    from ui.app_pages import vlm
    from ui.testing import ScriptedClient

    class Client(ScriptedClient):
        def submit(self, method, params, idempotency_key=None):
            return self.post("/v1/jobs", json={"method": method, "params": params})

    vlm._train(Client(os.environ["VLM_DEVICE_FIXTURE"], "vlm.train"))


def test_a_hand_written_page_passes_the_device_to_its_job(tmp_path, monkeypatch):
    from core.jobs import get_method

    base = tmp_path / "fixture.json"
    base.write_text(json.dumps({"title": "t", "body": {}, "markdown": ""}))
    (tmp_path / "fixture.json.schema").write_text(json.dumps(get_method("vlm.train").json_schema()))
    monkeypatch.setenv("VLM_DEVICE_FIXTURE", str(base))
    at = streamlit_testing.AppTest.from_function(_vlm_app, default_timeout=30)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="vlm-train-device").set_value("auto")
    at.button(key="vlm-train-submit").click()
    at.run()
    posted = json.loads((tmp_path / "fixture.json.posted").read_text())
    assert posted["json"]["method"] == "vlm.train"
    assert posted["json"]["params"] == {"preset": "default", "retrain": False, "threads": 1, "device": "auto"}
