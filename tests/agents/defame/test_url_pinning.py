"""DEFAME's page fetch connects to the address its SSRF check approved (issue #27 item 7: no DNS rebinding)."""

import contextlib
import socket

import pytest

from agents.defame.tools import web


class _Resp:
    encoding = "utf-8"

    def raise_for_status(self):
        return None

    def iter_bytes(self):
        yield b"<html><title>t</title><p>page text</p></html>"


def _rebinding_dns(monkeypatch):
    """First answer public, every later answer loopback: what a rebinding attacker's DNS does."""
    calls = []

    def fake(host, *a, **k):
        calls.append(host)
        ip = "8.8.8.8" if len(calls) == 1 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, 0))]

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return calls


def test_scrape_connects_to_the_checked_address_with_the_real_host_name(monkeypatch):
    calls = _rebinding_dns(monkeypatch)
    seen = {}

    @contextlib.contextmanager
    def fake_stream(self, method, url, **kw):
        seen.update(url=url, **kw)
        yield _Resp()

    import httpx

    monkeypatch.setattr(httpx.Client, "stream", fake_stream)
    from core.config import get_settings

    searcher = web.SerperSearch.__new__(web.SerperSearch)
    searcher.settings = get_settings().defame
    src = web.Source(url="https://rebind.example:8443/a?b=1", title="", text="snippet")
    out = searcher.scrape(src)
    assert out.text == "page text"
    assert seen["url"] == "https://8.8.8.8:8443/a?b=1"  # the address that was checked, not a new lookup
    assert seen["headers"] == {"Host": "rebind.example:8443"}
    assert seen["extensions"] == {"sni_hostname": "rebind.example"}  # TLS still verifies the real name
    assert calls == ["rebind.example"]  # resolved exactly once


def test_private_answers_are_refused_and_ipv6_is_bracketed(monkeypatch):
    monkeypatch.setattr(
        socket, "getaddrinfo", lambda *a, **k: [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", 0))]
    )
    with pytest.raises(ValueError, match="private or loopback"):
        web.pinned_request("http://internal.example/")
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda *a, **k: [(socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("2001:4860:4860::8888", 0, 0, 0))],
    )
    url, headers, ext = web.pinned_request("http://v6.example/x")
    assert url == "http://[2001:4860:4860::8888]/x" and headers == {"Host": "v6.example"} and ext == {}
