"""EcoLevels jobs: ``ecolevels.probe`` (one probe on one model, the flow's fan-out unit) and
``ecolevels.classify`` (a probe's level and EV for a target, from metadata or a free-text description)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from core.jobs import JobContext, Report, register_method
from methods.ecolevels.classify import LEVEL_NAMES, classify, extract_metadata, rule_fired
from methods.ecolevels.experiment import run_probe
from methods.ecolevels.probes import RUNNERS
from methods.ecolevels.registry import ProbeMetadata
from methods.ecolevels.validity import TARGETS, TargetTask, band, ecological_validity, features

RunnableProbe = Literal["weat_embeddings", "llm_iat", "winobias", "explicit_agree", "resume_screening"]


class ProbeParams(BaseModel):
    probe_id: RunnableProbe = Field("winobias", description="A registered probe with a runner.")
    model: str | None = Field(None, max_length=200, description="litellm model string (default: the settings').")
    paraphrases: int = Field(2, ge=1, le=2, description="Prompt paraphrases (each probe ships two).")
    seeds: list[int] = Field([0, 1], min_length=1, max_length=10)
    n_units: int = Field(8, ge=1, le=400, description="Pairs / words / statements / résumés per paraphrase×seed.")
    concurrency: int = Field(4, ge=1, le=32)


@register_method(
    "ecolevels.probe",
    title="EcoLevels: run one bias probe",
    description="One registered probe (WEAT, LLM IAT, WinoBias, explicit Likert, résumé screening) × paraphrases "
    "× seeds on a gateway model; bias index with a bootstrap 95% CI; raw outputs stored.",
)
def probe_job(params: ProbeParams, progress: JobContext) -> Report:
    from core.config import get_settings

    model = params.model or get_settings().llm_model
    r = run_probe(
        params.probe_id,
        model=model,
        paraphrases=params.paraphrases,
        seeds=params.seeds,
        n_units=params.n_units,
        concurrency=params.concurrency,
        progress=progress,
    )
    rep = Report(
        title=f"{r.name} on {model}",
        summary=f"bias index {r.effect:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}] ({r.verdict}; {r.n_units} units, "
        f"level {r.level})",
    )
    rep.add_table(
        "Per paraphrase × seed",
        ["paraphrase", "seed", "index"],
        [[x["paraphrase"], x["seed"], x["index"]] for x in r.runs],
    )
    rep.metrics.update({"effect": round(r.effect, 4), "ci_low": round(r.ci_low, 4), "ci_high": round(r.ci_high, 4)})
    rep.data = {"result": r.model_dump()}
    return rep


class ClassifyParams(BaseModel):
    metadata: ProbeMetadata | None = Field(None, description="The §3.2 fields; or give a description instead.")
    description: str = Field("", max_length=2000, description="Free text; a model fills the fields (LLM assist).")
    target: Literal["resume_screener", "letter_assistant"] = Field("resume_screener")
    model: str | None = Field(None, max_length=200, description="Model for the LLM assist.")

    @model_validator(mode="after")
    def _one(self) -> ClassifyParams:
        if self.metadata is None and not self.description.strip():
            raise ValueError("give metadata or a description")
        return self


def classify_probe(params: ClassifyParams) -> dict:
    meta = params.metadata or extract_metadata(params.description, model=params.model)
    target: TargetTask = TARGETS[params.target]
    level = classify(meta)
    ev = ecological_validity(meta, target)
    return {
        "level": level,
        "level_name": LEVEL_NAMES[level],
        "rule": rule_fired(meta),
        "ev": ev,
        "ev_band": band(ev),
        "features": features(meta, target),
        "target": target.name,
        "metadata": meta.model_dump(),
    }


@register_method(
    "ecolevels.classify",
    title="EcoLevels: classify a probe",
    description="Level (§3.2 decision list) and ecological validity for a target task (§3.1) of a probe given its "
    "metadata, or a free-text description the model turns into metadata (the rules still decide).",
)
def classify_job(params: ClassifyParams, progress: JobContext) -> Report:
    out = classify_probe(params)
    rep = Report(
        title=f"Probe level {out['level']} ({out['level_name']}), EV {out['ev']:.1f} ({out['ev_band']})",
        summary=f"Rule {out['rule']}; EV for {out['target']}.",
    )
    rep.add_table("EV features", ["feature", "match"], [[k, v] for k, v in out["features"].items()])
    rep.data = out
    return rep


__all__ = ["RUNNERS", "classify_probe"]
