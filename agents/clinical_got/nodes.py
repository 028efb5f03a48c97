"""The graph's nodes (spec §3.2): N1–N4 (one gateway call each), N2.5 (pure function), N5 (template).

An LLM node's prompt is, in order: the preamble; the visual input (the findings adapter's text and/or
the slice triples as images); then, in the CGoT graph only, the node's knowledge and its parents'
answers quoted verbatim ("Your previous answer … was: …"); the question; the answer format. The
direct baseline builds the same prompt without knowledge and parents (N2 keeps the ROI table: it is
the answer's vocabulary). A node listed in ``config.oracle_nodes`` still builds its prompt (so the
trace shows what the model would have seen) but answers with the ground truth.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

from langgraph.runtime import Runtime

from agents.clinical_got import prompts as P
from agents.clinical_got.config import ClinicalGotConfig, ClinicalGotContext
from agents.clinical_got.state import State
from methods.clinical_got.atlas import roi_table_text
from methods.clinical_got.bench import PreparedCase, prepare_case
from methods.clinical_got.generate import bayes_decision
from methods.clinical_got.parsing import FORMAT_REGEX, PARSERS
from methods.clinical_got.render import TITLES
from methods.clinical_got.rules import caption, uncommon_rois

N1, N2, N2_5, N3, N4, N5 = "n1", "n2", "n2_5", "n3", "n4", "n5"
NODE_TITLES = {
    N1: "N1 lesion grading",
    N2: "N2 lesion anatomy",
    N2_5: "N2.5 rare locations",
    N3: "N3 MRI injury score",
    N4: "N4 2-year outcome",
    N5: "N5 interpretation summary",
}
Part = str | dict[str, str]  # text, or {"image": path}


def context_of(runtime: Runtime[ClinicalGotContext] | None) -> ClinicalGotContext:
    ctx = getattr(runtime, "context", None) if runtime is not None else None
    return ctx if isinstance(ctx, ClinicalGotContext) else ClinicalGotContext()


def model_of(cfg: ClinicalGotConfig) -> str:
    from core.config import get_settings

    return cfg.model or get_settings().llm_model


def case_of(cfg: ClinicalGotConfig, case_id: str) -> PreparedCase:
    return prepare_case(cfg.bench, case_id, cfg.adapter)


def use_images(cfg: ClinicalGotConfig, model: str) -> tuple[bool, bool]:
    """(send the findings text, send the images) for this config and model."""
    if cfg.visual == "auto":
        from core.llm.gateway import supports_vision

        vision = supports_vision(model)
        return (not vision, vision)
    return (cfg.visual in ("findings", "both"), cfg.visual in ("images", "both"))


def visual_parts(node: str, case: PreparedCase, cfg: ClinicalGotConfig, model: str) -> list[Part]:
    text, images = use_images(cfg, model)
    parts: list[Part] = []
    if text:
        parts.append(f"{P.VISUAL_FINDINGS_NOTE}\n{case.findings}")
    if images:
        kinds = ("adc", "zmap") if node == N1 else ("adc", "zmap", "roi")
        for t in case.triples:
            for kind in kinds:
                parts += [TITLES[kind].format(k=t["slice"]), {"image": str(t[kind])}]
    return parts


def build_prompt(node: str, state: State, case: PreparedCase, cfg: ClinicalGotConfig, *, chained: bool) -> list[Part]:
    """The prompt of LLM node ``node`` as text and image parts (spec §3.2)."""
    model = model_of(cfg)
    parts: list[Part] = [P.PREAMBLE, *visual_parts(node, case, cfg, model)]

    def parent(p: str) -> str:
        return P.PARENT[p].format(answer=(state.get(p) or {}).get("answer", ""))

    if node == N1:
        if chained:
            parts.append(P.KNOWLEDGE_GRADING)
        parts += [P.QUESTION_GRADING, P.FORMAT_GRADING]
    elif node == N2:
        if chained and cfg.n1_to_n2:
            parts += [P.KNOWLEDGE_GRADING, parent(N1)]
        parts += [P.QUESTION_ANATOMY, f"{P.ROI_TABLE_HEADER}\n{roi_table_text()}", P.FORMAT_ANATOMY]
    elif node == N3:
        if chained:
            parts += [parent(N1), parent(N2), P.KNOWLEDGE_SCORE[cfg.score_knowledge], P.PROGNOSTIC_FACTS]
        parts += [P.QUESTION_SCORE, P.FORMAT_SCORE]
    elif node == N4:
        if chained:
            parts += [P.KNOWLEDGE_GRADING, parent(N1)]
            parts += [f"{P.ROI_TABLE_HEADER}\n{roi_table_text()}", parent(N2)]
            parts += [P.KNOWLEDGE_SCORE["math"], P.PROGNOSTIC_FACTS, parent(N3), P.OUTCOME_INSTRUCTIONS]
        parts += [P.QUESTION_OUTCOME, P.FORMAT_OUTCOME]
    else:
        raise ValueError(f"{node} is not an LLM node")
    return parts


def prompt_text(parts: list[Part]) -> str:
    """The prompt as stored and shown: images as ``[image: path]``."""
    return "\n\n".join(p if isinstance(p, str) else f"[image: {p['image']}]" for p in parts)


def oracle_answer(node: str, truth: dict[str, Any]) -> str:
    """The ground truth in the node's answer format (N4: the Bayes decision of the outcome model)."""
    if node == N1:
        return f"[ans]: level{truth['grade']}, {truth['lesion_p']:.4f}"
    if node == N2:
        return "[ans]: " + (", ".join(str(r) for r in truth["injured"]) or "none")
    if node == N3:
        return f"[ans]: Score {truth['score']}."
    return f"[ans]: {bayes_decision(truth)}"


def _complete(node: str, parts: list[Part], cfg: ClinicalGotConfig) -> str:
    from pathlib import Path

    model = model_of(cfg)
    regex = FORMAT_REGEX[node] if cfg.constrained == "auto" and model.startswith("local/") else None
    if all(isinstance(p, str) for p in parts) and cfg.temperature == 0.0 and not model.startswith("scripted/"):
        # greedy and text-only: the same prompt gives the same answer (direct and CGoT share N2's prompt)
        return _greedy("\n\n".join(parts), model, regex, getattr(cfg.budget, node), node)
    seq = [p if isinstance(p, str) else Path(p["image"]) for p in parts]
    prompt: Any = "\n\n".join(seq) if all(isinstance(p, str) for p in seq) else _interleave(seq)
    return _call(prompt, model, regex, getattr(cfg.budget, node), cfg.temperature, node)


def _call(prompt: Any, model: str, regex: str | None, max_tokens: int, temperature: float, node: str) -> str:
    from core.llm import complete

    out = complete(
        prompt, model=model, max_tokens=max_tokens, temperature=temperature, regex=regex, tag=f"clinical_got.{node}"
    )
    return out.text.strip()


@functools.lru_cache(maxsize=256)
def _greedy(prompt: str, model: str, regex: str | None, max_tokens: int, node: str) -> str:
    return _call(prompt, model, regex, max_tokens, 0.0, node)


def _interleave(seq: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in seq:
        if isinstance(item, str):
            out.append(item + "\n\n")
        else:
            out.append(item)
    return out


def _parsed_json(node: str, value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def llm_node(node: str, *, chained: bool) -> Callable[[State, Runtime[ClinicalGotContext]], dict[str, Any]]:
    """Node ``node`` of the CGoT graph (``chained``) or of the direct baseline."""

    def run(state: State, runtime: Runtime[ClinicalGotContext]) -> dict[str, Any]:
        ctx = context_of(runtime)
        cfg = ctx.config
        case = case_of(cfg, state["case_id"])
        parts = build_prompt(node, state, case, cfg, chained=chained)
        t0 = time.perf_counter()
        if node in cfg.oracle_nodes:
            answer, source = oracle_answer(node, case.truth), "oracle"
        else:
            answer, source = _complete(node, parts, cfg), "llm"
        rec = {
            "node": node,
            "source": source,
            "prompt": prompt_text(parts),
            "answer": answer,
            "parsed": _parsed_json(node, PARSERS[node](answer)),
            "seconds": round(time.perf_counter() - t0, 3),
        }
        ctx.emit(node, answer=answer, source=source)
        return {node: rec}

    run.__name__ = f"{node}_{'cgot' if chained else 'direct'}"
    return run


def rare_locations(state: State, runtime: Runtime[ClinicalGotContext]) -> dict[str, Any]:
    """N2.5: N2's ROI ids minus the primary HIE regions; "any lesion in a rare location" yes/no."""
    rois = (state.get(N2) or {}).get("parsed") or []
    unc = uncommon_rois(rois)
    rec = {
        "node": N2_5,
        "source": "derived",
        "prompt": "",
        "answer": f"uncommon regions: {', '.join(map(str, unc)) or 'none'}; any lesion in a rare location: "
        f"{'yes' if unc else 'no'}",
        "parsed": {"any": bool(unc), "rois": unc},
        "seconds": 0.0,
    }
    context_of(runtime).emit(N2_5, answer=rec["answer"], source="derived")
    return {N2_5: rec}


def summary(state: State, runtime: Runtime[ClinicalGotContext]) -> dict[str, Any]:
    """N5: the interpretation template filled from N1 (percentage), N2 (regions), N2.5 (uncommon), N3 (score)."""
    n1 = (state.get(N1) or {}).get("parsed")
    p = n1[1] if n1 and n1[1] is not None else 0.0
    injured = (state.get(N2) or {}).get("parsed") or []
    uncommon = ((state.get(N2_5) or {}).get("parsed") or {}).get("rois") or []
    score = (state.get(N3) or {}).get("parsed")
    text = caption(state["case_id"], p, injured, uncommon, score)
    context_of(runtime).emit(N5, answer=text, source="template")
    return {N5: {"node": N5, "source": "template", "prompt": "", "answer": text, "parsed": None, "seconds": 0.0}}
