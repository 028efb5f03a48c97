"""The action table and the Actor (spec §3.2 Stage 2).

Each :class:`ActionSpec` carries what the planning prompt shows (description,
how-to, format) and whether the action is *limited* (usable once per claim).
:func:`available_actions` decides what a claim is offered: the benchmark's
allowed actions, minus tools with no backend (an empty image index, no image in
the claim, no face model), minus limited actions already used.
:func:`run_action` executes one action and returns its raw result.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from agents.defame.config import DefameContext
from agents.defame.corpus import images_collection, phash_collection
from agents.defame.evidence import backend_ready
from agents.defame.labels import get_benchmark
from agents.defame.parsing import Action
from agents.defame.tools import images as image_tools
from agents.defame.tools.filters import Source, end_date, filter_sources, postprocess
from agents.defame.tools.web import CorpusSearch, SearxngSearch, SerperSearch

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ActionSpec:
    name: str
    description: str
    how_to: str
    format: str
    is_limited: bool = False
    takes_image: bool = False
    summarise: bool = True  # False: the tool's text is the evidence (geolocation, OCR, faces)


TOOLS: dict[str, ActionSpec] = {
    s.name: s
    for s in (
        ActionSpec(
            "web_search",
            "Searches the web (or the evidence corpus) for pages about a topic.",
            "Give a short, specific query; one topic per search.",
            'web_search("your query")',
        ),
        ActionSpec(
            "image_search",
            "Finds images whose captions or alt text match a query.",
            "Describe what the image should show.",
            'image_search("your query")',
        ),
        ActionSpec(
            "reverse_search",
            "Finds pages that contain the same image (also resized or recompressed).",
            "Use it to learn where and when an image appeared before.",
            "reverse_search(<image:k>)",
            is_limited=True,
            takes_image=True,
        ),
        ActionSpec(
            "geolocate",
            "Tells where an image was taken (EXIF GPS, or a vision model).",
            "Use it when the claimed place of an image matters.",
            "geolocate(<image:k>)",
            is_limited=True,
            takes_image=True,
            summarise=False,
        ),
        ActionSpec(
            "ocr",
            "Reads the text written in an image.",
            "Use it for signs, screenshots, documents.",
            "ocr(<image:k>)",
            is_limited=True,
            takes_image=True,
            summarise=False,
        ),
        ActionSpec(
            "detect_faces",
            "Counts and locates human faces in an image.",
            "Use it when people in the image matter.",
            "detect_faces(<image:k>)",
            is_limited=True,
            takes_image=True,
            summarise=False,
        ),
    )
}


def _web_engine(ctx: DefameContext, *, images: bool = False):
    ext = ctx.external()
    if ext.search_backend == "serper" and ext.serper_api_key is not None:
        return SerperSearch(ext, images=images)
    if ext.search_backend == "searxng" and ext.searxng_url:
        return SearxngSearch(ext, images=images)
    store = ctx.vectorstore()
    if images:
        return CorpusSearch(store, images_collection(ctx.config.corpus))
    return CorpusSearch(store, ctx.config.corpus, extra=ctx.extra_corpora)


def available_actions(claim: dict[str, Any], ctx: DefameContext, used_limited: list[str]) -> list[ActionSpec]:
    """The valid actions for this claim now (limited actions leave once used; check 2)."""
    cfg = ctx.config
    bench = get_benchmark(cfg.benchmark)
    has_image = bool(claim.get("images"))
    ext = ctx.external()
    out = []
    for spec in TOOLS.values():
        if bench.allowed_actions is not None and spec.name not in bench.allowed_actions:
            continue
        if cfg.tools is not None and spec.name not in cfg.tools:
            continue
        if spec.is_limited and spec.name in used_limited:
            continue
        if spec.takes_image and not has_image:
            continue
        if (
            spec.name == "image_search"
            and not backend_ready(ext)
            and ctx.vectorstore().count(images_collection(cfg.corpus)) == 0
        ):
            continue
        if spec.name == "reverse_search" and ctx.vectorstore().count(phash_collection(cfg.corpus)) == 0:
            continue
        if spec.name == "detect_faces" and not ext.face_model:
            continue
        out.append(spec)
    return out


def _search(action: Action, claim: dict[str, Any], ctx: DefameContext, seen: set[str]) -> list[Source]:
    cfg = ctx.config
    bench = get_benchmark(cfg.benchmark)
    limit = cfg.limit_per_search or bench.limit_per_search
    end = end_date(claim.get("date"), None, cfg.restrict_to_claim_date)
    engine = _web_engine(ctx, images=action.name == "image_search")
    raw = engine.search(action.argument, k=cfg.knn_neighbours, end=end, claim_id=claim.get("claim_id"))
    kept = filter_sources(raw, end=end, seen=seen, limit=limit)
    if isinstance(engine, SerperSearch) and ctx.external().scrape_results and action.name == "web_search":
        kept = [engine.scrape(s) for s in kept]
    return postprocess(
        kept,
        action.argument,
        keyword_filter=action.name == "web_search",
        keep=cfg.keyword_sentences,
        max_len=cfg.max_result_len,
    )


def _reverse(path: str, claim: dict[str, Any], ctx: DefameContext, seen: set[str]) -> list[Source]:
    store = ctx.vectorstore()
    hits = store.query(phash_collection(ctx.config.corpus), embedding=image_tools.phash_vector(path), k=10)
    sources = []
    for h in hits:
        dist = image_tools.hamming_from_cosine(h.distance)
        if dist > image_tools.MATCH_MAX_HAMMING:
            continue
        m = h.metadata or {}
        sources.append(
            Source(
                url=str(m.get("url", "")),
                title=str(m.get("title", "")),
                text=f"{m.get('caption', '')}",
                date=m.get("date"),
                image=m.get("image"),
                meta={"hamming": dist},
            )
        )
    end = end_date(claim.get("date"), None, ctx.config.restrict_to_claim_date)
    limit = ctx.config.limit_per_search or get_benchmark(ctx.config.benchmark).limit_per_search
    # One result per URL stem, no keyword filter for reverse search (spec §3.3).
    return filter_sources(sources, end=end, seen=seen, limit=limit, one_per_domain=False)


def run_action(
    action: Action, claim: dict[str, Any], media: dict[str, str], ctx: DefameContext, seen: set[str]
) -> dict[str, Any]:
    """Execute one action; returns ``{"action", "sources", "text", "summarise", "error"}``.

    Failures become an ``error`` entry (the fact-check goes on, the record says what failed).
    """
    spec = TOOLS[action.name]
    result: dict[str, Any] = {
        "action": action.to_dict(),
        "sources": [],
        "text": "",
        "summarise": spec.summarise,
        "error": None,
    }
    try:
        path = None
        if spec.takes_image:
            ref = action.image_id
            path = media.get(str(ref)) if ref is not None else None
            if path is None:
                raise ValueError(f"{action}: no such image in this claim")
        if action.name in ("web_search", "image_search"):
            result["sources"] = [s.to_dict() for s in _search(action, claim, ctx, seen)]
        elif action.name == "reverse_search":
            result["sources"] = [s.to_dict() for s in _reverse(path, claim, ctx, seen)]
        elif action.name == "geolocate":
            result["text"] = image_tools.geolocate(path, str(action.argument), ctx.external().vlm_model)
        elif action.name == "ocr":
            text = image_tools.ocr_text(path)
            result["text"] = (
                f'Text read in {action.argument} (Tesseract OCR): "{text}"'
                if text
                else f"No text could be read in {action.argument}."
            )
        elif action.name == "detect_faces":
            faces = image_tools.detect_faces(path, ctx.external().face_model or "")
            result["text"] = f"{len(faces)} face(s) detected in {action.argument}" + (
                ": " + "; ".join(f"box at ({x},{y}) size {w}x{h}" for x, y, w, h, _ in faces) if faces else "."
            )
    except Exception as exc:
        log.warning("action %s failed: %s", action, exc)
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result
