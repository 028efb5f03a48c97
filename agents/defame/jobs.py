"""DEFAME's job types and its ``reproduce`` experiment (the plug-in contract of docs/PLATFORM.md).

* ``defame.check``: fact-check one claim (text, images already stored by the API or CLI, date, author).
* ``defame.batch``: fact-check every claim of a dataset file (AVeriTeC / MOCHEG / VERITE format), with progress.
* ``reproduce defame``: AVeriTeC (oracle corpus) and the MOCHEG sample, DEFAME vs the no-evidence baseline.
"""

from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from agents.defame.config import PRESETS as DEFAME_PRESETS
from agents.defame.config import DefameConfig
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer
from core.jobs.registry import register_preparer
from core.ownership import LOCAL, job_owner, owned, private_collection

log = logging.getLogger(__name__)


def _allowed_roots() -> list[Path]:
    from agents.defame.media import media_dir
    from core.config import get_settings

    s = get_settings()
    return [media_dir().resolve(), Path(s.data_dir).resolve(), (Path(s.home) / "uploads").resolve()]


def _inside_allowed(path: str) -> str:
    p = Path(path).expanduser().resolve()
    if not any(p == r or r in p.parents for r in _allowed_roots()):
        raise ValueError(f"{path}: files must come from an upload or the data directory")
    if not p.is_file():
        raise ValueError(f"{path}: no such file")
    return str(p)


class CheckParams(BaseModel):
    """One claim to fact-check."""

    claim: str = Field(..., min_length=1, max_length=5000, description="The claim text.")
    images: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="Stored image paths (the key's uploads or the data directory).",
        json_schema_extra=owned("path"),
    )
    date: dt.date | None = Field(None, description="Claim date (YYYY-MM-DD); later sources are excluded.")
    author: str | None = Field(None, max_length=300)
    origin: str | None = Field(None, max_length=2000)
    benchmark: Literal["default", "averitec", "mocheg", "verite", "claimreview"] = "default"
    corpus: str = Field(
        "defame-default",
        min_length=3,
        max_length=200,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]+$",
        description="Chroma collection used as the offline web.",
    )
    model: str | None = Field(None, max_length=200, description="litellm model; default the configured one.")
    max_iterations: int = Field(3, ge=1, le=3)
    verdict: Literal["generate", "likelihood", "calibrated"] = Field(
        "generate",
        description="Judge's option: generated (the paper), or scored by likelihood, optionally calibrated "
        "against content-free inputs (local models; not in the paper).",
    )

    @field_validator("claim")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("the claim text is empty")
        return v.strip()

    @field_validator("images")
    @classmethod
    def _images_ok(cls, v: list[str]) -> list[str]:
        return [_inside_allowed(p) for p in v]

    def config(self) -> DefameConfig:
        return DefameConfig(
            model=self.model,
            benchmark=self.benchmark,
            corpus=self.corpus,
            max_iterations=self.max_iterations,
            verdict=self.verdict,
        )


@register_method(
    "defame.check",
    title="DEFAME fact-check",
    queue="cpu",
    description="Fact-check a claim (text + optional images) with the six-stage DEFAME agent.",
)
def check(params: CheckParams, progress: JobContext) -> Report:
    """Run DEFAME on one claim; stages stream into the job's progress messages."""
    from agents.defame.experiment import ClaimRequest, check_claim
    from agents.defame.report import fact_check_report

    req = ClaimRequest(
        text=params.claim, images=params.images, date=params.date, author=params.author, origin=params.origin
    )
    cfg = params.config()
    total = 6 * cfg.max_iterations

    steps = {"n": 0}

    def on_event(stage: str, info: dict[str, Any]) -> None:
        steps["n"] += 1
        detail = ", ".join(f"{k}={v}" for k, v in info.items() if k != "round")
        progress(min(0.95, steps["n"] / total), f"round {info.get('round')}: {stage} done ({detail})")

    progress(0.01, "planning")
    owner = job_owner(progress.job_id)  # the documents the submitting key added: searched beside the corpus
    own = (private_collection(cfg.corpus, owner),) if owner and owner != LOCAL else ()
    fc = check_claim(
        req,
        cfg,
        on_event=on_event,
        thread_id=f"job-{progress.job_id}" if progress.job_id else None,
        extra_corpora=own,
    )
    progress(1.0, f"verdict: {fc.label.name}")
    return fact_check_report(fc)


class BatchParams(BaseModel):
    """A dataset file to fact-check claim by claim."""

    dataset: Literal["averitec", "mocheg", "verite"] = "averitec"
    path: str | None = Field(
        None,
        description="Dataset file (the key's uploads or the data directory); default the shipped one.",
        json_schema_extra=owned("path"),
    )
    limit: int = Field(10, ge=1, le=1000)
    corpus: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]+$",
        max_length=200,
        description="Evidence collection; default the dataset's oracle corpus.",
    )
    model: str | None = Field(None, max_length=200)
    baseline: bool = Field(True, description="Also run the no-evidence baseline.")

    @field_validator("path")
    @classmethod
    def _path_ok(cls, v: str | None) -> str | None:
        return None if v is None else _inside_allowed(v)


@register_method(
    "defame.batch",
    title="DEFAME over a dataset",
    queue="cpu",
    description="Fact-check every claim of a dataset file; accuracy and macro-F1 vs gold.",
)
def batch(params: BatchParams, progress: JobContext) -> Report:
    from agents.defame.experiment import evaluate_dataset

    return evaluate_dataset(
        params.dataset,
        path=params.path,
        limit=params.limit,
        corpus=params.corpus,
        model=params.model,
        baseline=params.baseline,
        progress=progress,
    )


class DefameOptions(ReproducerOptions):
    """Options of ``paperworks reproduce defame``: a preset (agents/defame/config.py PRESETS) and overrides."""

    PRESETS = DEFAME_PRESETS
    preset: Literal["small", "tiny", "issue", "issue-1.5b", "summary"] = Field(
        "small",
        description="small (30+10 claims), tiny (6, smoke test), issue (100 claims, 135M, ~2 h), "
        "issue-1.5b (30 claims with the opt-in 1.5B model, hours), summary (the results document from the stored "
        "runs, seconds).",
    )
    limit: int = Field(30, ge=1, le=1000, description="AVeriTeC dev claims checked.")
    model: str | None = Field(None, max_length=200, description="litellm model; default the configured one.")
    mocheg_limit: int = Field(10, ge=0, le=1000, description="MOCHEG claims checked (0 = skip MOCHEG).")
    baseline: bool = Field(True, description="Also run the no-evidence baseline.")
    knowledge_store: Literal["shared", "per_claim"] = Field(
        "shared", description="shared: every claim's evidence in one corpus; per_claim: spec §6's per-claim store."
    )
    judge_tokens: int | None = Field(None, ge=16, le=2048, description="Judge budget (default the compact 64).")
    summary_prompt: Literal["paper", "lenient"] = Field(
        "paper",
        description="Source summaries: the paper's NONE prompt, or 'lenient' (the same NONE rule worded for small "
        "local models: NONE only for a result entirely about something else).",
    )
    verdict: Literal["generate", "likelihood", "calibrated"] = Field(
        "generate",
        description="Judge's option: generated and parsed (the paper), or scored by likelihood, optionally "
        "calibrated against content-free inputs (local models; not in the paper).",
    )
    from_runs: bool = Field(
        False,
        description="Rebuild the results document from the stored runs' per-claim predictions "
        "(docs/results/defame/issue-*; no LLM calls) instead of running DEFAME.",
    )
    workers: int = Field(
        1,
        ge=1,
        le=16,
        description="Claims checked at once (threads); a local llama.cpp model batches their calls "
        "(up to PAPERWORKS_LOCAL_PARALLEL slots).",
    )


@register_reproducer(
    "defame", options=DefameOptions, description="DEFAME vs no-evidence baseline on AVeriTeC (oracle corpus) and MOCHEG"
)
def reproduce(options: DefameOptions, progress: JobContext) -> Report:
    """The results document; the registry writes ``defame.md``."""
    from agents.defame.experiment import reproduce as run_reproduction
    from agents.defame.experiment import summarise_stored_runs

    if options.from_runs:
        return summarise_stored_runs("paperworks reproduce defame" + options.cli_options())
    return run_reproduction(
        limit=options.limit,
        model=options.model,
        mocheg_limit=options.mocheg_limit,
        baseline=options.baseline,
        progress=progress,
        knowledge_store=options.knowledge_store,
        judge_tokens=options.judge_tokens,
        command=options.cli_options(),
        workers=options.workers,
        summary_prompt=options.summary_prompt,
        verdict=options.verdict,
    )


@register_preparer("defame.nltk_data")
def prepare_nltk_data() -> str:
    """Build WordNet 3.0 + punkt_tab for the AVeriTeC scorer from local files (no network)."""
    from methods.averitec_eval.nltk_data import ensure_nltk_data

    return f"NLTK data (WordNet 3.0, punkt_tab) in {ensure_nltk_data()}"
