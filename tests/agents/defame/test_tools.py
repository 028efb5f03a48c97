"""Tools on real inputs: Tesseract OCR, pHash reverse search, EXIF geolocation, search filters, Serper adapter."""

from __future__ import annotations

import datetime as dt
import http.server
import io
import json
import threading

import pytest
from PIL import Image, ImageDraw, ImageFont

from agents.defame.config import DefameConfig, DefameContext, DefameSettings
from agents.defame.corpus import add_folder, phash_collection
from agents.defame.parsing import Action
from agents.defame.tools import images as image_tools
from agents.defame.tools.filters import Source, end_date, filter_sources, is_blocked, keyword_sentences
from agents.defame.tools.registry import available_actions, run_action
from agents.defame.tools.web import SerperSearch


def test_ocr_reads_rendered_text(tmp_path):
    img = Image.new("RGB", (640, 160), "white")
    ImageDraw.Draw(img).text((20, 50), "CURFEW STARTS AT 9 PM", fill="black", font=ImageFont.load_default(size=44))
    path = tmp_path / "sign.png"
    img.save(path)
    assert "CURFEW STARTS AT 9 PM" in image_tools.ocr_text(path)


def _photo(seed: int, size=(320, 240)) -> Image.Image:
    import numpy as np

    rng = np.random.default_rng(seed)
    base = rng.integers(0, 255, (6, 8, 3), dtype=np.uint8)  # coarse structure survives resizing
    return Image.fromarray(base).resize(size, Image.BICUBIC)


def test_reverse_search_finds_a_resized_recompressed_copy_only(tmp_path, ephemeral_store):
    folder = tmp_path / "corpus"
    folder.mkdir()
    _photo(1).save(folder / "flood_2012.png")
    (folder / "flood_2012.png.json").write_text(
        json.dumps({"url": "https://news.example.org/flood", "caption": "Flooded street in 2012", "date": "2012-10-30"})
    )
    _photo(2).save(folder / "other.png")
    stats = add_folder(ephemeral_store, folder, collection="defame-rev")
    assert stats.images == 2 and ephemeral_store.count(phash_collection("defame-rev")) == 2
    copy = tmp_path / "copy.jpg"
    buf = io.BytesIO()
    _photo(1).resize((200, 150)).save(buf, format="JPEG", quality=45)
    copy.write_bytes(buf.getvalue())
    unrelated = tmp_path / "unrelated.png"
    _photo(99).save(unrelated)
    ctx = DefameContext(config=DefameConfig(corpus="defame-rev", restrict_to_claim_date=False), store=ephemeral_store)
    claim = {"text": "<image:1> x", "images": {"1": str(copy)}}
    assert "reverse_search" in {s.name for s in available_actions(claim, ctx, [])}
    res = run_action(Action("reverse_search", "<image:1>"), claim, {"1": str(copy)}, ctx, set())
    assert [s["url"] for s in res["sources"]] == ["https://news.example.org/flood"]
    res = run_action(Action("reverse_search", "<image:1>"), claim, {"1": str(unrelated)}, ctx, set())
    assert res["sources"] == []
    assert "reverse_search" not in {s.name for s in available_actions(claim, ctx, ["reverse_search"])}


def test_geolocate_reads_exif_gps_and_says_so_when_absent(tmp_path):
    img = _photo(3)
    exif = Image.Exif()
    gps = {1: "N", 2: (48.0, 51.0, 29.6), 3: "E", 4: (2.0, 17.0, 40.2)}
    exif[0x8825] = gps
    path = tmp_path / "paris.jpg"
    img.save(path, exif=exif)
    text = image_tools.geolocate(path, "<image:1>")
    assert "latitude 48.8582" in text and "longitude 2.2945" in text
    plain = tmp_path / "plain.png"
    img.save(plain)
    assert image_tools.geolocate(plain, "<image:1>").startswith("No location evidence for <image:1>")


def test_date_domain_seen_and_limit_filters():
    srcs = [
        Source("https://www.snopes.com/fact-check/x", date="2020-01-01"),
        Source("https://web.archive.org/web/2020/https://www.politifact.com/a", date="2020-01-01"),
        Source("https://facebook.com/post/1"),
        Source("https://alpha.org/1", date="2020-05-01"),
        Source("https://news.alpha.org/2", date="2020-05-01"),  # same base domain: dropped
        Source("https://beta.org/1", date="2022-01-01"),  # after the end date
        Source("https://gamma.org/1"),  # undated: kept
        Source("https://delta.org/seen"),
        Source("https://eps.co.uk/1"),
        Source("https://zeta.org/1"),
    ]
    kept = filter_sources(srcs, end=dt.date(2021, 1, 1), seen={"https://delta.org/seen"}, limit=3)
    assert [s.url for s in kept] == ["https://alpha.org/1", "https://gamma.org/1", "https://eps.co.uk/1"]
    assert is_blocked("https://www.reuters.com/fact-check/abc") and not is_blocked("https://www.reuters.com/world")
    assert end_date("2021-03-01", "2020-01-01") == dt.date(2020, 1, 1)
    assert end_date("2021-03-01", "2022-01-01") == dt.date(2021, 3, 1)
    assert end_date("2021-03-01", None, restrict=False) is None


def test_keyword_filter_keeps_the_ten_best_sentences():
    text = " ".join(
        [f"Filler sentence number {i}." for i in range(20)]
        + ["The bridge opened in 1937.", "Bridge traffic grew.", "The bridge opened with a parade in 1937."]
    )
    out = keyword_sentences(text, "bridge opened 1937", keep=10)
    assert out.startswith("The bridge opened in 1937. The bridge opened with a parade in 1937.")
    assert len([s for s in out.split(".") if s.strip()]) == 3  # only sentences with keywords
    assert keyword_sentences("Nothing relevant.", "zebra") == "Nothing relevant."


class _Serper(http.server.BaseHTTPRequestHandler):
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Serper.requests.append((self.path, self.headers.get("X-API-KEY"), body))
        port = self.server.server_address[1]
        payload = {
            "organic": [
                {"title": "Fact check", "link": "https://www.snopes.com/fact-check/bridge", "snippet": "rated false"},
                {
                    "title": "Bridge history",
                    "link": f"http://127.0.0.1:{port}/page",
                    "snippet": "short snippet",
                    "date": "Mar 3, 2019",
                },
            ]
        }
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802
        html = b"<html><title>History</title><body><p>The bridge opened in 1937.</p><script>x</script></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(html)))
        self.end_headers()
        self.wfile.write(html)

    def log_message(self, *args):
        pass


def test_serper_adapter_against_a_local_server(monkeypatch, settings):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Serper)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        ext = DefameSettings(search_backend="serper", serper_api_key="k-123", serper_url=f"http://127.0.0.1:{port}")
        ctx = DefameContext(config=DefameConfig(), settings=ext)
        claim = {"text": "The bridge opened in 1952.", "date": "2021-03-01"}
        # Loopback pages are refused unless allowed: the snippet stays.
        res = run_action(Action("web_search", "bridge opening year"), claim, {}, ctx, set())
        assert [s["url"] for s in res["sources"]] == [f"http://127.0.0.1:{port}/page"]
        assert res["sources"][0]["text"] == "short snippet"
        path, key, body = _Serper.requests[-1]
        assert path == "/search" and key == "k-123" and body["tbs"] == "cdr:1,cd_max:3/1/2021"
        monkeypatch.setattr(settings, "allowed_hosts", "127.0.0.1")
        res = run_action(Action("web_search", "bridge opening year"), claim, {}, ctx, set())
        assert res["sources"][0]["text"] == "The bridge opened in 1937." and res["sources"][0]["date"] == "2019-03-03"
    finally:
        server.shutdown()
    with pytest.raises(ValueError):
        SerperSearch(DefameSettings())
