"""``/v1/lada`` routes: a run is queued for the calling key; bad bodies are 422; domains and paper numbers."""


def test_xtail_is_queued_for_the_key(api_client):
    body = {"method": "xtail_rail", "domains": ["digits", "shapes"], "seeds": 2, "preset": None}
    r = api_client.post("/v1/lada/xtail", json=body)
    assert r.status_code == 201, r.text
    job = api_client.get(f"/v1/jobs/{r.json()['id']}").json()
    assert job["method"] == "lada.xtail" and job["params"]["domains"] == ["digits", "shapes"]


def test_bad_bodies_are_422(api_client):
    for body in (
        {"seeds": 0},
        {"shots": 100},
        {"method": "dpcr"},
        {"domains": ["digits"]},
        {"domains": ["digits", "digits"]},
        {"options": {"beta": -1}},
        {"unknown": 1},
    ):
        r = api_client.post("/v1/lada/xtail", json=body)
        assert r.status_code == 422, body


def test_domains_and_paper(api_client):
    domains = api_client.get("/v1/lada/domains").json()
    assert [d["name"] for d in domains] == ["colours", "digits", "objects", "shapes", "textures"]
    assert sum(len(d["classnames"]) for d in domains) == 36
    assert {"method": "LADA", "transfer": "61.5", "average": "72.7", "last": "83.1"} in api_client.get(
        "/v1/lada/paper"
    ).json()
