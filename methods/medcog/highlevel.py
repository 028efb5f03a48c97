"""High-level scoring (spec §3.4): per-episode correctness, exam recalls and strict credit; the
macro average over diseases (each disease's mean strict score, then the mean over diseases)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from core.stats import mean_sd
from methods.medcog.cases import Case
from methods.medcog.exams import diagnosis_correct, exam_profile, recall, strict_score


@dataclass
class Episode:
    case_id: str
    disease: str
    diagnosis: str
    correct: bool
    recalls: dict[str, float | None]
    strict: float
    turns: int
    actions: list[str]
    summaries: int = 0
    warnings: int = 0
    finished: bool = True
    transcript: list[dict[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def score_episode(case: Case, final: dict[str, Any]) -> Episode:
    """Correctness of the extracted diagnosis × the mean recall of lab, micro and imaging the case holds."""
    diagnosis = final.get("diagnosis") or ""
    correct = bool(diagnosis) and diagnosis_correct(case.disease, diagnosis)
    recalls: dict[str, float | None] = {
        "lab": recall(set(final.get("requested_labs", [])), set(case.labs)) if case.labs else None,
        "micro": recall(set(final.get("requested_micro", [])), set(case.micro)) if case.micro else None,
        "imaging": recall(set(final.get("requested_imaging", [])), set(case.radiology)) if case.radiology else None,
    }
    return Episode(
        case_id=case.case_id,
        disease=case.disease,
        diagnosis=diagnosis,
        correct=correct,
        recalls=recalls,
        strict=strict_score(correct, recalls),
        turns=int(final.get("turn", 0)),
        actions=list(final.get("actions_taken", [])),
        summaries=int(final.get("summaries", 0)),
        warnings=int(final.get("warnings", 0)),
        finished=bool(final.get("done")),
        transcript=list(final.get("transcript") or final.get("messages") or []),
    )


def imaging_regions(case: Case) -> list[tuple[list[str], list[str]]]:
    return [tuple(map(sorted, exam_profile(e))) for e in case.radiology]


@dataclass
class HighLevelSummary:
    macro_strict: float
    macro_strict_se: float
    macro_acc: float
    micro_strict: float
    per_disease: dict[str, dict[str, float]]
    n_episodes: int
    seeds: list[int]


def summarise(episodes_by_seed: dict[int, list[Episode]]) -> HighLevelSummary:
    """Macro strict score per seed (mean over diseases of each disease's mean), then mean ± SE over seeds."""
    macro_strict, macro_acc, micro_strict = [], [], []
    per: dict[str, list[Episode]] = {}
    for eps in episodes_by_seed.values():
        by_d: dict[str, list[Episode]] = {}
        for e in eps:
            by_d.setdefault(e.disease, []).append(e)
            per.setdefault(e.disease, []).append(e)
        macro_strict.append(float(np.mean([np.mean([e.strict for e in v]) for v in by_d.values()])))
        macro_acc.append(float(np.mean([np.mean([e.correct for e in v]) for v in by_d.values()])))
        micro_strict.append(float(np.mean([e.strict for e in eps])))
    ms = mean_sd(macro_strict)  # sample sd; .se = sd / √n
    per_disease = {
        d: {
            "strict": float(np.mean([e.strict for e in v])),
            "accuracy": float(np.mean([e.correct for e in v])),
            "episodes": len(v),
            "mean_turns": float(np.mean([e.turns for e in v])),
        }
        for d, v in sorted(per.items())
    }
    return HighLevelSummary(
        macro_strict=ms.mean,
        macro_strict_se=ms.se,
        macro_acc=float(np.mean(macro_acc)),
        micro_strict=float(np.mean(micro_strict)),
        per_disease=per_disease,
        n_episodes=sum(len(v) for v in episodes_by_seed.values()),
        seeds=sorted(episodes_by_seed),
    )


def replay(case: Case, transcript: list[dict[str, str]], data_dir=None) -> dict[str, Any]:
    """The final environment state of a stored episode, rebuilt by feeding its assistant turns through the
    (deterministic) environment again; summaries change only the live messages, never the exam state."""
    from methods.medcog.environment import respond, start_state

    state = start_state(case)
    state["summaries"] = sum(1 for m in transcript if m["role"] == "user" and m["content"].startswith("[summary]"))
    state["transcript"] = transcript
    for m in transcript:
        if m["role"] != "assistant" or state["done"]:
            continue
        state["turn"] += 1
        state["messages"] = state["messages"] + [m]
        state.update(respond(case, state, m["content"], data_dir))
    return state
