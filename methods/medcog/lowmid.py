"""The low/mid-level run: build every few-shot request, generate them through the harness, score.

Each (task, item, variant, repeat) gets its own demo sample from ``random.Random`` seeded by
``seed`` and that tuple, so the five repeats differ, a batch job reproduces the same prompts
anywhere, and re-running resumes from the stored outputs.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from core.jobs import JobContext, null_context
from methods.llm_eval.harness import GenRequest, create_run, finish_run, run_requests
from methods.llm_eval.tokens import TokenCounter, token_counter
from methods.medcog.data import DATASETS, TASKS, Dataset, Task, load_task, select_items, variants
from methods.medcog.prompts import CONTEXT_BUDGET, K_DEMOS, MAX_NEW_TOKENS, STOP, build_prompt
from methods.medcog.scoring import TaskScore, level_scores, score_task


class LowMidParams(BaseModel):
    """Params of ``medcog.lowmid``."""

    model: str | None = Field(None, max_length=200, description="litellm model string (default: the settings').")
    datasets: list[Literal["medqa", "medmcqa"]] = Field(["medqa"], min_length=1, max_length=2)
    tasks: list[Literal["MCQ", "SV", "AE", "MR"]] = Field(list(TASKS), min_length=1, max_length=4)
    n_items: int = Field(2, ge=1, le=795, description="Items per task (the first n idx shared by all 4 files).")
    repeats: int = Field(5, ge=2, le=10, description="Repeats with fresh demo samples (the paper: 5).")
    k: int = Field(K_DEMOS, ge=0, le=10, description="Demonstrations per prompt before the 2 048-token rule.")
    seed: int = Field(0, ge=0, le=2**31 - 1)
    mode: Literal["inline", "jobs"] = Field("inline", description="Generate here or as llm_eval.batch jobs.")
    concurrency: int = Field(4, ge=1, le=32, description="Concurrent requests (llama.cpp batches them).")
    batch_size: int = Field(20, ge=1, le=200, description="Requests per llm_eval.batch job (mode=jobs).")


@dataclass
class LowMidResult:
    model: str
    run_id: str
    scores: list[TaskScore]
    levels: dict[str, dict[str, float]]
    n_generations: int
    n_errors: int
    demos_dropped: int
    examples: list[dict] = field(default_factory=list)


def key_of(dataset: str, task: str, idx: int, variant: int, repeat: int) -> str:
    return f"{dataset}/{task}/{idx}/v{variant}/r{repeat}"


def build_requests(
    dataset: Dataset,
    task: Task,
    idxs: list[int],
    *,
    repeats: int,
    k: int,
    seed: int,
    count: TokenCounter,
    data_dir=None,
) -> tuple[list[GenRequest], int]:
    """The requests of one task (greedy, 50 new tokens, stop ``\\n\\nQuestion``) and how many demos the
    2 048-token rule dropped in all."""
    pool = load_task(dataset, task, data_dir)
    by_idx = {it[0]: it for it in pool}
    reqs, dropped = [], 0
    for idx in idxs:
        for v, var in enumerate(variants(task, by_idx[idx])):
            for r in range(repeats):
                rng = random.Random(f"{seed}:{dataset}:{task}:{idx}:{v}:{r}")
                fp = build_prompt(pool, idx, var.prompt, task, rng=rng, count=count, k=k, budget=CONTEXT_BUDGET)
                dropped += k - len(fp.demos.idx)
                reqs.append(
                    GenRequest(
                        key=key_of(dataset, task, idx, v, r),
                        prompt=fp.text,
                        max_tokens=MAX_NEW_TOKENS,
                        stop=list(STOP),
                        temperature=0.0,
                    )
                )
    return reqs, dropped


def run_lowmid(
    params: LowMidParams, progress: JobContext | None = None, *, count: TokenCounter | None = None, data_dir=None
) -> LowMidResult:
    """Generate and score every requested task; raw outputs land in ``llm_eval_outputs`` under one run."""
    from core.config import get_settings

    progress = progress or null_context()
    model = params.model or get_settings().llm_model
    count = count or token_counter(model)
    plan: list[tuple[Dataset, Task, list[int]]] = []
    requests: list[GenRequest] = []
    dropped = 0
    for ds in params.datasets:
        if ds not in DATASETS:
            raise ValueError(f"unknown dataset {ds}")
        idxs = select_items(ds, params.n_items, data_dir)
        for task in params.tasks:
            reqs, d = build_requests(
                ds, task, idxs, repeats=params.repeats, k=params.k, seed=params.seed, count=count, data_dir=data_dir
            )
            plan.append((ds, task, idxs))
            requests += reqs
            dropped += d
    run_id = create_run("medcog.lowmid", model, params.model_dump(mode="json"), resume=True)
    progress(0.02, f"{len(requests)} generations planned")
    outs = run_requests(
        requests,
        model=model,
        run_id=run_id,
        mode=params.mode,
        batch_size=params.batch_size,
        concurrency=params.concurrency,
        progress=progress.sub(0.02, 0.97),
    )
    scores = []
    examples = []
    for ds, task, idxs in plan:
        by_idx = {it[0]: it for it in load_task(ds, task, data_dir)}
        items = [by_idx[i] for i in idxs]
        n_var = len(variants(task, items[0]))
        table = {
            i: [[outs[key_of(ds, task, i, v, r)].text for v in range(n_var)] for r in range(params.repeats)]
            for i in idxs
        }
        scores.append(score_task(ds, task, items, table))
        first = outs[key_of(ds, task, idxs[0], 0, 0)]
        examples.append({"dataset": ds, "task": task, "idx": idxs[0], "output": first.text[:300]})
    levels = level_scores(scores)
    errors = sum(1 for o in outs.values() if o.error)
    finish_run(
        run_id,
        {"levels": levels, "tasks": [s.as_dict() for s in scores], "errors": errors, "demos_dropped": dropped},
    )
    progress(1.0, "scored")
    return LowMidResult(
        model=model,
        run_id=run_id,
        scores=scores,
        levels=levels,
        n_generations=len(requests),
        n_errors=errors,
        demos_dropped=dropped,
        examples=examples,
    )
