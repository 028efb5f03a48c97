"""vlm.train / vlm.zeroshot jobs (a real inline run on the test preset) and the /v1/vlm routes."""

import hashlib
import io

import pytest
from PIL import Image

from core.db.models import Job
from core.db.session import session_scope
from core.jobs import InvalidParams, get_method, null_context


def _png(size=(40, 30)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


def _run(method, params):
    spec = get_method(method)
    return spec.run(spec.validate(params), null_context())


@pytest.mark.parametrize(
    "params",
    [
        {"classnames": ["only one"]},
        {"classnames": ["a", "a"]},
        {"template": "no placeholder"},
        {"image_sha256": "../../etc/passwd"},
        {"dataset": "imagenet"},
        {"classnames": ["x" * 61, "y"]},
    ],
)
def test_zeroshot_params_rejected(params):
    with pytest.raises(InvalidParams):
        get_method("vlm.zeroshot").validate(params)


def test_train_then_zero_shot_inline():
    report = _run("vlm.train", {"preset": "test"})
    assert report.metrics["chance_digits"] == pytest.approx(0.1)
    assert 0 <= report.metrics["zeroshot_digits"] <= 1
    assert {"loss.png", "scenes.png", "preset.json"} <= {a.name for a in report.artifacts}
    again = _run("vlm.train", {"preset": "test"})
    assert "loaded from the cache" in again.summary
    zs = _run(
        "vlm.zeroshot",
        {"dataset": "digits", "index": 3, "classnames": ["seven", "three", "zebra crossing"], "preset": "test"},
    )
    probs = zs.data["probs"]
    assert len(probs) == 3 and sum(probs) == pytest.approx(1.0, abs=1e-5)
    assert zs.metrics["top1"] in ("seven", "three", "zebra crossing")


def test_dataset_routes(api_client):
    names = {d["name"] for d in api_client.get("/v1/vlm/datasets").json()}
    assert {"scenes", "objects20", "digits"} <= names
    r = api_client.get("/v1/vlm/datasets/digits/test/items", params={"start": 5, "count": 3})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["size"] == 297 and [it["index"] for it in body["items"]] == [5, 6, 7]
    png = api_client.get("/v1/vlm/datasets/digits/test/grid.png", params={"count": 4})
    assert png.status_code == 200 and png.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(png.content)).size[0] > 0
    assert api_client.get("/v1/vlm/datasets/imagenet/test/items").status_code == 422
    assert api_client.get("/v1/vlm/datasets/digits/val/items").status_code == 404
    assert api_client.get("/v1/vlm/datasets/digits/test/items", params={"count": 1000}).status_code == 422
    assert api_client.get("/v1/vlm/datasets/digits/test/grid.png", params={"start": 5000}).status_code == 404


def test_zeroshot_upload(api_client):
    data = _png()
    r = api_client.post(
        "/v1/vlm/zeroshot", files={"image": ("x.png", data, "image/png")}, data={"classnames": "tomato, brick"}
    )
    assert r.status_code == 201, r.text
    with session_scope() as s:
        params = s.get(Job, r.json()["id"]).params
    assert params["image_sha256"] == hashlib.sha256(data).hexdigest() and params["classnames"] == ["tomato", "brick"]
    bad = api_client.post("/v1/vlm/zeroshot", files={"image": ("x.png", b"not an image", "image/png")})
    assert bad.status_code == 415
    one = api_client.post("/v1/vlm/zeroshot", files={"image": ("x.png", data, "image/png")}, data={"classnames": "a"})
    assert one.status_code == 422


def test_requires_an_api_key(api_client):
    from fastapi.testclient import TestClient

    from services.api.main import create_app

    anon = TestClient(create_app())
    assert anon.get("/v1/vlm/datasets").status_code == 401


def test_reproduce_states_item_level_claims_recomputed_from_results_json(tmp_path):
    """``reproduce vlm`` (test preset): the page opens with the headline table, computed from every test item's hit."""
    from core.evidence import Evidence, table_in
    from core.jobs import get_reproducer, null_context

    get_reproducer("vlm").run(tmp_path, null_context(), {"preset": "test"})
    text = (tmp_path / "vlm.md").read_text()
    ev = Evidence.load(tmp_path / "vlm" / "results.json")
    assert ev.recompute() == [] and table_in(text) == ev.table() and "## Metrics" not in text
    assert text.index("Summary: the headline claims") < text.index("## Reading") < text.index("Zero-shot top-1")
    digits = next(h for h in ev.headlines if h.claim == "zero-shot top-1 on digits beats chance")
    hits = ev.raw["zeroshot"]["digits"]
    assert digits.result["n"] == len(hits) and digits.result["estimate"] == sum(hits) / len(hits)
    assert digits.result["null"] == ev.raw["chance"]["digits"] == 0.1
    assert set(ev.raw["retrieval"]) == {"i2t", "t2i"}
