"""Task proposers (spec §3.1): an LLM from the site's name and a few user demos, and the site-schema templates.

The LLM proposer follows the reference's prompt structure (think, then ``Output:`` and
JSONL of ``{"web_name", "id", "ques", "web"}``), samples at temperature 1.0, top-p 0.9,
and post-processes: lines before ``Output:`` are ignored, lines that are not JSON
objects with a known ``web_name`` and a sane question are dropped, and duplicate
questions (case/space-insensitive, also across the existing pool) are removed.
LLM-proposed tasks have no reference answer: only the LLM judge can reward them. The
deterministic template proposer keeps the loop supplied with verifiable tasks when
the local model writes junk; every task records which proposer made it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import re
from collections.abc import Iterable

from agents.pae import prompts
from agents.pae.sites.base import Site, SiteTask

log = logging.getLogger(__name__)

MAX_QUESTION_CHARS = 300
MIN_QUESTION_CHARS = 12


def _key(question: str) -> str:
    return " ".join(question.lower().split()).rstrip(" ?.!")


def parse_proposals(text: str, known_sites: dict[str, str], seen: Iterable[str] = ()) -> list[dict[str, str]]:
    """Valid, de-duplicated task dicts from a proposer reply.

    Args:
        text: the model's reply.
        known_sites: web_name → start URL/path; other web_names are dropped.
        seen: questions already in the pool (duplicates of them are dropped too).
    """
    idx = text.find("Output:")
    body = text[idx + len("Output:") :] if idx >= 0 else text
    seen_keys = {_key(q) for q in seen}
    out: list[dict[str, str]] = []
    for raw in body.splitlines():
        line = raw.strip().strip("`").rstrip(",").strip()
        if not line.startswith("{"):
            continue
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(d, dict):
            continue
        name, ques = d.get("web_name"), d.get("ques")
        if not isinstance(name, str) or name not in known_sites:
            continue
        if not isinstance(ques, str):
            continue
        ques = re.sub(r"\s+", " ", ques).strip()
        if not (MIN_QUESTION_CHARS <= len(ques) <= MAX_QUESTION_CHARS) or _key(ques) in seen_keys:
            continue
        seen_keys.add(_key(ques))
        out.append({"web_name": name, "id": str(d.get("id") or ""), "ques": ques, "web": known_sites[name]})
    return out


class LLMProposer:
    """Proposes tasks for a site through the gateway (spec sampling: T = 1.0, top-p 0.9)."""

    name = "llm"

    def __init__(
        self, model: str | None = None, max_tokens: int = 2048, temperature: float = 1.0, top_p: float = 0.9
    ) -> None:
        self.model, self.max_tokens, self.temperature, self.top_p = model, max_tokens, temperature, top_p
        self.raw_replies: list[str] = []

    def propose(
        self, site: Site, n: int, demos: list[str] | None = None, seen: Iterable[str] = (), seed: int | None = None
    ) -> list[SiteTask]:
        from core.llm import complete

        demos = list(demos or site.demos)
        web = f"/{site.name}/"
        demo_lines = "\n".join(
            json.dumps({"web_name": site.name, "id": f"{site.name}--demo{i}", "ques": q, "web": web})
            for i, q in enumerate(demos)
        )
        system = prompts.PROPOSER_SYSTEM.format(n=n, web_name=site.name, web=web)
        user = prompts.PROPOSER_USER.format(
            title=site.title, web_name=site.name, web=web, description=site.description, demos=demo_lines, n=n
        )
        extra = {"seed": seed} if seed is not None else {}
        reply = complete(
            user,
            system=system,
            model=self.model,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            tag="pae.proposer",
            **extra,
        ).text
        self.raw_replies.append(reply)
        found = parse_proposals(reply, {site.name: web}, seen=[*seen, *demos])
        tasks = [
            SiteTask(
                id=f"{site.name}--llm-{hashlib.sha1(_key(d['ques']).encode()).hexdigest()[:10]}",
                site=site.name,
                question=d["ques"],
                start_path=web,
                proposer="llm",
            )
            for d in found[:n]
        ]
        log.info("LLM proposer: %d valid tasks for %s (asked %d)", len(tasks), site.name, n)
        return tasks


class TemplateProposer:
    """The deterministic, site-schema-driven proposer (tasks carry references and solution plans)."""

    name = "template"

    def propose(self, site: Site, n: int, rng: random.Random, exclude: Iterable[str] = ()) -> list[SiteTask]:
        excluded = set(exclude)
        out: dict[str, SiteTask] = {}
        tries = 0
        while len(out) < n and tries < 20:
            for t in site.template_tasks(rng, n):
                if t.id not in excluded and t.id not in out and len(out) < n:
                    out[t.id] = t
            tries += 1
        return list(out.values())
