"""``/v1/m3_jepa`` routes: valid bodies queue jobs (201), bad ones are 422 before anything is queued."""

from __future__ import annotations


def test_retrieve_and_study_queue_jobs(api_client):
    r = api_client.post("/v1/m3_jepa/retrieve", json={"caption": "  a bold   seven ", "k": 4})
    assert r.status_code == 201, r.text
    job = api_client.get(f"/v1/jobs/{r.json()['id']}").json()
    assert job["method"] == "m3_jepa.retrieve" and job["params"]["caption"] == "a bold seven"
    r = api_client.post(
        "/v1/m3_jepa/study", json={"variants": ["m3_jepa", "mlp", "mlp"], "seeds": 3, "dispatch": "inline"}
    )
    assert r.status_code == 201, r.text
    assert api_client.get(f"/v1/jobs/{r.json()['id']}").json()["params"]["variants"] == ["m3_jepa", "mlp"]


def test_bad_bodies_are_422(api_client):
    bad = [
        ("/v1/m3_jepa/retrieve", {"caption": ""}),
        ("/v1/m3_jepa/retrieve", {"caption": "   "}),
        ("/v1/m3_jepa/retrieve", {"caption": "x" * 201}),
        ("/v1/m3_jepa/retrieve", {"caption": "a one", "k": 0}),
        ("/v1/m3_jepa/retrieve", {"caption": "a one", "k": 33}),
        ("/v1/m3_jepa/study", {"seeds": 0}),
        ("/v1/m3_jepa/study", {"seeds": 11}),
        ("/v1/m3_jepa/study", {"variants": ["resnet"]}),
        ("/v1/m3_jepa/study", {"variants": []}),
        ("/v1/m3_jepa/train", {"epochs": 0}),
        ("/v1/m3_jepa/train", {"unknown": 1}),
    ]
    for path, body in bad:
        assert api_client.post(path, json=body).status_code == 422, (path, body)


def test_variants_and_paper(api_client):
    names = [v["variant"] for v in api_client.get("/v1/m3_jepa/variants").json()]
    assert names[0] == "m3_jepa" and {"mlp", "no_cl", "no_reg", "summed", "clip_linear", "random_captions"} <= set(
        names
    )
    claims = api_client.get("/v1/m3_jepa/paper").json()
    assert any("BLIP-2" in c["claim"] for c in claims)
