"""What every self-hosted PAE website provides: pages, seeded content, tasks and ground truth.

A site is a small server-rendered HTML application (no JavaScript framework) mounted
under ``/<name>/`` of the sites server. Besides its pages it knows its own ground
truth, so it can

* emit *template tasks* (spec §6, "deterministic site-schema proposer"): a question,
  a WebArena-style string-match reference (``exact_match`` / ``must_include`` /
  ``fuzzy_match``) and a high-level solution plan a scripted policy can follow;
* describe itself to the LLM proposer (name, description, example user tasks).

The oracle evaluator (:mod:`agents.pae.sites.grading`) grades an answer against a
task's reference.
"""

from __future__ import annotations

import html
import random
from dataclasses import asdict, dataclass, field
from typing import Any

from fastapi import APIRouter

# A plan step the scripted policy can ground on a labelled page:
#   ("type", <element hint>, text)   type text into the input whose label matches the hint
#   ("click", <link text>, "")       click the element whose text matches
#   ("select", <element hint>, value) choose an option of a <select>
#   ("answer", "", text)             finish with ANSWER; text
PlanStep = tuple[str, str, str]


@dataclass
class SiteTask:
    """One task on one site, with the data its oracle needs."""

    id: str
    site: str
    question: str
    start_path: str
    reference: dict[str, Any] = field(default_factory=dict)  # WebArena string-match reference
    plan: list[PlanStep] = field(default_factory=list)
    template: str = ""  # which template produced it ("" for LLM-proposed or held-out tasks)
    proposer: str = "template"  # "template", "llm", "heldout"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["plan"] = [list(p) for p in self.plan]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SiteTask:
        d = dict(d)
        d["plan"] = [tuple(p) for p in d.get("plan") or []]
        return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})

    @property
    def has_reference(self) -> bool:
        return bool(self.reference)


class Site:
    """Base class: subclasses set the metadata and implement :meth:`router` and :meth:`template_tasks`."""

    name: str = ""
    title: str = ""
    description: str = ""
    demos: tuple[str, ...] = ()  # example tasks a typical user would ask (proposer context)

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def router(self) -> APIRouter:  # pragma: no cover - abstract
        raise NotImplementedError

    def template_tasks(self, rng: random.Random, n: int) -> list[SiteTask]:  # pragma: no cover - abstract
        raise NotImplementedError

    # helpers -----------------------------------------------------------------
    def task(
        self,
        key: str,
        question: str,
        answer: Any,
        plan: list[PlanStep],
        template: str,
        start_path: str | None = None,
        kind: str = "must_include",
    ) -> SiteTask:
        """A template task whose reference is ``answer`` under the given match kind."""
        ref: dict[str, Any] = {
            kind: answer if kind == "exact_match" else (list(answer) if isinstance(answer, (list, tuple)) else [answer])
        }
        return SiteTask(
            id=f"{self.name}--{key}",
            site=self.name,
            question=question,
            start_path=start_path or f"/{self.name}/",
            reference=ref,
            plan=plan,
            template=template,
        )


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


_CSS = """
body{font-family:DejaVu Sans,Arial,sans-serif;margin:0;background:#fafafa;color:#222;font-size:15px}
header{background:#2d4a7a;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:center}
header a{color:#fff;text-decoration:none;font-weight:bold}
header form{margin-left:auto}
main{padding:14px 22px;max-width:900px}
input,select,button{font-size:15px;padding:4px 8px;margin:2px}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;margin:8px 0}
.muted{color:#666;font-size:13px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px}
.scrollbox{height:160px;overflow:auto;border:1px solid #ccc;padding:6px}
"""


def page(
    site_title: str,
    home: str,
    body: str,
    *,
    title: str = "",
    search_action: str | None = None,
    search_placeholder: str = "Search",
    query: str = "",
) -> str:
    """The common page shell: a header with the site name, an optional search box, and ``body``."""
    form = ""
    if search_action:
        form = (
            f'<form action="{esc(search_action)}" method="get">'
            f'<input type="text" name="q" aria-label="{esc(search_placeholder)}" '
            f'placeholder="{esc(search_placeholder)}" value="{esc(query)}">'
            '<button type="submit">Search</button></form>'
        )
    head_title = f"{title} - {site_title}" if title else site_title
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{esc(head_title)}</title>"
        f"<style>{_CSS}</style></head><body><header><a href='{esc(home)}'>{esc(site_title)}</a>{form}"
        f"</header><main>{body}</main></body></html>"
    )


def words_match(query: str, text: str) -> bool:
    """Every query word appears in ``text`` (case-insensitive); an empty query matches all."""
    q = [w for w in query.lower().split() if w]
    t = text.lower()
    return all(w in t for w in q)
