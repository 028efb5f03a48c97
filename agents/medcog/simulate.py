"""Run the simulator over a set of synthetic cases (threads: concurrent replies batch on llama.cpp),
store each episode's transcript as a raw output, and score them."""

from __future__ import annotations

import concurrent.futures as cf
import json
from typing import Annotated

from pydantic import BaseModel, Field

from agents.medcog.config import Disease, context_budget
from core.jobs import JobContext, null_context
from methods.llm_eval.harness import GenOutput, GenRequest, create_run, finish_run, store_output, stored_outputs
from methods.llm_eval.tokens import token_counter
from methods.medcog.cases import DISEASES, make_cases
from methods.medcog.environment import MAX_TURNS, TEMPERATURE
from methods.medcog.highlevel import Episode, HighLevelSummary, replay, score_episode, summarise


class HighParams(BaseModel):
    """Params of ``medcog.high``."""

    model: str | None = Field(None, max_length=200, description="litellm model string (default: the settings').")
    diseases: list[Disease] = Field(list(DISEASES[:3]), min_length=1, max_length=len(DISEASES))
    cases_per_disease: int = Field(1, ge=1, le=20, description="Synthetic cases per disease.")
    seeds: list[Annotated[int, Field(ge=0, le=2**31 - 1)]] = Field(
        [2024], min_length=1, max_length=5, description="Sampling seeds (the paper: 2024)."
    )
    max_turns: int = Field(MAX_TURNS, ge=2, le=30)
    temperature: float = Field(TEMPERATURE, ge=0.0, le=2.0)
    concurrency: int = Field(3, ge=1, le=16)


def run_high(
    params: HighParams, progress: JobContext | None = None, *, count=None, data_dir=None
) -> tuple[HighLevelSummary, dict[int, list[Episode]], str]:
    """Every (case, seed) episode; returns the summary, the episodes by seed and the run id."""
    from agents.medcog.graph import run_episode  # langgraph: imported when a run starts, not at registration
    from core.config import get_settings

    progress = progress or null_context()
    model = params.model or get_settings().llm_model
    count = count or token_counter(model)
    budget = context_budget(model)
    cases = make_cases(list(params.diseases), params.cases_per_disease, data_dir=data_dir)
    run_id = create_run("medcog.high", model, params.model_dump() | {"budget": budget}, resume=True)
    done = stored_outputs(run_id)
    jobs = [(c, s) for s in params.seeds for c in cases]

    def one(case, seed):
        key = f"high/{case.case_id}/s{seed}"
        if key in done:  # a stored episode (same config): rebuild its state from the transcript
            try:
                transcript = json.loads(_stored_prompt(run_id, key) or "")
            except json.JSONDecodeError:  # cut at 60 000 characters: run it again
                transcript = None
            if transcript is not None:
                return seed, score_episode(case, replay(case, transcript, data_dir))
        final = run_episode(
            case,
            model=model,
            seed=seed,
            count=count,
            budget=budget,
            max_turns=params.max_turns,
            temperature=params.temperature,
            data_dir=data_dir,
        )
        ep = score_episode(case, final)
        store_output(
            run_id,
            GenRequest(key=key, prompt=json.dumps(ep.transcript)[:60000]),
            GenOutput(key=key, text=ep.diagnosis),
        )
        return seed, ep

    by_seed: dict[int, list[Episode]] = {s: [] for s in params.seeds}
    with cf.ThreadPoolExecutor(params.concurrency) as pool:
        futs = [pool.submit(one, c, s) for c, s in jobs]
        for i, fut in enumerate(cf.as_completed(futs), start=1):
            seed, ep = fut.result()
            by_seed[seed].append(ep)
            progress(i / len(jobs), f"{i}/{len(jobs)} episodes ({ep.case_id}: {'✓' if ep.correct else '✗'})")
    summary = summarise(by_seed)
    finish_run(run_id, {"macro_strict": summary.macro_strict, "per_disease": summary.per_disease})
    return summary, by_seed, run_id


def _stored_prompt(run_id: str, key: str) -> str:
    from sqlalchemy import select

    from core.db.session import session_scope
    from methods.llm_eval.models import LlmEvalOutput

    with session_scope() as s:
        return s.scalar(
            select(LlmEvalOutput.prompt).where(LlmEvalOutput.run_id == run_id, LlmEvalOutput.item_key == key)
        )
