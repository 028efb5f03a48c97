"""``/docs`` and ``/redoc`` load every script, style and icon from this server (no CDN), and the files are there.

The browser side (the pages render the method routes with the network off) is in
tests/integration/test_ui_browser.py.
"""

from __future__ import annotations

import re

import pytest

from services.api.docs import ASSETS, STATIC_URL, assets_dir, install

_URL = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*['"]([^'"]+)['"]""")


def _urls(html: str) -> list[str]:
    return [a or b for a, b in _URL.findall(html)]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_local_assets(api_client, page):
    r = api_client.get(page, headers={"Authorization": ""})  # public, like /openapi.json
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    urls = _urls(r.text)
    assert urls, r.text
    remote = [u for u in urls if "//" in u]
    assert not remote, f"{page} loads {remote}"
    assert "fonts.googleapis" not in r.text and "cdn." not in r.text
    for u in urls:
        if u.startswith(STATIC_URL):
            got = api_client.get(u)
            assert got.status_code == 200 and len(got.content) > 1000, u
    assert any(u.endswith(".js") for u in urls)
    assert "/openapi.json" in r.text


def test_the_served_bundles_load_nothing_remote(api_client):
    import re

    for name in ("redoc.standalone.js", "swagger-ui-bundle.js"):
        body = api_client.get(f"{STATIC_URL}/{name}").text
        assert not re.findall(r"https?://cdn[^\"'\s)]*", body), name  # e.g. ReDoc's Redocly logo
        assert "fonts.googleapis" not in body


def test_the_bundles_ship_with_the_installed_package():
    folder = assets_dir()
    for name in ASSETS:
        assert (folder / name).stat().st_size > 1000
    assert b"SwaggerUIBundle" in (folder / "swagger-ui-bundle.js").read_bytes()[:2_000_000]
    assert b"Redoc" in (folder / "redoc.standalone.js").read_bytes()


def test_install_refuses_an_app_that_already_serves_cdn_pages():
    from fastapi import FastAPI

    with pytest.raises(ValueError, match="docs_url=None"):
        install(FastAPI())
