"""DailyBrief: a news site (sections, article pages with author and date, search)."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

from agents.pae.sites.base import Site, SiteTask, esc, page, words_match

SECTIONS = ("World", "Business", "Science", "Sport", "Culture", "Technology")
SUBJECTS = (
    "City council",
    "Local team",
    "Research lab",
    "A startup",
    "The museum",
    "Farm union",
    "The orchestra",
    "Engineering firm",
    "Student club",
    "The central bank",
    "Volunteer group",
    "A robot",
)
VERBS = ("unveils", "celebrates", "questions", "launches", "delays", "wins", "rebuilds", "tests", "plans", "rejects")
OBJECTS = (
    "new bridge",
    "solar project",
    "summer festival",
    "budget plan",
    "river clean-up",
    "chess title",
    "rail line",
    "vaccine trial",
    "art exhibition",
    "flood defences",
    "data centre",
    "marathon route",
)
AUTHORS = ("Maya Chen", "Tom Hughes", "Priya Nair", "Lucas Silva", "Sara Ahmed", "Jonas Berg", "Nina Kowalski")


@dataclass(frozen=True)
class Article:
    id: int
    title: str
    section: str
    author: str
    date: dt.date
    words: int
    summary: str


def make_articles(seed: int) -> list[Article]:
    rng = random.Random(f"news:{seed}")
    seen: set[str] = set()
    out: list[Article] = []
    start = dt.date(2024, 1, 1)
    while len(out) < 48:
        title = f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
        if title in seen:
            continue
        seen.add(title)
        out.append(
            Article(
                id=len(out) + 1,
                title=title,
                section=rng.choice(SECTIONS),
                author=rng.choice(AUTHORS),
                date=start + dt.timedelta(days=rng.randint(0, 365)),
                words=rng.randint(300, 1800),
                summary=f"{title}. Reporting from the {rng.choice(('north', 'south', 'east', 'west'))} "
                "district, with reactions from residents.",
            )
        )
    return out


class NewsSite(Site):
    name = "news"
    title = "DailyBrief"
    description = "A news website with sections (World, Business, Science, Sport, Culture, Technology) and articles."
    demos = (
        "Who wrote the article 'Engineering firm tests rail line'?",
        "On what date was 'Farm union celebrates summer festival' published?",
        "What is the latest article in the Science section?",
    )

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        self.articles = make_articles(seed)
        self.by_id = {a.id: a for a in self.articles}

    def _page(self, body: str, title: str = "", query: str = "") -> HTMLResponse:
        return HTMLResponse(
            page(
                self.title,
                "/news/",
                body,
                title=title,
                search_action="/news/search",
                search_placeholder="Search news",
                query=query,
            )
        )

    def _listing(self, items: list[Article]) -> str:
        return (
            "".join(
                f"<div class='card'><a href='/news/article/{a.id}'>{esc(a.title)}</a> "
                f"<span class='muted'>{a.section}, {a.date.isoformat()}</span></div>"
                for a in items
            )
            or "<p>No articles found.</p>"
        )

    def router(self) -> APIRouter:
        r = APIRouter()

        @r.get("/", response_class=HTMLResponse)
        def home() -> HTMLResponse:
            secs = " | ".join(f"<a href='/news/section/{s}'>{s}</a>" for s in SECTIONS)
            latest = sorted(self.articles, key=lambda a: a.date, reverse=True)[:6]
            return self._page(f"<p>{secs}</p><h2>Latest</h2>{self._listing(latest)}")

        @r.get("/section/{name}", response_class=HTMLResponse)
        def section(name: str) -> HTMLResponse:
            items = sorted((a for a in self.articles if a.section == name), key=lambda a: a.date, reverse=True)
            return self._page(f"<h2>{esc(name)} (newest first)</h2>{self._listing(items)}", title=name)

        @r.get("/search", response_class=HTMLResponse)
        def search(q: str = "") -> HTMLResponse:
            q = q[:200]
            hits = [a for a in self.articles if words_match(q, f"{a.title} {a.section} {a.author}")]
            return self._page(
                f"<h2>News matching '{esc(q)}' ({len(hits)})</h2>{self._listing(hits[:20])}", title="Search", query=q
            )

        @r.get("/article/{aid}", response_class=HTMLResponse)
        def article(aid: int) -> HTMLResponse:
            a = self.by_id.get(aid)
            if a is None:
                return self._page("<p>Article not found.</p>")
            return self._page(
                f"<h1>{esc(a.title)}</h1><p class='muted'>By {esc(a.author)} | Published {a.date.isoformat()} | "
                f"Section: {a.section} | {a.words} words</p><p>{esc(a.summary)}</p>",
                title=a.title,
            )

        return r

    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:
        out: list[SiteTask] = []
        kinds = ["author", "date", "section", "latest"]
        for i in range(n):
            kind = kinds[i % len(kinds)]
            a = rng.choice(self.articles)
            find = [("type", "Search news", a.title), ("click", a.title, "")]
            if kind == "author":
                out.append(
                    self.task(
                        f"author-{a.id}",
                        f"Who wrote the article '{a.title}'?",
                        a.author,
                        [*find, ("answer", "", a.author)],
                        kind,
                    )
                )
            elif kind == "date":
                out.append(
                    self.task(
                        f"date-{a.id}",
                        f"On what date was the article '{a.title}' published?",
                        a.date.isoformat(),
                        [*find, ("answer", "", a.date.isoformat())],
                        kind,
                    )
                )
            elif kind == "section":
                out.append(
                    self.task(
                        f"section-{a.id}",
                        f"In which section is the article '{a.title}'?",
                        a.section,
                        [*find, ("answer", "", a.section)],
                        kind,
                    )
                )
            else:
                latest = max((b for b in self.articles if b.section == a.section), key=lambda b: (b.date, -b.id))
                out.append(
                    self.task(
                        f"latest-{a.section}",
                        f"What is the latest article in the {a.section} section?",
                        latest.title,
                        [("click", a.section, ""), ("answer", "", latest.title)],
                        kind,
                    )
                )
        return out
