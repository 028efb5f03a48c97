"""DEFAME's runs: one fact-check (the graph, checkpointed), a dataset with both systems, and the reproduction.

:func:`check_claim` is what the job, the CLI, the API and the evaluation call. The thread id defaults to
a hash of the claim, the configuration and the prompts' wording, so running the same check again after a
crash resumes it, and after success returns the stored result without new LLM calls.

AVeriTeC runs over the **oracle corpus** (gold answers of all 400 dev claims in Chroma, every other
claim's answers acting as distractors); MOCHEG over an oracle corpus of its sample's evidence texts.
Both are labelled as such in every table and are not comparable with the paper's numbers (real web /
knowledge store, GPT-4o). The results document of the stored 1.5B runs is rebuilt from their per-claim
predictions without LLM calls (:func:`stored_runs`; ``paperworks reproduce defame -o preset=summary``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from agents.defame.config import DefameConfig, DefameContext, Event, StageBudget
from agents.defame.corpus import ORACLE_COLLECTION, build_averitec_oracle
from agents.defame.datasets import Item, load, mocheg_documents
from agents.defame.document import evidence_list, render_document, stage_usage
from agents.defame.evaluate import ClaimOutcome, averitec_predictions, summarise
from agents.defame.labels import Label, get_benchmark
from agents.defame.nodes.judge import baseline_verdict
from agents.defame.report import dataset_report, run_report
from core.jobs import JobContext, Report

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


def run_items(
    items: list[Item],
    config: DefameConfig,
    *,
    store: Any = None,
    baseline: bool = True,
    defame: bool = True,
    checkpointer: Any = "default",
    on_claim: Callable[[int, int, ClaimOutcome], None] | None = None,
    workers: int = 1,
) -> list[ClaimOutcome]:
    """Fact-check every item with DEFAME (and the baseline); returns one outcome per item, in item order.

    ``workers`` > 1 checks that many claims at once in threads: with a local llama.cpp model their
    LLM calls share one batched decode step (the engine's ``local_parallel`` slots), which raises
    throughput on a CPU; each claim still runs its own graph and checkpoint thread. Per-claim stage
    seconds are then wall times of overlapping claims.
    """
    bench = get_benchmark(config.benchmark)

    def one(item: Item) -> ClaimOutcome:
        oc = ClaimOutcome(id=item.id, gold=item.gold)
        if defame:
            fc: FactCheck = check_claim(item.claim, config, store=store, checkpointer=checkpointer)
            # Stage wall times live in the (checkpointed) state, so a resumed run still counts its first part.
            oc.defame_seconds = sum(t["seconds"] for t in fc.state.get("timings") or []) or fc.seconds
            oc.defame = bench.dataset_label(fc.label)
            oc.defame_calls = list(fc.state.get("calls") or [])
            oc.rounds = int(fc.state.get("iteration", 0))
            oc.retrieved = [
                s.get("meta", {}) | {"url": s.get("url")}
                for b in fc.state.get("record") or []
                if b.get("kind") == "evidence"
                for e in b["items"]
                for s in e.get("sources", [])
            ]
            oc.searches = [
                [str((src.get("meta") or {}).get("gold_for", "")) for src in e.get("sources", [])]
                for b in fc.state.get("record") or []
                if b.get("kind") == "evidence"
                for e in b["items"]
                if (e.get("action") or {}).get("name") == "web_search"
            ]
            oc.result = fc.to_json()
        if baseline:
            from core.llm import track_usage

            t0 = time.perf_counter()
            with track_usage():
                label, _, calls = baseline_verdict(item.claim, DefameContext(config=config, store=store))
            oc.baseline_seconds = time.perf_counter() - t0
            oc.baseline = bench.dataset_label(label)
            oc.baseline_calls = calls
        return oc

    if workers <= 1 or len(items) <= 1:
        out: list[ClaimOutcome] = []
        for i, item in enumerate(items):
            out.append(one(item))
            if on_claim is not None:
                on_claim(i + 1, len(items), out[-1])
        return out

    from concurrent.futures import ThreadPoolExecutor, as_completed

    results: dict[int, ClaimOutcome] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="defame-claim") as pool:
        futures = {pool.submit(one, item): i for i, item in enumerate(items)}
        try:
            for fut in as_completed(futures):
                results[futures[fut]] = fut.result()
                if on_claim is not None:
                    on_claim(len(results), len(items), results[futures[fut]])
        except BaseException:
            for f in futures:
                f.cancel()  # claims not started yet never start; finished ones are in their checkpoints
            raise
    return [results[i] for i in range(len(items))]


MOCHEG_COLLECTION = "defame-mocheg-oracle"
COMPACT = dict(
    max_prompt_chars=3000,
    max_source_chars=600,
    budget=StageBudget(plan=96, summarize=48, merge=64, develop=64, judge=64, justify=64),
)
"""Budgets of the CPU reproduction (the paper allows 2,048 tokens per answer; a 135M model on shared cores
cannot afford that). The loop, limits, filters and parsing are unchanged."""

DEFAULT_FILES = {
    "averitec": "averitec/dev.json",
    "mocheg": "mocheg/Corpus2_for_controllable_generation_dry_run.csv",
    "verite": "verite/VERITE.csv",
}


def default_path(dataset: str) -> Path:
    from core.config import get_settings

    return Path(get_settings().data_dir) / DEFAULT_FILES[dataset]


def prepare_corpus(dataset: str, items: list[Item], path: Path, store: Any) -> str:
    """Build the dataset's oracle corpus (idempotent) and return its collection name."""
    if dataset == "averitec":
        build_averitec_oracle(store, json.loads(path.read_text(encoding="utf-8")))
        return ORACLE_COLLECTION
    if dataset == "mocheg":
        docs = mocheg_documents(load("mocheg", path))
        if store.count(MOCHEG_COLLECTION) != len(docs):
            store.add(
                MOCHEG_COLLECTION,
                ids=[d["id"] for d in docs],
                documents=[d["text"] for d in docs],
                metadatas=[{"url": d["url"], "title": "MOCHEG evidence", "gold_for": d["gold_for"]} for d in docs],
            )
        return MOCHEG_COLLECTION
    return "defame-default"


def run_dataset(
    dataset: str,
    *,
    path: str | Path | None,
    limit: int,
    corpus: str | None,
    model: str | None,
    baseline: bool,
    progress: JobContext,
    store: Any = None,
    knowledge_store: str = "shared",
    judge_tokens: int | None = None,
    workers: int = 1,
    summary_prompt: str = "paper",
    verdict: str = "generate",
) -> tuple[list, dict[str, Any], DefameConfig]:
    from core.vectorstore import get_vectorstore

    store = store or get_vectorstore()
    path = Path(path) if path else default_path(dataset)
    items = load(dataset, path, limit=limit)
    if not items:
        raise ValueError(f"no claims could be loaded from {path}")
    progress(0.02, f"building the {dataset} corpus")
    collection = corpus or prepare_corpus(dataset, items, path, store)
    compact = dict(COMPACT)
    if judge_tokens:
        compact["budget"] = COMPACT["budget"].model_copy(update={"judge": judge_tokens})
    cfg = DefameConfig(
        model=model,
        benchmark=dataset,
        corpus=collection,
        knowledge_store=knowledge_store,
        summary_prompt=summary_prompt,
        verdict=verdict,
        **compact,
    )
    if knowledge_store == "per_claim":  # spec §6: each claim searches only its own documents
        for item in items:
            item.claim["claim_id"] = item.id

    def on_claim(i: int, n: int, oc: Any) -> None:
        progress(
            0.05 + 0.95 * i / n,
            f"{dataset} claim {i}/{n}: DEFAME {oc.defame} / baseline {oc.baseline} (gold {oc.gold})",
        )

    outcomes = run_items(items, cfg, store=store, baseline=baseline, on_claim=on_claim, workers=workers)
    return outcomes, summarise(outcomes, cfg), cfg


def evaluate_dataset(
    dataset: str,
    *,
    path: str | None,
    limit: int,
    corpus: str | None,
    model: str | None,
    baseline: bool,
    progress: JobContext,
) -> Report:
    """``defame.batch``: one dataset, both systems, a metrics report."""
    outcomes, summary, cfg = run_dataset(
        dataset, path=path, limit=limit, corpus=corpus, model=model, baseline=baseline, progress=progress
    )
    return dataset_report(
        dataset,
        outcomes,
        summary,
        cfg,
        averitec_predictions(outcomes) if dataset == "averitec" else [],
    )


def reproduce(
    *,
    limit: int,
    model: str | None,
    mocheg_limit: int,
    baseline: bool,
    progress: JobContext,
    knowledge_store: str = "shared",
    judge_tokens: int | None = None,
    command: str = "",
    workers: int = 1,
    summary_prompt: str = "paper",
    verdict: str = "generate",
) -> Report:
    """The results document: AVeriTeC + MOCHEG, DEFAME vs baseline, parse rates, cost, the AVeriTeC scorer."""
    import time

    from core.config import get_settings
    from methods.averitec_eval.scorer import score

    t0 = time.perf_counter()
    av_out, av_sum, av_cfg = run_dataset(
        "averitec",
        path=None,
        limit=limit,
        corpus=None,
        model=model,
        baseline=baseline,
        progress=progress.sub(0.0, 0.75),
        knowledge_store=knowledge_store,
        judge_tokens=judge_tokens,
        workers=workers,
        summary_prompt=summary_prompt,
        verdict=verdict,
    )
    mo_out, mo_sum = [], {}
    if mocheg_limit > 0:
        mo_out, mo_sum, _ = run_dataset(
            "mocheg",
            path=None,
            limit=mocheg_limit,
            corpus=None,
            model=model,
            baseline=baseline,
            progress=progress.sub(0.75, 1.0),
            judge_tokens=judge_tokens,
            workers=workers,
            summary_prompt=summary_prompt,
            verdict=verdict,
        )
    minutes = (time.perf_counter() - t0) / 60
    stage_minutes = sum(o.defame_seconds + o.baseline_seconds for o in [*av_out, *mo_out]) / 60
    preds = averitec_predictions(av_out)
    refs = json.loads(default_path("averitec").read_text(encoding="utf-8"))
    scores = score(preds, [refs[int(o.id)] for o in av_out])
    settings = get_settings()
    model_name = model or settings.llm_model
    return run_report(
        av_out=av_out,
        av_sum=av_sum,
        av_cfg=av_cfg,
        mo_out=mo_out,
        mo_sum=mo_sum,
        preds=preds,
        scores=scores,
        minutes=minutes,
        stage_minutes=stage_minutes,
        model_name=model_name,
        embedding_model=settings.embedding_model,
        limit=limit,
        mocheg_limit=mocheg_limit,
        model=model,
        knowledge_store=knowledge_store,
        summary_prompt=summary_prompt,
        verdict=verdict,
        command=command,
        workers=workers,
    )


def _predictions_table(text: str) -> list[list[str]]:
    """The rows of a generated report's "Predictions (AVeriTeC)" table (id, gold, DEFAME, baseline, …)."""
    start = text.index("**Predictions (AVeriTeC)**")
    rows, started = [], False
    for line in text[start:].split("\n")[1:]:
        if line.startswith("|"):
            started = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0] != "id" and not set(cells[0]) <= {"-"}:
                rows.append(cells)
        elif started:
            break
    return rows


def stored_run(folder: Path, key: str) -> dict[str, Any]:
    """One stored run's per-claim predictions (ids, gold, DEFAME and baseline labels) from its generated report
    ``<folder>/<key>.md``, checked claim by claim against the DEFAME labels of ``<folder>/<key>/averitec_predictions.json``
    (and the gold labels against the AVeriTeC dev file when it is present)."""
    import re

    text = (folder / f"{key}.md").read_text(encoding="utf-8")
    rows = _predictions_table(text)
    if not rows:
        raise ValueError(f"{key}.md has no predictions table")
    preds = json.loads((folder / key / "averitec_predictions.json").read_text(encoding="utf-8"))
    by_id = {str(p["claim_id"]): p["label"] for p in preds}
    wrong = [r[0] for r in rows if by_id.get(r[0]) != r[2]]
    if wrong or len(by_id) != len(rows):
        raise ValueError(f"{key}: the report's DEFAME labels differ from averitec_predictions.json at claims {wrong}")
    dev = default_path("averitec")
    if dev.exists():
        gold = json.loads(dev.read_text(encoding="utf-8"))
        off = [r[0] for r in rows if gold[int(r[0])]["label"] != r[1]]
        if off:
            raise ValueError(f"{key}: gold labels differ from {dev} at claims {off}")
    model = re.search(r"model `([^`]+)`", text)
    took = re.search(r"this invocation took ([\d.]+) min", text)
    stage = re.search(r"([\d.]+) min of LLM stage time", text)
    summary_path = folder / key / "summary.json"
    stored = json.loads(summary_path.read_text(encoding="utf-8"))["averitec"] if summary_path.exists() else {}
    return {
        "key": key,
        "model": model.group(1) if model else "",
        "ids": [r[0] for r in rows],
        "gold": [r[1] for r in rows],
        "defame": [r[2] for r in rows],
        "baseline": [r[3] for r in rows],
        "invocation_min": float(took.group(1)) if took else None,
        "llm_stage_min": float(stage.group(1)) if stage else None,
        "retrieval": {
            k: stored.get("defame", {}).get(k)
            for k in ("searches", "on_claim_search_rate", "gold_source_share", "kept_own_rate", "kept_other_rate")
        },
    }


def stored_runs(folder: Path | None = None) -> list[dict[str, Any]]:
    """Every run of :data:`agents.defame.config.STORED_RUNS`, with its configuration and what superseded it."""
    from agents.defame.config import STORED_RUNS

    folder = folder or Path(__file__).resolve().parents[2] / "docs" / "results" / "defame"
    out = []
    for key, label, superseded_by in STORED_RUNS:
        run = stored_run(folder, key)
        out.append({**run, "configuration": label, "superseded_by": superseded_by})
    return out


def summarise_stored_runs(command: str, folder: Path | None = None) -> Report:
    """The results document of the stored runs (``-o preset=summary``): no LLM call, every number recomputed
    from the runs' per-claim predictions."""
    from agents.defame.report import stored_runs_report

    return stored_runs_report(stored_runs(folder), command=command)
