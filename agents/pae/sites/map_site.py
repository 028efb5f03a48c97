"""MiniMap: place search ("cafe near Hunt Library"), place pages and a directions form with travel modes.

Mirrors the OpenStreetMap pages the WebArena map tasks were written for: search, a
place page (address, coordinates in decimal degrees, phone, website, operator,
opening hours, borders of a state) and directions (press "Directions", enter two
places, choose car / walk / bike).
"""

from __future__ import annotations

import random

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from agents.pae.sites import map_routes as geo
from agents.pae.sites.base import Site, SiteTask, esc, page
from agents.pae.sites.map_data import PLACES, Place

_MODE_LABEL = {"driving": "Car", "walking": "Walk", "cycling": "Bike"}
_INFO_LABEL = {
    "phone": "Phone",
    "website": "Website",
    "operator": "Operator",
    "hours": "Opening hours",
    "about": "About",
    "borders": "Borders",
}


def _zip(p: Place) -> str | None:
    parts = [s.strip() for s in p.address.split(",")]
    for s in reversed(parts):
        if s.isdigit() and len(s) == 5:
            return s
    return None


class MapSite(Site):
    name = "map"
    title = "MiniMap"
    description = (
        "A map website: search places, see addresses, coordinates and details, and get directions "
        "with travel time and distance by car, on foot or by bike."
    )
    demos = (
        "How long does it take to walk from Carnegie Mellon University to Univ of Pittsburgh?",
        "What is the zip code of Chatham University?",
        "Tell me the closest cafe(s) to CMU Hunt library",
    )

    def _page(self, body: str, title: str = "", query: str = "") -> HTMLResponse:
        return HTMLResponse(
            page(
                self.title,
                "/map/",
                body,
                title=title,
                search_action="/map/search",
                search_placeholder="Search places",
                query=query,
            )
        )

    @staticmethod
    def _place_link(p: Place) -> str:
        return f"<a href='/map/place/{p.id}'>{esc(p.name)}</a>"

    def router(self) -> APIRouter:
        r = APIRouter()

        @r.get("/", response_class=HTMLResponse)
        def home() -> HTMLResponse:
            return self._page(
                "<h1>MiniMap</h1><p>Search for a place above, or search 'cafe near Hunt Library' "
                "for nearby places.</p><p><a href='/map/directions'>Directions</a></p>"
            )

        @r.get("/search", response_class=HTMLResponse)
        def search(q: str = "") -> HTMLResponse:
            q = q[:200]
            low = f" {q.lower()} "
            if " near " in low:
                what, where = q[: low.index(" near ")].strip(), q[low.index(" near ") + 5 :].strip()
                anchor = geo.resolve(where)
                if anchor is None:
                    return self._page(f"<p>No place matches '{esc(where)}'.</p>", query=q)
                rows = []
                for p, meters, minutes in geo.nearby(what, anchor):
                    dm, dt_ = geo.route(anchor, p, "driving")
                    rows.append(
                        f"<div class='card'>{self._place_link(p)}<br><span>{esc(p.full_address)}</span>"
                        f"<br><span class='muted'>walk {geo.fmt_meters(meters)} ({geo.fmt_minutes(minutes)})"
                        f" | drive {geo.fmt_meters(dm)} ({geo.fmt_minutes(dt_)})</span></div>"
                    )
                body = f"<h2>{esc(what)} near {esc(anchor.name)}, nearest first</h2>" + (
                    "".join(rows) or f"<p>No {esc(what)} found near {esc(anchor.name)}.</p>"
                )
                return self._page(body, title="Nearby", query=q)
            hits = geo.search(q)
            rows = "".join(
                f"<div class='card'>{self._place_link(p)}<br><span class='muted'>{esc(p.full_address)}</span></div>"
                for p in hits
            )
            return self._page(
                f"<h2>Results for '{esc(q)}'</h2>{rows or '<p>No places found.</p>'}", title="Search", query=q
            )

        @r.get("/place/{pid}", response_class=HTMLResponse)
        def place(pid: str) -> HTMLResponse:
            p = geo.BY_ID.get(pid)
            if p is None:
                return self._page("<p>Place not found.</p>")
            rows = [
                f"<tr><th>Address</th><td>{esc(p.full_address)}</td></tr>",
                f"<tr><th>Type</th><td>{esc(', '.join(p.categories))}</td></tr>",
                f"<tr><th>Coordinates</th><td>{p.lat}, {p.lon}</td></tr>",
            ]
            rows += [
                f"<tr><th>{_INFO_LABEL[k]}</th><td>{esc(v)}</td></tr>" for k, v in p.info.items() if k in _INFO_LABEL
            ]
            return self._page(
                f"<h1>{esc(p.name)}</h1><table>{''.join(rows)}</table>"
                f"<p><a href='/map/directions?from={esc(p.name)}'>Directions from here</a></p>",
                title=p.name,
            )

        @r.get("/directions", response_class=HTMLResponse)
        def directions_page(request: Request) -> HTMLResponse:
            # read the query string directly: "from" is not a valid Python parameter name
            qp = request.query_params
            return self._page(
                self._directions_body(qp.get("from", ""), qp.get("to", ""), qp.get("mode", "driving")),
                title="Directions",
            )

        return r

    def _directions_body(self, src: str, dst: str, mode: str) -> str:
        src, dst = src[:200], dst[:200]
        mode = mode if mode in geo.MODES else "driving"
        buttons = "".join(f"<button type='submit' name='mode' value='{m}'>{_MODE_LABEL[m]}</button>" for m in geo.MODES)
        form = (
            "<h2>Directions</h2><form action='/map/directions' method='get'>"
            f"<input type='text' name='from' aria-label='From' placeholder='From' value='{esc(src)}'> "
            f"<input type='text' name='to' aria-label='To' placeholder='To' value='{esc(dst)}'> {buttons}</form>"
        )
        if not (src and dst):
            return form + "<p>Enter a start and a destination.</p>"
        a, b = geo.resolve(src), geo.resolve(dst)
        if a is None or b is None:
            missing = src if a is None else dst
            return form + f"<p>No place matches '{esc(missing)}'.</p>"
        meters, minutes = geo.route(a, b, mode)
        return (
            form + f"<div class='card'><b>{_MODE_LABEL[mode]}</b> from {self._place_link(a)} to "
            f"{self._place_link(b)}<br>Distance: {geo.fmt_meters(meters)}<br>"
            f"Time: {geo.fmt_minutes(minutes)}</div>"
        )

    # --- template tasks --------------------------------------------------------------------------
    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:
        local = [
            p
            for p in PLACES
            if p.lat > 40.40
            and p.lat < 40.47
            and p.lon > -80.0
            and "address" not in p.categories
            and "street" not in p.categories
        ]
        zips = [p for p in PLACES if _zip(p) and "address" not in p.categories]
        out: list[SiteTask] = []
        kinds = ["zip", "walk", "coords", "drive"]
        for i in range(n):
            kind = kinds[i % len(kinds)]
            if kind == "zip":
                p = rng.choice(zips)
                out.append(
                    self.task(
                        f"zip-{p.id}",
                        f"What is the zip code of {p.name}?",
                        _zip(p),
                        [("type", "Search places", p.name), ("click", p.name, ""), ("answer", "", _zip(p))],
                        kind,
                        kind="exact_match",
                    )
                )
            elif kind == "coords":
                p = rng.choice(local)
                ans = [str(p.lat)[:6], str(p.lon)[:7]]  # truncated, as WebArena's references
                out.append(
                    self.task(
                        f"coords-{p.id}",
                        f"Tell me the coordinates of {p.name} in DD format.",
                        ans,
                        [("type", "Search places", p.name), ("click", p.name, ""), ("answer", "", f"{p.lat}, {p.lon}")],
                        kind,
                    )
                )
            else:
                a, b = rng.sample(local, 2)
                mode = "walking" if kind == "walk" else "driving"
                _, minutes = geo.route(a, b, mode)
                t = geo.fmt_minutes(minutes)
                verb = "walk" if mode == "walking" else "drive"
                plan = [("click", "Directions", ""), ("type", "From", a.name), ("type", "To", b.name)]
                if mode == "walking":
                    plan.append(("click", "Walk", ""))
                out.append(
                    self.task(
                        f"{verb}-{a.id}-{b.id}",
                        f"How long does it take to {verb} from {a.name} to {b.name}?",
                        t,
                        [*plan, ("answer", "", t)],
                        kind,
                        kind="fuzzy_match",
                    )
                )
        return out
