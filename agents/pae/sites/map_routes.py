"""MiniMap's geography: place lookup by name, nearby search and route times (stored or computed).

A route uses the stored measurement of :data:`agents.pae.sites.map_data.ROUTES` when
one exists, else a deterministic estimate from the coordinates: great-circle distance
times a road factor of 1.3; walking 5 km/h, cycling 15 km/h, driving 25 km/h for the
first 3 km then 85 km/h. Times are shown the way OpenStreetMap's router shows them
("16min", "1h 35min"), distances as "748m" / "1.7km".
"""

from __future__ import annotations

import math
import re

from agents.pae.sites.map_data import PLACES, ROUTES, Place

MODES = ("driving", "walking", "cycling")
BY_ID: dict[str, Place] = {p.id: p for p in PLACES}
_CATEGORY_WORDS: set[str] = set()  # filled below, once the normaliser exists
_ROAD_FACTOR = 1.3


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9 ]+", " ", text.lower().replace("'", "")).strip()


def _tokens(text: str) -> set[str]:
    return {t for t in _norm(text).split() if t not in {"the", "of", "at", "in", "on", "a"}}


def match_score(query: str, place: Place) -> float:
    """How well ``query`` names ``place``: 100 for an exact name/alias, else word overlap (0..1)."""
    q = _norm(query)
    if not q:
        return 0.0
    names = (place.name, *place.aliases)
    if any(q == _norm(n) for n in names):
        return 100.0
    qt = _tokens(query)
    if not qt:
        return 0.0
    best = 0.0
    for n in names:
        nt = _tokens(n)
        if nt:
            best = max(best, len(qt & nt) / len(qt | nt))
    return best


def resolve(query: str) -> Place | None:
    """The best-named place (ties: first in the table), or None when nothing shares a word."""
    best, score = None, 0.0
    for p in PLACES:
        s = match_score(query, p)
        if s > score:
            best, score = p, s
    return best if score > 0 else None


def search(query: str, limit: int = 10) -> list[Place]:
    """Places whose names/aliases/categories share words with ``query``, best first."""
    q = query.strip()[:200]
    scored = []
    for p in PLACES:
        s = match_score(q, p)
        if _norm(q) and _norm(q) in [_norm(c) for c in p.categories]:
            s = max(s, 0.5)
        if s > 0:
            scored.append((-s, p.name, p))
    return [p for _, _, p in sorted(scored, key=lambda t: (t[0], t[1]))[:limit]]


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def is_kind(place: Place, what: str) -> bool:
    """Does ``place`` fit the description ``what`` (a category like 'cafe' or a name like 'Starbucks')?"""
    w = _singular(_norm(what))
    if not w:
        return False
    if w in _CATEGORY_WORDS:  # a kind of place ("cafe", "airports"): categories only
        return any(_singular(_norm(c)) == w for c in place.categories)
    return _norm(place.name) == _norm(what) or _norm(what) in _norm(place.name)  # a name ("Starbucks")


_CATEGORY_WORDS.update(_singular(_norm(c)) for p in PLACES for c in p.categories)


def nearby(what: str, anchor: Place, limit: int = 10) -> list[tuple[Place, float, float]]:
    """Places of kind ``what`` sorted by walking distance from ``anchor``: (place, meters, minutes)."""
    hits = []
    for p in PLACES:
        if p.id != anchor.id and is_kind(p, what):
            m, t = route(anchor, p, "walking")
            hits.append((m, p.name, p, t))
    hits.sort(key=lambda h: (h[0], h[1]))
    return [(p, m, t) for m, _, p, t in hits[:limit]]


def haversine_m(a: Place, b: Place) -> float:
    r = 6371000.0
    p1, p2 = math.radians(a.lat), math.radians(b.lat)
    dp, dl = p2 - p1, math.radians(b.lon - a.lon)
    h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def _estimate(meters: float, mode: str) -> float:
    km = meters / 1000
    if mode == "walking":
        return km / 5 * 60
    if mode == "cycling":
        return km / 15 * 60
    return min(km, 3) / 25 * 60 + max(km - 3, 0) / 85 * 60


def route(a: Place, b: Place, mode: str) -> tuple[float, float]:
    """(meters, minutes) from ``a`` to ``b`` by ``mode``: the stored measurement or the estimate."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}")
    stored = ROUTES.get((a.id, b.id)) or ROUTES.get((b.id, a.id)) or {}
    meters, minutes = stored.get(mode, (None, None))
    if meters is None:
        meters = haversine_m(a, b) * _ROAD_FACTOR
    if minutes is None:
        minutes = _estimate(meters, mode)
    return float(meters), float(minutes)


def fmt_minutes(minutes: float) -> str:
    if minutes < 1:
        return "less than 1min"
    m = int(round(minutes))
    return f"{m}min" if m < 60 else f"{m // 60}h {m % 60}min"


def fmt_meters(meters: float) -> str:
    return f"{int(round(meters))}m" if meters < 1000 else f"{meters / 1000:.1f}km"
