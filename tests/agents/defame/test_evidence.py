"""A fresh machine's evidence: the empty-store warning (CLI, API), the Evidence routes, the SearxNG adapter."""

from __future__ import annotations

import http.server
import json
import threading
import uuid
from urllib.parse import parse_qs, urlparse

import pytest

from agents.defame.config import DefameConfig, DefameContext, DefameSettings
from agents.defame.evidence import add_document, delete_document, evidence_status, list_documents
from agents.defame.parsing import Action
from agents.defame.tools.registry import run_action
from agents.defame.tools.web import SearxngSearch


def test_status_warns_only_when_nothing_can_be_found(ephemeral_store):
    st = evidence_status(ephemeral_store, "ev-empty", DefameSettings())
    assert st.empty and "empty" in st.warning and len(st.ways_out) == 2
    assert "corpus add" in st.ways_out[0] and "SEARXNG_URL" in st.ways_out[1]
    assert not evidence_status(
        ephemeral_store, "ev-empty", DefameSettings(search_backend="searxng", searxng_url="http://s")
    ).empty
    assert evidence_status(ephemeral_store, "ev-empty", DefameSettings(search_backend="searxng")).empty
    add_document(ephemeral_store, "ev-one", filename="eiffel.md", data=b"# Eiffel\nThe Eiffel Tower is in Paris.")
    st = evidence_status(ephemeral_store, "ev-one", DefameSettings())
    assert not st.empty and st.chunks == 1


def test_documents_add_list_delete_and_refusals(ephemeral_store):
    row = add_document(
        ephemeral_store,
        "ev-docs",
        filename="a.html",
        data=b"<title>Tower</title><p>It is in Paris.</p>",
        date="2020-01-02",
    )
    assert row["title"] == "Tower" and row["chunks"] == 1 and row["date"] == "2020-01-02"
    add_document(ephemeral_store, "ev-docs", filename="b.txt", data=((("x" * 1990) + "\n") * 3).encode())
    rows = list_documents(ephemeral_store, "ev-docs")
    assert [r["chunks"] for r in rows] == [1, 3] or sorted(r["chunks"] for r in rows) == [1, 3]
    assert delete_document(ephemeral_store, "ev-docs", row["id"]) and not delete_document(
        ephemeral_store, "ev-docs", row["id"]
    )
    assert [r["title"] for r in list_documents(ephemeral_store, "ev-docs")] == ["b.txt"]
    for name, data, msg in (
        ("x.pdf", b"%PDF", "only"),
        ("x.txt", b"\xff\xfe\xfa", "UTF-8"),
        ("x.txt", b"  \n", "no text"),
    ):
        with pytest.raises(ValueError, match=msg):
            add_document(ephemeral_store, "ev-docs", filename=name, data=data)


def test_api_factcheck_says_the_store_is_empty_and_documents_routes(api_client, settings, monkeypatch, stage_llm):
    model, _ = stage_llm({"plan": ["no actions"], "judge": ["`not enough information`"], "justify": ["-"]})
    monkeypatch.setattr(settings, "llm_model", model)
    corpus = f"ev-{uuid.uuid4().hex[:8]}"
    r = api_client.post("/v1/factcheck", data={"claim": "The Eiffel Tower is located in Berlin.", "corpus": corpus})
    assert r.status_code == 201, r.text
    ev = r.json()["evidence"]
    assert ev["empty"] and "is empty" in ev["warning"] and len(ev["ways_out"]) == 2
    r = api_client.post(
        "/v1/evidence/documents",
        data={"corpus": corpus},
        files=[("files", ("eiffel.txt", b"The Eiffel Tower stands in Paris, France.", "text/plain"))],
    )
    assert r.status_code == 201, r.text
    doc = r.json()[0]
    assert api_client.get("/v1/evidence", params={"corpus": corpus}).json()["empty"] is False
    assert [d["id"] for d in api_client.get("/v1/evidence/documents", params={"corpus": corpus}).json()] == [doc["id"]]
    r = api_client.post(
        "/v1/evidence/documents",
        data={"corpus": corpus},
        files=[("files", ("x.exe", b"MZ", "application/octet-stream"))],
    )
    assert r.status_code == 415
    r = api_client.post(
        "/v1/evidence/documents",
        data={"corpus": corpus},
        files=[("files", ("big.txt", b"a" * 2_000_001, "text/plain"))],
    )
    assert r.status_code == 413
    assert api_client.get("/v1/evidence", params={"corpus": "../bad"}).status_code == 422
    assert api_client.delete(f"/v1/evidence/documents/{doc['id']}", params={"corpus": corpus}).status_code == 200
    assert api_client.delete(f"/v1/evidence/documents/{doc['id']}", params={"corpus": corpus}).status_code == 404
    assert api_client.get("/v1/evidence", params={"corpus": corpus}).json()["empty"] is True
    api_client.headers.pop("Authorization")
    assert api_client.get("/v1/evidence").status_code == 401


def test_cli_factcheck_warns_before_running(settings, monkeypatch, stage_llm):
    from typer.testing import CliRunner

    from services.cli.main import app

    model, script = stage_llm(
        {
            "plan": ['```\nweb_search("Eiffel Tower location")\n```'],
            "develop": ["Nothing found."],
            "judge": ["`not enough information`"],
            "justify": ["No evidence."],
        }
    )
    corpus = f"ev-{uuid.uuid4().hex[:8]}"
    res = CliRunner().invoke(
        app,
        ["factcheck", "The Eiffel Tower is located in Berlin.", "--model", model, "--corpus", corpus, "--rounds", "1"],
    )
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "is empty" in out and "paperworks corpus add" in out and "SEARCH_BACKEND=searxng" in out
    assert out.index("is empty") < out.index("plan"), "the warning comes before the run"


class _Searx(http.server.BaseHTTPRequestHandler):
    queries: list[dict] = []

    def do_GET(self):  # noqa: N802
        u = urlparse(self.path)
        if u.path == "/search":
            q = parse_qs(u.query)
            _Searx.queries.append(q)
            body = {
                "results": [
                    {"url": "https://www.snopes.com/x", "title": "fc", "content": "rated false"},
                    {
                        "url": f"http://127.0.0.1:{self.server.server_address[1]}/page",
                        "title": "Tower",
                        "content": "The Eiffel Tower is in Paris.",
                        "publishedDate": "2019-03-03T00:00:00",
                    },
                    {
                        "url": "https://late.example.org/",
                        "title": "late",
                        "content": "x",
                        "publishedDate": "2024-01-01",
                    },
                ]
            }
            data, ctype = json.dumps(body).encode(), "application/json"
        else:
            data, ctype = b"<html><body><p>The Eiffel Tower stands in Paris, France.</p></body></html>", "text/html"
        self.send_response(200)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_searxng_adapter_against_a_local_server(monkeypatch, settings):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Searx)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        ext = DefameSettings(search_backend="searxng", searxng_url=f"http://127.0.0.1:{port}/")
        ctx = DefameContext(config=DefameConfig(), settings=ext)
        claim = {"text": "The Eiffel Tower is located in Berlin.", "date": "2021-03-01"}
        res = run_action(Action("web_search", "Eiffel Tower location"), claim, {}, ctx, set())
        # the fact-checking site and the post-claim result are filtered; the loopback page keeps its snippet
        assert [s["url"] for s in res["sources"]] == [f"http://127.0.0.1:{port}/page"]
        assert (
            res["sources"][0]["text"] == "The Eiffel Tower is in Paris." and res["sources"][0]["date"] == "2019-03-03"
        )
        assert _Searx.queries[-1]["q"] == ["Eiffel Tower location"] and _Searx.queries[-1]["format"] == ["json"]
        monkeypatch.setattr(settings, "allowed_hosts", "127.0.0.1")
        res = run_action(Action("web_search", "Eiffel Tower location"), claim, {}, ctx, set())
        assert res["sources"][0]["text"] == "The Eiffel Tower stands in Paris, France."
    finally:
        server.shutdown()
    with pytest.raises(ValueError, match="SEARXNG_URL"):
        SearxngSearch(DefameSettings(search_backend="searxng"))
