"""The Streamlit page, run with Streamlit's AppTest against a recording fake of the API client."""

import io

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("L", (16, 16), 128).save(buf, format="PNG")
    return buf.getvalue()


class FakeClient:
    def __init__(self):
        self.submitted = []

    def methods(self):
        from core.jobs import get_method

        return [{"name": "rf.edit", "params_schema": get_method("rf.edit").json_schema()}]

    def submit(self, method, params, idempotency_key=None):
        self.submitted.append((method, params))
        return {"id": f"job-{method}"}

    def post(self, path, json=None, files=None, data=None):
        self.submitted.append((path, data))
        return {"id": f"job-{path}"}

    def job(self, job_id):
        return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

    def report(self, job_id):
        if "edit" in job_id:
            arts = [{"name": n, "id": n, "kind": "image"} for n in ("source.png", "reconstruction.png", "edit.png")]
            return {
                "body": {
                    "title": "RF-Edit: 3 → 8",
                    "summary": "ok",
                    "artifacts": arts,
                    "metrics": {
                        "recon_psnr": 31.5,
                        "recon_ssim": 0.99,
                        "recon_mse": 7e-4,
                        "edit_mse_to_source": 0.05,
                        "edit_ssim_to_source": 0.4,
                        "recon_nfe": 60,
                        "edit_nfe": 60,
                        "cached_v_tensors": 12,
                        "cache_mb": 0.1,
                        "edit_seconds": 0.2,
                    },
                }
            }
        return {
            "body": {
                "artifacts": [{"name": "recon_vs_nfe.png", "id": "p", "kind": "plot"}],
                "tables": [{"columns": ["solver", "NFE"], "rows": [["Euler", 8], ["RF-Solver-2", 8]]}],
            }
        }

    def artifact(self, artifact_id):
        return _png()


def _script():
    from ui.app_pages import rf_solver

    rf_solver.render()


@pytest.fixture
def fake(monkeypatch):
    from ui.app_pages import rf_solver

    client = FakeClient()
    monkeypatch.setattr(rf_solver, "get_client", lambda: client)
    return client


def test_page_submits_edit_and_reconstruction_and_shows_results(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    assert not at.exception
    at.number_input(key="rf-src-digit_index").set_value(12)
    at.number_input(key="rf-steps").set_value(10)
    at.run()
    at.number_input(key="rf-inject").set_value(4)
    at.button(key="rf-go").click().run()
    assert not at.exception
    (m1, edit), (m2, recon) = fake.submitted
    assert m1 == "rf.edit" and m2 == "rf.reconstruct"
    assert edit == {
        "digit_index": 12,
        "source_label": "3",
        "target_label": "8",
        "steps": 10,
        "inject": 4,
        "order": 2,
        "guidance": 2.0,
        "model": "digits",
        "shift": True,
        "v_keys": "interval",
        "cfg_halves": "both",
        "blocks": "all",
        "offload": False,
    }
    assert recon["nfes"] == [4, 10, 20, 50] and recon["label"] == "3"
    text = " ".join(c.value for c in at.caption)
    assert "PSNR 31.5 dB" in text and "MSE to source 5.00e-02" in text
    assert any("Reconstruction error vs NFE" in m.value for m in at.markdown)


def test_example_photo_uses_photo_labels_and_shift_warning(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    at.radio(key="rf-kind").set_value("Example photo").run()
    assert at.selectbox(key="rf-src-label").options == ["china", "flower"]
    at.checkbox(key="rf-shift").uncheck().run()
    assert any("invert badly" in w.value for w in at.warning)
    at.button(key="rf-go").click().run()
    method, params = fake.submitted[0]
    assert params["example"] == "boy.jpg" and params["target_label"] == "flower" and params["shift"] is False


def test_page_sends_the_ablation_options(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    at.selectbox(key="rf-v_keys").set_value("eval")
    at.selectbox(key="rf-cfg_halves").set_value("cond")
    at.selectbox(key="rf-blocks").set_value("later_half")
    at.button(key="rf-go").click().run()
    assert not at.exception
    edit = fake.submitted[0][1]
    assert (edit["v_keys"], edit["cfg_halves"], edit["blocks"]) == ("eval", "cond", "later_half")


def test_inject_beyond_the_steps_blocks_the_button_saying_why(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    at.number_input(key="rf-inject").set_value(40).run()
    assert not at.exception
    assert at.button(key="rf-go").disabled
    assert any("Inject steps k: at most the number of steps (15)" in c.value for c in at.caption)
    assert not fake.submitted
