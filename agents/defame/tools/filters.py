"""Search-result post-processing shared by every search backend (spec §3.2 Stage 2, check 6).

Order of operations for one search: drop results published after the end date,
drop fact-checking and unscrapable/social sites, keep one result per base
domain, drop URLs already seen in this claim, then cut to the limit. Each kept
result's text is reduced to the sentences with the most query keywords, ``{{…}}``
is removed and the text is truncated to ``max_result_len`` characters.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

# Fact-checking sites (leakage) and sites that cannot be scraped or are social media.
FACT_CHECK_DOMAINS = frozenset(
    {
        "snopes.com",
        "politifact.com",
        "factcheck.org",
        "fullfact.org",
        "leadstories.com",
        "checkyourfact.com",
        "africacheck.org",
        "truthorfiction.com",
        "factcheck.afp.com",
        "healthfeedback.org",
        "climatefeedback.org",
        "sciencefeedback.co",
        "boomlive.in",
        "altnews.in",
        "vishvasnews.com",
        "newsmobile.in",
        "factly.in",
        "mediabiasfactcheck.com",
        "washingtonpost.com/news/fact-checker",
        "reuters.com/fact-check",
        "apnews.com/hub/ap-fact-check",
        "usatoday.com/story/news/factcheck",
        "factchecker.in",
        "poynter.org",
        "misbar.com",
        "logically.ai",
        "polygraph.info",
        "teyit.org",
        "correctiv.org",
        "maldita.es",
        "newtral.es",
        "aap.com.au/factcheck",
        "thequint.com/news/webqoof",
        "indiatoday.in/fact-check",
        "pesacheck.org",
        "dubawa.org",
        "verafiles.org",
        "rappler.com/newsbreak/fact-check",
        "euvsdisinfo.eu",
    }
)
UNSCRAPABLE_DOMAINS = frozenset(
    {
        "facebook.com",
        "twitter.com",
        "x.com",
        "instagram.com",
        "youtube.com",
        "youtu.be",
        "tiktok.com",
        "reddit.com",
        "linkedin.com",
        "pinterest.com",
        "threads.net",
        "t.me",
        "telegram.org",
        "bsky.app",
    }
)
_ARCHIVE = re.compile(r"^https?://web\.archive\.org/web/[^/]+/(.+)$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+")
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)
_WORD = re.compile(r"\w+")


@dataclass
class Source:
    """One search result (a web page, a corpus document or an image hit)."""

    url: str
    title: str = ""
    text: str = ""
    date: str | None = None  # ISO YYYY-MM-DD when known
    image: str | None = None  # a local image path, when the hit is an image
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = {"url": self.url, "title": self.title, "text": self.text, "date": self.date}
        if self.image:
            d["image"] = self.image
        if self.meta:
            d["meta"] = self.meta
        return d


def unwrap_archive(url: str) -> str:
    """The archived URL inside a ``web.archive.org/web/<ts>/<url>`` link (else the URL itself)."""
    m = _ARCHIVE.match(url.strip())
    if m:
        inner = m.group(1)
        return inner if re.match(r"^https?://", inner) else "http://" + inner
    return url


def base_domain(url: str) -> str:
    """``www.news.example.co.uk/x`` → ``example.co.uk``-ish: the host without ``www.``, last two labels
    (three when the second-to-last is a short country-code second level such as ``co``/``com``)."""
    host = (urlparse(unwrap_archive(url)).hostname or "").lower()
    host = host[4:] if host.startswith("www.") else host
    parts = host.split(".")
    if len(parts) >= 3 and parts[-2] in {"co", "com", "org", "net", "gov", "ac", "edu"} and len(parts[-1]) == 2:
        return ".".join(parts[-3:])
    return ".".join(parts[-2:]) if len(parts) >= 2 else host


def is_blocked(url: str, extra: Iterable[str] = ()) -> bool:
    """True for fact-checking sites and unscrapable/social sites (matched on host and path prefix)."""
    target = unwrap_archive(url).lower()
    parsed = urlparse(target)
    host = (parsed.hostname or "").removeprefix("www.")
    host_path = host + parsed.path
    for entry in (*FACT_CHECK_DOMAINS, *UNSCRAPABLE_DOMAINS, *extra):
        if "/" in entry:
            if host_path.startswith(entry) or host_path.endswith("." + entry):
                return True
        elif host == entry or host.endswith("." + entry):
            return True
    return False


def parse_date(value: str | dt.date | None) -> dt.date | None:
    """ISO ``YYYY-MM-DD`` (or a longer ISO timestamp), AVeriTeC's ``DD-MM-YYYY``, or None."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    s = str(value).strip()
    for fmt in ("%Y-%m-%d", "%d-%m-%Y", "%Y/%m/%d", "%b %d, %Y", "%B %d, %Y", "%d %b %Y"):
        try:
            return dt.datetime.strptime(s[: len(s)], fmt).date()
        except ValueError:
            continue
    try:
        return dt.datetime.fromisoformat(s.replace("Z", "+00:00")).date()
    except ValueError:
        return None


def end_date(claim_date: str | None, action_end: str | None, restrict: bool = True) -> dt.date | None:
    """The search's end date: the earlier of the claim date (when restricting) and the action's own."""
    dates = [d for d in (parse_date(claim_date) if restrict else None, parse_date(action_end)) if d is not None]
    return min(dates) if dates else None


def keyword_sentences(text: str, query: str, keep: int = 10) -> str:
    """The ``keep`` sentences containing the most query words, best first; the full text if none matches."""
    words = {w.lower() for w in _WORD.findall(query)}
    sentences = [s.strip() for s in _SENTENCE_SPLIT.split(text) if s.strip()]
    scored = []
    for i, s in enumerate(sentences):
        present = {w.lower() for w in _WORD.findall(s)}
        score = len(words & present)
        if score > 0:
            scored.append((score, i, s))
    if not scored:
        return text
    scored.sort(key=lambda t: (-t[0], t[1]))
    return " ".join(s for _, _, s in scored[:keep])


def clean_text(text: str, max_len: int) -> str:
    """Remove ``{{…}}`` template residue and cut to ``max_len`` characters."""
    return _TEMPLATE.sub("", text)[:max_len]


def filter_sources(
    sources: list[Source], *, end: dt.date | None, seen: set[str], limit: int, one_per_domain: bool = True
) -> list[Source]:
    """Apply the date, site, domain and seen-URL filters, then the limit (limit last, check 6)."""
    kept: list[Source] = []
    domains: set[str] = set()
    for src in sources:
        if end is not None:
            published = parse_date(src.date)
            if published is not None and published > end:
                continue
        if is_blocked(src.url):
            continue
        if src.url in seen:
            continue
        dom = base_domain(src.url)
        if one_per_domain and dom and dom in domains:
            continue
        domains.add(dom)
        kept.append(src)
    return kept[:limit]


def postprocess(sources: list[Source], query: str, *, keyword_filter: bool, keep: int, max_len: int) -> list[Source]:
    """Keyword sentence filter (not for image/reverse search) and cleanup of each result's text."""
    out = []
    for src in sources:
        text = keyword_sentences(src.text, query, keep) if keyword_filter else src.text
        out.append(
            Source(
                url=src.url,
                title=src.title,
                text=clean_text(text, max_len),
                date=src.date,
                image=src.image,
                meta=dict(src.meta),
            )
        )
    return out
