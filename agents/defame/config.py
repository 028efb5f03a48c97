"""DEFAME's knobs (spec §3.2 "Common LLM settings" and §6) and the run context nodes receive.

:class:`DefameConfig` holds everything a run can change; defaults follow the
paper where the spec says they must (3 rounds, 5 actions a round, temperature
0.01, limit per search 5 for AVeriTeC / 3 otherwise, the claim-date restriction,
the fact-checking-site filter, the top-10 keyword sentences, a 64k-character
cap). Token budgets per stage exist because the default model is a 135M model
on two CPU cores; a hosted model is run with the paper's 2,048-token budget by
raising them.

Secrets and service endpoints for the optional web backends come from the
application settings' DEFAME section, ``settings.defame`` (:class:`core.config.DefameSettings`,
``PAPERWORKS_DEFAME__*`` variables; the older ``PAPERWORKS_DEFAME_*`` names still work),
never from code.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from core.config import DefameSettings

__all__ = ["PRESETS", "STORED_RUNS", "DefameConfig", "DefameContext", "DefameSettings", "Event", "StageBudget"]

#: Named sizes of ``paperworks reproduce defame -o preset=NAME`` (DefameOptions fields).
PRESETS: dict[str, dict[str, Any]] = {
    # the default: minutes to an hour on two shared cores with the 135M model
    "small": dict(limit=30, mocheg_limit=10, knowledge_store="shared"),
    # a few minutes: a smoke test of the whole protocol
    "tiny": dict(limit=6, mocheg_limit=0, knowledge_store="shared"),
    # issue #26: >= 100 AVeriTeC dev claims with the 135M model (~2 h at 0.95 claims/min)
    "issue": dict(limit=100, mocheg_limit=0, knowledge_store="shared"),
    # issue #26: >= 30 claims with the opt-in 1.5B (`paperworks models install qwen2.5-coder-1.5b-instruct`);
    # several times slower than the 135M: run it in the background
    # the results document: rebuilt from the stored runs' per-claim predictions (STORED_RUNS), no LLM calls
    "summary": dict(from_runs=True),
    "issue-1.5b": dict(
        limit=30,
        mocheg_limit=0,
        knowledge_store="shared",
        model="local/qwen2.5-coder-1.5b-instruct",
        judge_tokens=192,
        summary_prompt="lenient",  # under the paper's prompt it answered NONE to 158 of 165 sources
        workers=4,  # four claims share each batched llama.cpp decode step
    ),
}


#: The stored runs the results document is rebuilt from (``-o preset=summary``, no LLM calls): each run's
#: generated report ``docs/results/defame/<key>.md`` (its per-claim predictions table) and its folder
#: ``<key>/`` (``averitec_predictions.json``, ``summary.json``); (key, configuration, superseded by).
STORED_RUNS: list[tuple[str, str, str | None]] = [
    ("issue-1.5b", "1.5B, paper's prompts, shared store", None),
    ("issue-1.5b-lenient", "1.5B, lenient summariser, shared store (first 24 claims)", None),
    ("issue-1.5b-absence", "1.5B, lenient + absence rule, shared store", None),
    ("issue-1.5b-perclaim", "1.5B, per-claim store (spec §6), generated verdict", None),
    (
        "issue-1.5b-perclaim-calibrated",
        "1.5B, per-claim store, calibrated verdict (claims 0–19)",
        "issue-1.5b-perclaim-calibrated-30",
    ),
    ("issue-1.5b-perclaim-calibrated-30", "1.5B, per-claim store, calibrated-likelihood verdict", None),
    ("issue-1.5b-perclaim-likelihood", "1.5B, per-claim store, plain-likelihood verdict", None),
    ("issue-135m", "135M, 100 claims, paper's prompts, shared store", None),
]


class StageBudget(BaseModel):
    """Largest completion per stage, in tokens."""

    plan: int = Field(96, ge=1, le=4096, description="Planner answer.")
    summarize: int = Field(96, ge=1, le=4096, description="One source summary.")
    merge: int = Field(128, ge=1, le=4096, description="Merge of several source summaries.")
    develop: int = Field(128, ge=1, le=4096, description="Elaboration.")
    judge: int = Field(96, ge=1, le=4096, description="Judgement.")
    justify: int = Field(96, ge=1, le=4096, description="Justification.")


class DefameConfig(BaseModel):
    """Configuration of one fact-check run (serialisable; the API and jobs accept it as JSON)."""

    model: str | None = Field(None, description="litellm model string; default settings.llm_model.")
    benchmark: str = Field("default", description="Label set, rules and allowed actions (spec §3.5).")
    max_iterations: int = Field(3, ge=1, le=10, description="Plan/execute/judge rounds at most.")
    max_actions: int = Field(5, ge=1, le=10, description="Actions per round at most.")
    limit_per_search: int | None = Field(
        None, ge=1, le=20, description="Results kept per search; default from the benchmark."
    )
    knn_neighbours: int = Field(30, ge=1, le=200, description="Corpus neighbours fetched before filtering.")
    keyword_sentences: int = Field(10, ge=1, le=100, description="Sentences kept by the keyword filter.")
    max_result_len: int = Field(64_000, ge=100, description="Characters kept per search result.")
    restrict_to_claim_date: bool = Field(True, description="Drop results published after the claim date.")
    corpus: str = Field("defame-default", description="Chroma collection holding the evidence corpus.")
    temperature: float = Field(0.01, ge=0.0, le=2.0, description="Sampling temperature (paper: 0.01).")
    seed: int = Field(0, description="Sampling seed, for reproducible runs.")
    max_prompt_chars: int = Field(
        6000, ge=500, le=500_000, description="Prompt cap: the record is cut, never the instructions."
    )
    max_source_chars: int = Field(
        1500, ge=100, le=64_000, description="Characters of one source shown to the summariser."
    )
    retries: int = Field(3, ge=1, le=5, description="Attempts per parse failure (spec: 3).")
    budget: StageBudget = Field(default_factory=StageBudget)
    constrained: Literal["auto", "never"] = Field(
        "auto", description="Use the local provider's constrained decoding for plan/judge when it has it."
    )
    tools: list[str] | None = Field(None, description="Restrict the offered actions to these names.")
    run_develop: bool = Field(True, description="Run the Develop stage (ablation switch).")
    judge_free_first: bool = Field(
        True,
        description="Judge in free text first (two paragraphs); constrained decoding only as the retry fallback.",
    )
    plan_guard: bool = Field(
        True, description="Reject and retry search queries that copy an example or share no word with the claim."
    )
    repeat_penalty: float = Field(
        1.1, ge=1.0, le=2.0, description="Local models: llama.cpp repeat penalty over the reply's last 64 tokens."
    )
    no_repeat_ngram: int = Field(
        8, ge=0, le=64, description="Local models: never repeat an n-gram of the reply (0 = off)."
    )
    summary_prompt: Literal["paper", "lenient"] = Field(
        "paper",
        description="Source summaries: the paper's prompt (answer NONE when nothing helps) or 'lenient' (the same "
        "NONE rule, worded for small models: what bears on the Claim's people, places, events, dates or numbers; "
        "NONE only for a result entirely about something else). Small local models answer NONE to nearly every "
        "source under the paper's prompt.",
    )
    knowledge_store: Literal["shared", "per_claim"] = Field(
        "shared",
        description="Evaluation: search every claim's documents (shared) or only this claim's (AVeriTeC "
        "per-claim knowledge store, spec §6).",
    )
    verdict: Literal["generate", "likelihood", "calibrated"] = Field(
        "generate",
        description="How the judge picks its option: 'generate' (the paper: the model writes its judgement and "
        "the option is parsed from it); 'likelihood' (not in the paper: each option's likelihood as the reply to "
        "an answer-only prompt, the most likely wins); 'calibrated' (likelihood divided by the option's "
        "likelihood under content-free inputs, Zhao et al. 2021, which removes a small model's fixed preference "
        "for one option). The scored modes need a local model; others fall back to 'generate'.",
    )


Event = Callable[[str, dict[str, Any]], None]


@dataclass
class DefameContext:
    """What every node receives at run time (not checkpointed).

    ``store`` is the vector store holding the corpus (default: the configured
    one); ``on_event`` receives ``(stage, info)`` as stages finish, for progress
    bars and streaming UIs.
    """

    config: DefameConfig = field(default_factory=DefameConfig)
    store: Any = None
    on_event: Event | None = None
    settings: DefameSettings | None = None
    extra_corpora: tuple[str, ...] = ()
    """Collections searched beside ``config.corpus``: the documents the submitting key added itself
    (:func:`core.ownership.private_collection`). Set by the job from its owner, never by a client."""

    def emit(self, stage: str, **info: Any) -> None:
        if self.on_event is not None:
            self.on_event(stage, info)

    def external(self) -> DefameSettings:
        """``settings`` if given, else the application settings' DEFAME section."""
        if self.settings is None:
            from core.config import get_settings

            self.settings = get_settings().defame
        return self.settings

    def vectorstore(self):
        if self.store is None:
            from core.vectorstore import get_vectorstore

            self.store = get_vectorstore()
        return self.store
