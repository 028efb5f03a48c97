"""Run a batch of generation requests through the gateway and keep every raw output in the database.

:func:`run_requests` is the one entry point: it creates (or resumes) an :class:`LlmEvalRun`, skips
requests whose ``key`` is already stored, and generates the rest either here (a thread pool: the
llama.cpp backend decodes concurrent requests in one batch) or as ``llm_eval.batch`` jobs fanned out
with :func:`core.jobs.dispatch.enqueue` / :func:`~core.jobs.dispatch.wait` (Celery workers, or this
process after ``steal_after`` when no worker picks them up).
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field
from sqlalchemy import select

from core.db.session import session_scope
from core.jobs import JobContext, null_context
from methods.llm_eval.models import LlmEvalOutput, LlmEvalRun

log = logging.getLogger(__name__)

MAX_PROMPT_CHARS = 60_000
MAX_BATCH = 200


class GenRequest(BaseModel):
    """One generation: a text prompt (sent as the user turn) or chat messages, and decoding options."""

    key: str = Field(..., min_length=1, max_length=200, description="Unique within the run.")
    prompt: str | None = Field(None, max_length=MAX_PROMPT_CHARS)
    messages: list[dict[str, str]] | None = Field(None, max_length=80)
    max_tokens: int = Field(50, ge=1, le=4096)
    stop: list[str] = Field(default_factory=list, max_length=8)
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    seed: int | None = None
    regex: str | None = Field(None, max_length=2000, description="Constrain a local model's output.")


class GenOutput(BaseModel):
    key: str
    text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    error: str | None = None


def generate(req: GenRequest, model: str) -> GenOutput:
    """One request through :func:`core.llm.complete`; a failure is kept as the output's ``error``."""
    from core.llm import complete

    extra: dict[str, Any] = {}
    if req.seed is not None:
        extra["seed"] = req.seed
    try:
        c = complete(
            req.prompt,
            messages=req.messages,
            model=model,
            max_tokens=req.max_tokens,
            temperature=req.temperature,
            stop=req.stop or None,
            regex=req.regex,
            tag="llm_eval",
            **extra,
        )
    except Exception as exc:  # a bad request must not sink a 700-item batch
        log.warning("generation %s failed: %s", req.key, exc)
        return GenOutput(key=req.key, error=f"{type(exc).__name__}: {exc}"[:2000])
    return GenOutput(
        key=req.key,
        text=c.text,
        prompt_tokens=c.prompt_tokens,
        completion_tokens=c.completion_tokens,
        latency_s=c.latency_s,
    )


# --- the run record ------------------------------------------------------------------------------


def create_run(benchmark: str, model: str, config: dict[str, Any] | None = None, *, resume: bool = False) -> str:
    """A new run id; with ``resume``, the latest run of the same benchmark, model and config that has not
    failed (an interrupted evaluation continues from its stored outputs, and a finished one is reused:
    its prompts are identical and greedy decoding is deterministic)."""
    if resume:
        with session_scope() as s:
            q = (
                select(LlmEvalRun)
                .where(
                    LlmEvalRun.benchmark == benchmark,
                    LlmEvalRun.model == model,
                    LlmEvalRun.status.in_(("running", "succeeded")),
                )
                .order_by(LlmEvalRun.created_at.desc())
            )
            for run in s.scalars(q):
                if run.config == (config or {}):
                    log.info("resuming evaluation run %s", run.id)
                    return run.id
    with session_scope() as s:
        run = LlmEvalRun(benchmark=benchmark, model=model, config=config or {}, metrics={})
        s.add(run)
        s.flush()
        return run.id


def finish_run(run_id: str, metrics: dict[str, Any], status: str = "succeeded") -> None:
    with session_scope() as s:
        run = s.get(LlmEvalRun, run_id)
        if run is None:
            raise LookupError(f"no evaluation run {run_id}")
        run.metrics, run.status = metrics, status


def stored_outputs(run_id: str, keys: Sequence[str] | None = None) -> dict[str, GenOutput]:
    """The outputs stored for a run (all, or those of ``keys``)."""
    with session_scope() as s:
        q = select(LlmEvalOutput).where(LlmEvalOutput.run_id == run_id)
        rows = s.scalars(q).all()
        wanted = set(keys) if keys is not None else None
        return {
            r.item_key: GenOutput(
                key=r.item_key,
                text=r.output,
                prompt_tokens=r.prompt_tokens,
                completion_tokens=r.completion_tokens,
                latency_s=r.latency_s,
                error=r.error,
            )
            for r in rows
            if wanted is None or r.item_key in wanted
        }


def run_seconds(run_id: str) -> tuple[int, float]:
    """(outputs stored, sum of their request latencies in seconds) — the model time a run cost when it was
    generated, whether or not this invocation reused it."""
    outs = stored_outputs(run_id)
    return len(outs), float(sum(o.latency_s for o in outs.values()))


def store_output(run_id: str, req: GenRequest, out: GenOutput) -> None:
    """Insert one output (a key already stored for the run is left as it is)."""
    with session_scope() as s:
        exists = s.scalar(
            select(LlmEvalOutput.id).where(LlmEvalOutput.run_id == run_id, LlmEvalOutput.item_key == req.key)
        )
        if exists:
            return
        prompt = req.prompt if req.prompt is not None else "\n\n".join(m.get("content", "") for m in req.messages or [])
        s.add(
            LlmEvalOutput(
                run_id=run_id,
                item_key=req.key,
                prompt=prompt,
                output=out.text,
                error=out.error,
                prompt_tokens=out.prompt_tokens,
                completion_tokens=out.completion_tokens,
                latency_s=out.latency_s,
            )
        )


# --- generating ----------------------------------------------------------------------------------


def generate_here(
    run_id: str | None,
    requests: Sequence[GenRequest],
    model: str,
    *,
    concurrency: int = 4,
    progress: JobContext | None = None,
) -> dict[str, GenOutput]:
    """Generate ``requests`` in this process (``concurrency`` threads); store each as it ends."""
    progress = progress or null_context()
    out: dict[str, GenOutput] = {}
    if not requests:
        return out
    with cf.ThreadPoolExecutor(max(1, concurrency)) as pool:
        futures = {pool.submit(generate, r, model): r for r in requests}
        for i, fut in enumerate(cf.as_completed(futures), start=1):
            req = futures[fut]
            res = fut.result()
            if run_id is not None:
                store_output(run_id, req, res)
            out[req.key] = res
            progress(i / len(requests), f"{i}/{len(requests)} generations")
    return out


def run_requests(
    requests: Sequence[GenRequest],
    *,
    model: str,
    run_id: str | None = None,
    mode: Literal["inline", "jobs"] = "inline",
    batch_size: int = 20,
    concurrency: int = 4,
    progress: JobContext | None = None,
    timeout_s: float = 6 * 3600,
    steal_after_s: float = 20.0,
) -> dict[str, GenOutput]:
    """Every request's output (stored ones reused), generated ``inline`` or as ``llm_eval.batch`` jobs.

    ``run_id`` is required for ``mode="jobs"`` (the batch jobs write the rows this function reads back).
    """
    progress = progress or null_context()
    keys = [r.key for r in requests]
    if len(set(keys)) != len(keys):
        raise ValueError("request keys must be unique within a run")
    done = stored_outputs(run_id, keys) if run_id else {}
    todo = [r for r in requests if r.key not in done]
    if todo:
        log.info("%d of %d generations to run (%s)", len(todo), len(requests), mode)
    if mode == "inline" or not todo:
        done.update(generate_here(run_id, todo, model, concurrency=concurrency, progress=progress))
    else:
        if run_id is None:
            raise ValueError("mode='jobs' needs a run_id: the batch jobs store their outputs under it")
        from core.jobs.dispatch import enqueue, wait

        size = max(1, min(batch_size, MAX_BATCH))
        ids = []
        for start in range(0, len(todo), size):
            chunk = todo[start : start + size]
            params = {
                "run_id": run_id,
                "model": model,
                "concurrency": concurrency,
                "requests": [r.model_dump() for r in chunk],
            }
            ids.append(enqueue("llm_eval.batch", params, idempotency_key=f"llm_eval:{run_id}:{chunk[0].key}"))
        progress(0.05, f"{len(ids)} batch job(s) queued")
        wait(ids, timeout=timeout_s, steal_after=steal_after_s, progress=progress)
        done.update(stored_outputs(run_id, [r.key for r in todo]))
    missing = [k for k in keys if k not in done]
    if missing:
        raise RuntimeError(f"{len(missing)} generation(s) missing after the run, e.g. {missing[:3]}")
    return {k: done[k] for k in keys}


class BatchParams(BaseModel):
    """Params of the ``llm_eval.batch`` job."""

    run_id: str = Field(..., min_length=1, max_length=32)
    model: str = Field(..., min_length=1, max_length=200, description="A litellm model string.")
    concurrency: int = Field(4, ge=1, le=32)
    requests: list[GenRequest] = Field(..., min_length=1, max_length=MAX_BATCH)
