"""The VLM page (AppTest, a recording fake of the API client): dataset browser and zero-shot submission."""

import io

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest


def _png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, format="PNG")
    return buf.getvalue()


class FakeClient:
    def __init__(self):
        self.submitted, self.gets = [], []

    def methods(self):
        from core.jobs import get_method

        return [{"name": m, "params_schema": get_method(m).json_schema()} for m in ("vlm.zeroshot", "vlm.train")]

    def get(self, path, **params):
        self.gets.append((path, params))
        if path == "/v1/vlm/datasets":
            return [{"name": "digits", "description": "digits", "splits": ["train", "test"]}]
        return {"size": 297, "classnames": ["zero", "one"], "start": 0,
                "items": [{"index": 0, "class": "one", "captions": ["a", "the digit one."], "boxes": []}]}  # fmt: skip

    def get_bytes(self, path):
        self.gets.append((path, {}))
        return _png()

    def submit(self, method, params, idempotency_key=None):
        self.submitted.append((method, params))
        return {"id": "job-1"}

    def post(self, path, json=None, files=None, data=None):
        self.submitted.append((path, data))
        return {"id": "job-2"}

    def job(self, job_id):
        return {"id": job_id, "status": "succeeded", "progress": 1.0, "message": "done"}

    def report(self, job_id):
        body = {
            "title": "Zero-shot classification",
            "summary": "tomato",
            "metrics": {"top1": "tomato", "top1_prob": 0.6, "truth": "brick", "correct": False},
            "data": {"truth": "brick"},
        }
        return {"title": "t", "markdown": "# t", "body": body}

    def artifact(self, artifact_id):
        return _png()


def _script():
    from ui.app_pages import vlm

    vlm.render()


@pytest.fixture
def fake(monkeypatch):
    from ui.app_pages import vlm

    client = FakeClient()
    monkeypatch.setattr(vlm, "get_client", lambda: client)
    return client


def test_browser_and_zero_shot(fake):
    at = AppTest.from_function(_script, default_timeout=30).run()
    assert not at.exception
    assert any(p == "/v1/vlm/datasets/digits/test/items" for p, _ in fake.gets)
    at.text_area(key="vlm-zs-classnames").input("tomato\nbrick")
    at.button(key="vlm-zs-go").click().run()
    assert not at.exception
    method, params = fake.submitted[0]
    assert method == "vlm.zeroshot" and params["classnames"] == ["tomato", "brick"] and params["dataset"] == "objects"
    assert any("Zero-shot classification" in s.value for s in at.subheader)
    # the ground truth beside the prediction
    shown = {m.label: m.value for m in at.metric}
    assert shown["Predicted"] == "tomato" and shown["True label"] == "brick"
    # before the click, the chosen dataset image with its true class
    assert any(p == "/v1/vlm/datasets/objects/test/items" and q == {"start": 0, "count": 1} for p, q in fake.gets)
