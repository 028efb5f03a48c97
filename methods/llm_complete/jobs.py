"""The platform's own job type: complete a batch of prompts through the LLM gateway.

It carries the platform end to end (API → broker → worker → report) with a real
model, and reports decode throughput.
"""

from __future__ import annotations

from pydantic import BaseModel, Field, field_validator

from core.jobs import JobContext, Report, register_method, register_preparer
from core.llm import complete


class CompleteParams(BaseModel):
    prompts: list[str] = Field(..., min_length=1, max_length=64, description="Prompts, one completion each.")
    model: str | None = Field(
        None, max_length=200, description="litellm model string; default: the configured model (local SmolLM2)."
    )
    system: str | None = Field(None, max_length=4000, description="Optional system message.")
    max_tokens: int = Field(64, ge=1, le=2048, description="New tokens per completion.")
    temperature: float = Field(0.0, ge=0.0, le=2.0, description="0 = greedy.")

    @field_validator("prompts")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        for i, p in enumerate(v):
            if not p.strip():
                raise ValueError(f"prompt {i} is empty")
            if len(p) > 16_000:
                raise ValueError(f"prompt {i} is longer than 16000 characters")
        return v


@register_method(
    "llm.complete",
    title="LLM completion",
    description="Complete a batch of prompts with the configured model; reports tokens/s.",
)
def run(params: CompleteParams, progress: JobContext) -> Report:
    rows, total_tokens, total_s = [], 0, 0.0
    model = None
    for i, prompt in enumerate(params.prompts):
        progress(i / len(params.prompts), f"prompt {i + 1}/{len(params.prompts)}")
        c = complete(
            prompt,
            system=params.system,
            model=params.model,
            max_tokens=params.max_tokens,
            temperature=params.temperature,
        )
        model = c.model
        total_tokens += c.completion_tokens
        total_s += c.latency_s
        rows.append([i, prompt[:200], c.text, c.completion_tokens, round(c.latency_s, 3)])
    progress(1.0, "done")
    tps = total_tokens / total_s if total_s > 0 else 0.0
    report = Report(
        title=f"LLM completion ({len(rows)} prompt{'s' if len(rows) != 1 else ''})",
        summary=f"{total_tokens} tokens from {model} at {tps:.1f} tokens/s.",
    )
    report.metrics.update(
        {
            "model": model,
            "prompts": len(rows),
            "completion_tokens": total_tokens,
            "seconds": round(total_s, 3),
            "tokens_per_s": round(tps, 2),
        }
    )
    report.add_table("Completions", ["#", "prompt", "completion", "tokens", "seconds"], rows)
    report.data["completions"] = [r[2] for r in rows]
    return report


@register_preparer("local-llm")
def prepare_local_model() -> str:
    """Convert the bundled SmolLM2 GGUF to a cached transformers checkpoint (once)."""
    from core.llm.local_models import converted_dir

    return f"local model ready at {converted_dir()}"
