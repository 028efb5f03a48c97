"""The Evidence page and the fact-check page's empty-store warning (AppTest with a scripted client)."""

import pytest

streamlit_testing = pytest.importorskip("streamlit.testing.v1")


def _app():
    import os

    from ui.app_pages import evidence

    empty = os.environ.get("EVIDENCE_UI_EMPTY") == "1"

    class FakeClient:
        def get(self, path, **params):
            if path == "/v1/evidence":
                if empty:
                    return {
                        "corpus": params["corpus"],
                        "chunks": 0,
                        "images": 0,
                        "search_backend": "corpus",
                        "backend_ready": False,
                        "empty": True,
                        "warning": "The evidence store 'defame-default' is empty.",
                        "ways_out": ["Add documents: `paperworks corpus add DIR`", "Or configure a search backend"],
                    }
                return {
                    "corpus": params["corpus"],
                    "chunks": 3,
                    "images": 0,
                    "search_backend": "corpus",
                    "backend_ready": False,
                    "empty": False,
                }
            assert path == "/v1/evidence/documents"
            return (
                []
                if empty
                else [
                    {
                        "id": "0123456789abcdef",
                        "url": "upload://x/eiffel.txt",
                        "title": "eiffel.txt",
                        "date": None,
                        "chunks": 3,
                        "chars": 4200,
                        "preview": "The Eiffel Tower stands in Paris.",
                    }
                ]
            )

    evidence.get_client = lambda: FakeClient()
    evidence.render()


def test_empty_store_shows_the_two_ways_out(monkeypatch):
    monkeypatch.setenv("EVIDENCE_UI_EMPTY", "1")
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception
    warning = at.warning[0].value
    assert "is empty" in warning and "corpus add" in warning and "search backend" in warning
    assert any("0 document" in s.value for s in at.subheader)


def test_documents_are_listed_with_a_delete_button(monkeypatch):
    monkeypatch.setenv("EVIDENCE_UI_EMPTY", "0")
    at = streamlit_testing.AppTest.from_function(_app, default_timeout=30)
    at.run()
    assert not at.exception and not at.warning
    assert any("1 document" in s.value for s in at.subheader)
    assert any(b.label == "Delete" for b in at.button)
    assert any("3 text chunks" in c.value for c in at.caption)
