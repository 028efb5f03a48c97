"""Task proposers (spec §3.1): an LLM from the site's name and a few user demos, and the site-schema templates.

The LLM proposer follows the reference's prompt structure (think, then ``Output:`` and
JSONL of ``{"web_name", "id", "ques", "web"}``), samples at temperature 1.0, top-p 0.9,
and post-processes: lines before ``Output:`` are ignored, lines that are not JSON
objects with a known ``web_name`` and a sane question are dropped, and duplicate
questions (case/space-insensitive, also across the existing pool) are removed.
With ``constrained=True`` (local models) the reply is decoded under the task JSON schema
(:func:`task_schema`: ``{"tasks": [{"web_name", "id", "ques", "web"}, ...]}``, exactly as many tasks as
asked for, with this site's name and URL as the only allowed values), so every reply parses; the
unconstrained reply's format-error rate (:func:`format_errors`) is what the schema
removes. LLM-proposed tasks have no reference answer: only the LLM judge can reward
them. The deterministic template proposer keeps the loop supplied with verifiable tasks when
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


def task_schema(web_name: str, web: str, n: int) -> dict:
    """The JSON schema a constrained proposer reply must follow: exactly n tasks for this one site.

    Exactly, not "1 to n": under "1 to n" the 1.5B model closed the array after its first task in every
    reply (`paperworks pae proposer-probe`, 8 of 8 replies), so the schema cost four of the five tasks asked for.
    """
    task = {
        "type": "object",
        "properties": {
            "web_name": {"type": "string", "enum": [web_name]},
            "id": {"type": "string", "pattern": rf"^{re.escape(web_name)}--[0-9]{{1,3}}$"},
            "ques": {"type": "string", "minLength": MIN_QUESTION_CHARS, "maxLength": 160},
            "web": {"type": "string", "enum": [web]},
        },
        "required": ["web_name", "id", "ques", "web"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"tasks": {"type": "array", "items": task, "minItems": max(1, n), "maxItems": max(1, n)}},
        "required": ["tasks"],
        "additionalProperties": False,
    }


def format_errors(text: str) -> tuple[int, int]:
    """(task lines that are not a well-formed task object, task-like lines) of an unconstrained reply.

    A task-like line is any non-empty line after ``Output:`` (or of the whole reply without it);
    it is well-formed when it parses as a JSON object with string ``web_name`` and ``ques``.
    """
    idx = text.find("Output:")
    body = text[idx + len("Output:") :] if idx >= 0 else text
    lines = [ln.strip().strip("`").rstrip(",").strip() for ln in body.splitlines()]
    lines = [ln for ln in lines if ln and ln not in ("json", "jsonl")]
    bad = 0
    for ln in lines:
        try:
            d = json.loads(ln)
            ok = isinstance(d, dict) and isinstance(d.get("web_name"), str) and isinstance(d.get("ques"), str)
        except json.JSONDecodeError:
            ok = False
        bad += not ok
    return bad, len(lines)


def _lines_from_json(text: str) -> str:
    """A constrained reply's tasks as JSONL after ``Output:`` (so :func:`parse_proposals` reads both forms).

    A reply cut off by the token budget is not valid JSON: its complete task objects are kept (a task object
    holds no braces of its own, so each is an innermost ``{...}``), the unfinished last one is lost.
    """
    try:
        tasks = json.loads(text).get("tasks") or []
    except (json.JSONDecodeError, AttributeError):
        tasks = []
        for m in re.finditer(r"\{[^{}]*\}", text):
            try:
                tasks.append(json.loads(m.group(0)))
            except json.JSONDecodeError:
                continue
    return "Output:\n" + "\n".join(json.dumps(t) for t in tasks if isinstance(t, dict))


class LLMProposer:
    """Proposes tasks for a site through the gateway (spec sampling: T = 1.0, top-p 0.9)."""

    name = "llm"

    def __init__(
        self,
        model: str | None = None,
        max_tokens: int = 2048,
        temperature: float = 1.0,
        top_p: float = 0.9,
        constrained: bool = False,
    ) -> None:
        self.model, self.max_tokens, self.temperature, self.top_p = model, max_tokens, temperature, top_p
        self.constrained = constrained
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
        extra: dict = {"seed": seed} if seed is not None else {}
        if self.constrained:
            from core.config import get_settings

            if (self.model or get_settings().llm_model).startswith(("local/", "scripted/")):
                extra["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "tasks", "schema": task_schema(site.name, web, n)},
                }
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
        if "response_format" in extra:
            reply = _lines_from_json(reply)
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

    def propose(
        self,
        site: Site,
        n: int,
        rng: random.Random,
        exclude: Iterable[str] = (),
        templates: Iterable[str] | None = None,
    ) -> list[SiteTask]:
        """``n`` distinct tasks not in ``exclude``, only of ``templates`` when given."""
        excluded = set(exclude)
        allowed = set(templates) if templates is not None else None
        out: dict[str, SiteTask] = {}
        tries = 0
        while len(out) < n and tries < 20:
            for t in site.template_tasks(rng, n if allowed is None else 6 * n):
                if allowed is not None and t.template not in allowed:
                    continue
                if t.id not in excluded and t.id not in out and len(out) < n:
                    out[t.id] = t
            tries += 1
        return list(out.values())


def site_templates(site: Site) -> list[str]:
    """The template names a site's proposer draws from (sorted)."""
    return sorted({t.template for t in site.template_tasks(random.Random(0), 60)})


def heldout_templates(site: Site, k: int, seed: int) -> list[str]:
    """``k`` whole templates of ``site`` kept for the unseen-task test (never trained or demonstrated on)."""
    names = site_templates(site)
    k = min(k, max(0, len(names) - 1))  # at least one template stays for training
    return sorted(random.Random(f"holdout:{seed}:{site.name}").sample(names, k))
