"""Fact-check one claim: prepare its images, run (or resume) the graph, and package the result.

:func:`check_claim` is what the job, the CLI, the API and the evaluation call.
The thread id defaults to a hash of the claim and the configuration, so running
the same check again after a crash resumes it, and after success returns the
stored result without new LLM calls.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from agents.defame.config import DefameConfig, DefameContext, Event
from agents.defame.labels import Label, get_benchmark
from agents.defame.report import evidence_list, render_document, stage_usage

log = logging.getLogger(__name__)

MAX_IMAGES = 8


class ClaimRequest(BaseModel):
    """A claim as people submit it: text, optional images (paths) and metadata."""

    text: str = Field(..., min_length=1, max_length=5000, description="The claim; may contain <image:k>.")
    images: list[str] = Field(default_factory=list, max_length=MAX_IMAGES, description="Image file paths.")
    date: dt.date | None = Field(None, description="When the claim was made (results after it are excluded).")
    author: str | None = Field(None, max_length=300)
    origin: str | None = Field(None, max_length=2000)
    claim_id: str | None = Field(None, max_length=100, description="Restrict the corpus to this claim's documents.")

    @field_validator("text")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the claim text is empty")
        return v.strip()


def media_dir() -> Path:
    from core.config import get_settings

    d = Path(get_settings().home) / "defame" / "media"
    d.mkdir(parents=True, exist_ok=True)
    return d


def store_image(data: bytes, *, max_pixels: int | None = None) -> Path:
    """Validate image bytes (decodable, not too large) and keep a content-addressed PNG/JPEG copy."""
    from PIL import Image

    from core.config import get_settings

    limit = max_pixels or get_settings().max_image_pixels
    # Pillow's process-wide bomb limit stays in force (it used to be switched off here for everyone);
    # our own, usually lower, limit below gives the clear message
    try:
        img = Image.open(io.BytesIO(data))
        w, h = img.size
    except Image.DecompressionBombError as exc:
        raise ValueError(f"image too large: {exc}") from None
    except Exception as exc:
        raise ValueError(f"not a readable image: {exc}") from None
    if w * h > limit:
        raise ValueError(f"image too large: {w}x{h} pixels (limit {limit})")
    try:
        img.verify()
    except Exception as exc:
        raise ValueError(f"corrupt image: {exc}") from None
    fmt = (img.format or "PNG").lower()
    ext = {"jpeg": ".jpg", "png": ".png", "webp": ".webp", "gif": ".gif", "bmp": ".bmp", "tiff": ".tif"}.get(
        fmt, ".png"
    )
    path = media_dir() / (hashlib.sha256(data).hexdigest()[:24] + ext)
    if not path.exists():
        path.write_bytes(data)
    return path


def to_claim(req: ClaimRequest) -> dict[str, Any]:
    """The graph's claim dict; images get ids 1..n and the text references them (prepended if absent)."""
    images = {str(i + 1): str(Path(p).resolve()) for i, p in enumerate(req.images)}
    text = req.text
    missing = [k for k in images if f"<image:{k}>" not in text]
    if missing:
        text = " ".join(f"<image:{k}>" for k in missing) + " " + text
    return {
        "text": text,
        "images": images,
        "date": req.date.isoformat() if req.date else None,
        "author": req.author,
        "origin": req.origin,
        "claim_id": req.claim_id,
    }


@dataclass
class FactCheck:
    """A finished (or refused) fact-check."""

    state: dict[str, Any]
    config: DefameConfig
    seconds: float = 0.0
    thread_id: str = ""
    resumed: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> Label:
        return Label(self.state.get("label") or Label.REFUSED.value)

    @property
    def dataset_label(self) -> str:
        return get_benchmark(self.config.benchmark).dataset_label(self.label)

    @property
    def markdown(self) -> str:
        return render_document(self.state)

    @property
    def model(self) -> str:
        """The model that answered (the configured default when the run did not name one)."""
        from core.config import get_settings

        return self.config.model or get_settings().llm_model

    def usage(self) -> dict[str, dict[str, float]]:
        return stage_usage(self.state.get("calls") or [], self.state.get("timings") or [])

    def to_json(self) -> dict[str, Any]:
        calls = self.state.get("calls") or []
        return {
            "verdict": self.label.value,
            "verdict_name": self.label.name,
            "dataset_label": self.dataset_label,
            "justification": self.state.get("justification") or "",
            "markdown": self.markdown,
            "record": self.state.get("record") or [],
            "evidence": evidence_list(self.state.get("record") or []),
            "media": self.state.get("media") or {},
            "rounds": self.state.get("iteration", 0),
            "usage": self.usage(),
            "llm_calls": len(calls),
            "calls": calls,
            "seconds": round(self.seconds, 3),
            "thread_id": self.thread_id,
            "resumed": self.resumed,
            "claim": self.state.get("claim"),
            "model": self.model,
            **self.extra,
            "config": self.config.model_dump(mode="json"),
        }


def prompts_fingerprint() -> str:
    """A hash of every prompt template and of the rule that reads the summaries: a reworded prompt or a changed
    relevance rule must not resume (or return) an old run."""
    from agents.defame import prompts
    from agents.defame.nodes import summarize

    texts = sorted((k, v) for k, v in vars(prompts).items() if k.isupper() and isinstance(v, str))
    texts.append(("relevance", summarize._ABSENCE.pattern + summarize._TURN.pattern))
    return hashlib.sha256(json.dumps(texts).encode()).hexdigest()[:16]


def thread_for(claim: dict[str, Any], config: DefameConfig) -> str:
    """The checkpoint thread of one check: the claim, the configuration and the prompts' wording."""
    blob = json.dumps(
        {"claim": claim, "config": config.model_dump(mode="json"), "prompts": prompts_fingerprint()},
        sort_keys=True,
        default=str,
    )
    return "defame-" + hashlib.sha256(blob.encode()).hexdigest()[:32]


def check_claim(
    request: ClaimRequest | dict[str, Any],
    config: DefameConfig | None = None,
    *,
    store: Any = None,
    checkpointer: Any = "default",
    thread_id: str | None = None,
    on_event: Event | None = None,
    extra_corpora: tuple[str, ...] = (),
) -> FactCheck:
    """Run DEFAME on one claim.

    Args:
        request: the claim (a :class:`ClaimRequest` or a graph claim dict with ``text``/``images``...).
        config: run configuration (benchmark, model, budgets...).
        store: vector store with the corpus (default: the configured one).
        checkpointer: "default" (SQLite/Postgres per settings), None (no checkpoints) or a saver.
        thread_id: checkpoint thread; default derived from claim and config.
        on_event: called with ``(stage, info)`` after every stage.
        extra_corpora: collections searched beside ``config.corpus`` (the submitting key's own documents).
    """
    from agents.defame.graph import build_graph
    from core.checkpoint import checkpointer as open_checkpointer

    config = config or DefameConfig()
    claim = to_claim(request) if isinstance(request, ClaimRequest) else dict(request)
    ctx = DefameContext(config=config, store=store, on_event=on_event, extra_corpora=extra_corpora)
    thread_id = thread_id or thread_for(claim, config)
    run_cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": 100}
    t0 = time.perf_counter()

    def _run(saver: Any) -> tuple[dict[str, Any], bool]:
        graph = build_graph(checkpointer=saver)
        if saver is None:
            return graph.invoke({"claim": claim}, run_cfg, context=ctx), False
        snap = graph.get_state(run_cfg)
        if snap.values and snap.next:  # interrupted: continue from the last finished stage
            log.info("resuming %s before %s", thread_id, snap.next)
            return graph.invoke(None, run_cfg, context=ctx), True
        if snap.values and not snap.next:  # finished before
            return dict(snap.values), True
        return graph.invoke({"claim": claim}, run_cfg, context=ctx), False

    from core.llm import track_usage

    with track_usage() as tally:  # the gateway's own count of this invocation's calls, by stage tag
        if checkpointer == "default":
            with open_checkpointer("defame") as saver:
                state, resumed = _run(saver)
        else:
            state, resumed = _run(checkpointer)
    gateway = {
        "calls": tally.calls,
        "prompt_tokens": tally.prompt_tokens,
        "completion_tokens": tally.completion_tokens,
        "by_tag": dict(tally.by_tag),
    }
    return FactCheck(
        state=dict(state),
        config=config,
        seconds=time.perf_counter() - t0,
        thread_id=thread_id,
        resumed=resumed,
        extra={"gateway_usage_this_invocation": gateway},
    )
