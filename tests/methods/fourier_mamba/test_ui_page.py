"""The deraining page under Streamlit's AppTest with a recording fake of the API client."""

import io

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 16), (90, 90, 90)).save(buf, format="PNG")
    return buf.getvalue()


class FakeClient:
    def __init__(self, with_gt: bool = True):
        self.submitted = []
        self.with_gt = with_gt

    def methods(self):
        from core.jobs import get_method

        return [{"name": "fourier_mamba.derain", "params_schema": get_method("fourier_mamba.derain").json_schema()}]

    def submit(self, method, params, idempotency_key=None):
        self.submitted.append((method, params))
        return {"id": "job-1"}

    def post(self, path, json=None, files=None, data=None):
        self.submitted.append((path, data))
        return {"id": "job-1"}

    def job(self, job_id):
        return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

    def report(self, job_id):
        names = ["input.png", "output.png"] + (["ground_truth.png"] if self.with_gt else [])
        metrics = {"preset": "cpu", "scan_order": "zigzag", "params": 295983}
        if self.with_gt:
            metrics |= {"psnr_y_input": 21.5, "ssim_y_input": 0.61, "psnr_y_output": 25.25, "ssim_y_output": 0.75}
        return {
            "body": {
                "title": "FourierMamba deraining: rain100l_2",
                "summary": "ok",
                "artifacts": [{"name": n, "id": n, "kind": "image"} for n in names],
                "metrics": metrics,
            }
        }

    def artifact(self, artifact_id):
        return _png()


def _script():
    from ui.app_pages import fourier_mamba

    fourier_mamba.render()


@pytest.fixture
def fake(monkeypatch):
    from ui.app_pages import fourier_mamba

    client = FakeClient()
    monkeypatch.setattr(fourier_mamba, "get_client", lambda: client)
    return client


def test_sample_with_rain_submits_and_shows_three_panels_with_scores(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    assert not at.exception
    at.selectbox(key="fm-sample").set_value("rain100l_2")
    at.selectbox(key="fm-add_rain").set_value("H")
    at.number_input(key="fm-rain_seed").set_value(5)
    at.button(key="fm-go").click().run()
    assert not at.exception
    method, params = fake.submitted[0]
    assert method == "fourier_mamba.derain"
    assert params == {"sample": "rain100l_2", "add_rain": "H", "rain_seed": 5, "scan_order": "zigzag", "preset": "cpu"}
    captions = " ".join(c.value for c in at.caption)
    assert "PSNR(Y) 21.50 dB" in captions and "PSNR(Y) 25.25 dB" in captions and "SSIM(Y) 0.7500" in captions
    assert {m.value for m in at.markdown} >= {"**Input**", "**Output**", "**Ground truth**"}


def test_clean_photo_without_rain_warns_there_is_no_ground_truth(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    at.selectbox(key="fm-sample").set_value("china").run()
    assert any("no ground truth" in i.value for i in at.info)


def test_upload_goes_to_the_upload_route(monkeypatch):
    from ui.app_pages import fourier_mamba

    client = FakeClient(with_gt=False)
    monkeypatch.setattr(fourier_mamba, "get_client", lambda: client)
    at = AppTest.from_function(_script, default_timeout=30).run()
    at.radio(key="fm-kind").set_value("Upload").run()
    at.button(key="fm-go").click().run()
    assert any("Choose an image" in e.value for e in at.error) and not client.submitted
