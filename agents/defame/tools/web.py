"""Search backends: the local Chroma corpus (default, offline), SearxNG (self-hosted) and Serper (API key).

Every backend returns raw :class:`~agents.defame.tools.filters.Source` lists; the
caller applies the shared filters. Outbound page fetches refuse private,
loopback and link-local addresses unless the host is in
``settings.allowed_hosts`` (the project's own test servers).
"""

from __future__ import annotations

import datetime as dt
import html
import ipaddress
import logging
import re
import socket
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urlparse

from agents.defame.config import DefameSettings
from agents.defame.tools.filters import Source

log = logging.getLogger(__name__)


class CorpusSearch:
    """kNN search over a Chroma collection of documents (spec §6: the offline "web").

    Documents carry ``url``, ``title``, ``date`` and optionally ``claim_id``
    metadata. With ``claim_id`` the search is restricted to that claim's
    documents (the AVeriTeC knowledge-store semantics). MiniLM vectors are
    unit-length, so the collection's cosine ranking equals the paper's
    Euclidean kNN ranking. ``extra`` collections (the submitting key's own
    documents) are searched too, and the nearest ``k`` of all are kept.
    """

    name = "corpus"

    def __init__(self, store: Any, collection: str, *, extra: tuple[str, ...] = ()) -> None:
        self.store, self.collection, self.extra = store, collection, tuple(extra)

    def _collections(self) -> list[str]:
        return [c for c in (self.collection, *self.extra) if self.store.count(c) > 0]

    def available(self) -> bool:
        return bool(self._collections())

    def search(self, query: str, *, k: int, claim_id: str | None = None, **_: Any) -> list[Source]:
        # a claim's own documents: tagged claim_id (uploaded corpora) or gold_for (the oracle corpora)
        where = {"$or": [{"claim_id": str(claim_id)}, {"gold_for": str(claim_id)}]} if claim_id is not None else None
        collections = [self.collection] if not self.extra else self._collections()
        hits = [h for c in collections for h in self.store.query(c, text=query, k=k, where=where)]
        hits = sorted(hits, key=lambda h: h.distance)[:k] if len(collections) > 1 else hits
        out = []
        for h in hits:
            m = h.metadata or {}
            out.append(
                Source(
                    url=str(m.get("url") or f"corpus://{self.collection}/{h.id}"),
                    title=str(m.get("title") or ""),
                    text=h.document or "",
                    date=m.get("date") or None,
                    image=m.get("image") or None,
                    meta={
                        "id": h.id,
                        "distance": round(h.distance, 4),
                        **({"gold_for": m["gold_for"]} if "gold_for" in m else {}),
                    },
                )
            )
        return out


def _public_address(host: str) -> str | None:
    """The one address to connect to, after every address ``host`` resolves to was checked public.

    Returns ``""`` for a host on ``settings.allowed_hosts`` (resolved normally), ``None`` when refused.
    """
    from core.config import get_settings

    host = host.lower()
    if host in get_settings().extra_allowed_hosts:
        return ""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return None
    addrs = []
    for info in infos:
        ip = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_multicast:
            return None
        if ip.is_unspecified or (ip.version == 6 and ip.ipv4_mapped is not None):
            return None
        addrs.append(str(ip))
    return addrs[0] if addrs else None


def _host_allowed(host: str) -> bool:
    return _public_address(host) is not None


def pinned_request(url: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """``(url, headers, extensions)`` that connect to the address :func:`check_url` approved.

    Resolving once to check and letting the HTTP client resolve again would let a DNS answer that
    changes in between (rebinding) reach an internal address. The URL's host is replaced by the
    checked IP; ``Host`` and the TLS server name (``sni_hostname``) keep the real name, so virtual
    hosts and certificate checks work as before.
    """
    p = urlparse(url)
    if p.scheme not in ("http", "https") or not p.hostname:
        raise ValueError(f"refusing to fetch {url!r}: only http(s) URLs")
    addr = _public_address(p.hostname)
    if addr is None:
        raise ValueError(f"refusing to fetch {url!r}: host resolves to a private or loopback address")
    if addr == "":
        return url, {}, {}
    netloc = f"[{addr}]" if ":" in addr else addr
    if p.port:
        netloc += f":{p.port}"
    host_header = p.hostname + (f":{p.port}" if p.port else "")
    ext = {"sni_hostname": p.hostname} if p.scheme == "https" else {}
    return p._replace(netloc=netloc).geturl(), {"Host": host_header}, ext


def check_url(url: str) -> str:
    """Reject non-http(s) URLs and hosts that resolve to internal addresses (SSRF guard)."""
    p = urlparse(url)
    if p.scheme not in ("http", "https") or not p.hostname:
        raise ValueError(f"refusing to fetch {url!r}: only http(s) URLs")
    if not _host_allowed(p.hostname):
        raise ValueError(f"refusing to fetch {url!r}: host resolves to a private or loopback address")
    return url


class _TextExtractor(HTMLParser):
    """Visible text and ``<img>`` sources of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self.images: list[str] = []
        self._skip = 0
        self.title = ""
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style", "noscript", "nav", "footer"):
            self._skip += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "img":
            src = dict(attrs).get("src")
            if src and len(self.images) < 32:
                self.images.append(src)
        elif tag in ("p", "br", "div", "li", "h1", "h2", "h3", "tr"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style", "noscript", "nav", "footer") and self._skip:
            self._skip -= 1
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._skip:
            self.parts.append(data)


def html_to_text(markup: str) -> tuple[str, str]:
    """(title, text) of an HTML document."""
    p = _TextExtractor()
    p.feed(markup)
    text = re.sub(r"[ \t]+", " ", html.unescape("".join(p.parts)))
    text = re.sub(r"\n\s*\n+", "\n", text).strip()
    return p.title.strip(), text


class SerperSearch:
    """Google results through the Serper API (``POST /search`` and ``/images``, key in ``X-API-KEY``)."""

    name = "serper"

    def __init__(self, settings: DefameSettings, *, images: bool = False) -> None:
        if settings.serper_api_key is None:
            raise ValueError("Serper needs PAPERWORKS_DEFAME__SERPER_API_KEY (settings.defame.serper_api_key)")
        self.settings, self.images = settings, images

    def available(self) -> bool:
        return True

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        import httpx

        url = self.settings.serper_url.rstrip("/") + path
        headers = {"X-API-KEY": self.settings.serper_api_key.get_secret_value(), "Content-Type": "application/json"}
        r = httpx.post(url, json=payload, headers=headers, timeout=self.settings.request_timeout_s)
        r.raise_for_status()
        return r.json()

    def search(self, query: str, *, k: int, end: dt.date | None = None, **_: Any) -> list[Source]:
        payload: dict[str, Any] = {"q": query, "num": max(10, k)}
        if end is not None:
            payload["tbs"] = f"cdr:1,cd_max:{end.month}/{end.day}/{end.year}"
        data = self._post("/images" if self.images else "/search", payload)
        rows = data.get("images" if self.images else "organic") or []
        out = []
        for row in rows:
            link = row.get("link") or ""
            if not link:
                continue
            src = Source(
                url=link,
                title=row.get("title") or "",
                text=row.get("snippet") or "",
                date=_serper_date(row.get("date")),
            )
            if self.images and row.get("imageUrl"):
                src.meta["image_url"] = row["imageUrl"]
            out.append(src)
        return out

    def scrape(self, src: Source, max_bytes: int = 2_000_000) -> Source:
        """Replace the snippet by the page's text when the page can be fetched safely."""
        import httpx

        try:
            target, headers, ext = pinned_request(src.url)  # checked once, connected to that same address
            with (
                httpx.Client(timeout=self.settings.request_timeout_s, follow_redirects=False) as client,
                client.stream("GET", target, headers=headers, extensions=ext) as r,
            ):
                r.raise_for_status()
                body = b""
                for chunk in r.iter_bytes():
                    body += chunk
                    if len(body) > max_bytes:
                        break
            title, text = html_to_text(body.decode(r.encoding or "utf-8", errors="replace"))
            if text:
                return Source(url=src.url, title=src.title or title, text=text, date=src.date, meta=src.meta)
        except Exception as exc:  # a page that cannot be scraped keeps its snippet
            log.info("scraping %s failed: %s", src.url, exc)
        return src


class SearxngSearch(SerperSearch):
    """A self-hosted SearxNG metasearch instance: ``GET /search?q=...&format=json`` (JSON must be enabled
    in its ``settings.yml``: ``search.formats: [html, json]``). No key; results' pages are scraped like
    Serper's (public hosts only)."""

    name = "searxng"

    def __init__(self, settings: DefameSettings, *, images: bool = False) -> None:
        if not settings.searxng_url:
            raise ValueError("SearxNG needs PAPERWORKS_DEFAME__SEARXNG_URL (settings.defame.searxng_url)")
        self.settings, self.images = settings, images

    def search(self, query: str, *, k: int, end: dt.date | None = None, **_: Any) -> list[Source]:
        import httpx

        params: dict[str, Any] = {"q": query, "format": "json", "categories": "images" if self.images else "general"}
        url = self.settings.searxng_url.rstrip("/") + "/search"
        r = httpx.get(
            url, params=params, timeout=self.settings.request_timeout_s, headers={"Accept": "application/json"}
        )
        r.raise_for_status()
        try:
            rows = r.json().get("results") or []
        except ValueError:
            raise ValueError(
                "SearxNG answered without JSON: enable `json` in search.formats of its settings.yml"
            ) from None
        out = []
        for row in rows[: max(10, k)]:
            link = row.get("url") or ""
            if not link:
                continue
            src = Source(
                url=link,
                title=row.get("title") or "",
                text=row.get("content") or "",
                date=_searxng_date(row.get("publishedDate")),
            )
            if self.images and row.get("img_src"):
                src.meta["image_url"] = row["img_src"]
            out.append(src)
        return out


def _searxng_date(value: str | None) -> str | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return None


def _serper_date(value: str | None) -> str | None:
    if not value:
        return None
    for fmt in ("%b %d, %Y", "%d %b %Y", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(value.strip(), fmt).date().isoformat()
        except ValueError:
            continue
    return None
