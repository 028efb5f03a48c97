"""PAE's job types and its ``reproduce`` experiment.

* ``pae.train``: a whole PAE run (the LangGraph loop) → a report with per-iteration
  success, the upper-bound curve and per-site test success.
* ``pae.rollouts`` / ``pae.evaluate``: the batches the loop fans out to Celery
  workers when ``dispatch="celery"`` (ids in, rows out; safe to redeliver).
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from agents.pae.config import PRESETS as PAE_PRESETS
from agents.pae.config import RunConfig
from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_method, register_reproducer

log = logging.getLogger(__name__)


class TrainParams(RunConfig, DeviceParams):
    """A PAE run, plus an optional id to resume; ``device``/``amp``: where the learner trains the LoRA."""

    run_id: str | None = Field(None, max_length=32, pattern=r"^[0-9a-f]{32}$", description="Resume this run.")
    torch_threads: int = Field(
        1,
        ge=0,
        le=64,
        description="torch CPU threads (0 = torch's default); 1 is fastest when many processes share few cores.",
    )
    sft_cache: bool = Field(
        True,
        description="Reuse an SFT start cached by an earlier run with the same demonstrations and LoRA settings; "
        "false trains it again (and leaves the cache alone).",
    )


class RolloutParams(BaseModel):
    run_id: str = Field(..., max_length=32)
    iteration: int = Field(..., ge=0, le=100_000)
    phase: str = Field(..., pattern=r"^(rollout|test|demo)$")
    assignments: list[tuple[int, str]] = Field(..., max_length=1024)
    policy: dict[str, Any]
    temperature: float = Field(1.0, ge=0, le=2)
    max_tokens: int = Field(48, ge=8, le=512)
    max_steps: int = Field(10, ge=1, le=30)
    wait_s: float = Field(5.0, ge=0, le=30)
    parallel: int = Field(1, ge=1, le=16)
    seed: int = Field(0, ge=0)
    content_seed: int = Field(0, ge=0)
    keep_screenshots: bool = True
    torch_threads: int = Field(1, ge=0, le=64)

    @field_validator("policy")
    @classmethod
    def _policy_kind(cls, v: dict[str, Any]) -> dict[str, Any]:
        if v.get("kind") not in ("model", "adapter", "scripted"):
            raise ValueError("policy.kind must be model, adapter or scripted")
        return v


class EvaluateParams(BaseModel):
    trajectory_ids: list[str] = Field(..., max_length=1024)
    judge: bool = False
    judge_model: str | None = Field(None, max_length=200)
    judge_max_tokens: int = Field(256, ge=4, le=1000)
    judge_retries: int = Field(2, ge=0, le=5)
    torch_threads: int = Field(1, ge=0, le=64)


class set_threads:  # noqa: N801 - used like a function: set_threads(n), or `with set_threads(n):`
    """Pin torch's intra-op threads to ``n``, and llama.cpp's unless configured (``PAPERWORKS_LOCAL_THREADS``).

    On oversubscribed cores multi-threaded matmuls (and llama.cpp's spinning workers) run many times slower.
    Applies at once (``n`` = 0: nothing changes); used as a context manager it restores both on exit. The
    llama.cpp count goes through :func:`core.llm.threads.set_threads_hint`, never into the shared settings.
    """

    def __init__(self, n: int) -> None:
        self._undo: list[tuple[str, int]] = []
        if n > 0:
            import torch

            from core.llm.threads import set_threads_hint

            self._undo.append(("torch", torch.get_num_threads()))
            torch.set_num_threads(n)
            self._undo.append(("llama", set_threads_hint(n)))

    def __enter__(self) -> set_threads:
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._undo:
            return
        import torch

        from core.llm.threads import set_threads_hint

        for what, previous in reversed(self._undo):
            if what == "torch":
                torch.set_num_threads(previous)
            else:
                set_threads_hint(previous)
        self._undo.clear()


@register_method("pae.rollouts", title="PAE: a batch of rollouts", queue="cpu")
def rollouts_job(params: RolloutParams, progress: JobContext) -> Report:
    """Roll out a batch of (task, site) assignments with one policy; the PAE loop fans these out to workers."""
    from agents.pae.work import do_rollouts

    kw = params.model_dump(exclude={"torch_threads"})
    kw["assignments"] = [tuple(a) for a in kw["assignments"]]
    with set_threads(params.torch_threads):
        ids = do_rollouts(**kw, progress=progress)
    report = Report(title=f"PAE {params.phase} batch", summary=f"{len(ids)} trajectories stored")
    report.data["trajectory_ids"] = ids
    return report


@register_method("pae.evaluate", title="PAE: evaluate trajectories", queue="cpu")
def evaluate_job(params: EvaluateParams, progress: JobContext) -> Report:
    """Score stored trajectories with the site oracle (and the LLM judge); the PAE loop fans these out."""
    from agents.pae.work import do_evaluate

    with set_threads(params.torch_threads):
        counts = do_evaluate(
            trajectory_ids=params.trajectory_ids,
            judge=params.judge,
            judge_model=params.judge_model,
            judge_max_tokens=params.judge_max_tokens,
            judge_retries=params.judge_retries,
            progress=progress,
        )
    report = Report(title="PAE evaluation", summary=f"{counts}")
    report.metrics.update(counts)
    return report


@register_method(
    "pae.train",
    title="PAE: proposer-agent-evaluator training",
    queue="cpu",
    description="Self-practice of a web agent on the local sites: propose tasks, roll out, judge, "
    "filter, fine-tune (LoRA), test.",
)
def train_job(params: TrainParams, progress: JobContext) -> Report:
    from agents.pae.loop import run_pae
    from core.device import resolve_device

    dev = resolve_device(params.device)  # a cuda run on a worker without CUDA fails here, before anything runs
    cfg = RunConfig.model_validate(params.model_dump(exclude={"run_id", "torch_threads", "device", "amp", "sft_cache"}))
    with set_threads(params.torch_threads):
        return run_pae(
            cfg, run_id=params.run_id, progress=progress, device=dev, amp=params.amp, sft_cache=params.sft_cache
        ).report


class PaeOptions(RunConfig, ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce pae``: a preset (config.PRESETS) and any RunConfig field over it."""

    PRESETS = {**PAE_PRESETS, "summary": {}}
    preset: Literal["small", "issue", "issue-1.5b", "summary"] = Field(
        "small",
        description="Sizes from agents/pae/config.py PRESETS: small (two shared CPU cores), issue (the issue's "
        "scale, hours), issue-1.5b (the 1.5B model as judge and proposer over the 135M policy, hours); summary "
        "(docs/results/pae.md from the stored 1.5B runs, seconds, no model call).",
    )
    proposer_max_tokens_probe: int = Field(
        160, ge=0, le=4096, description="Reply budget of the LLM proposer probe (0 = skip it)."
    )
    torch_threads: int = Field(1, ge=0, le=64, description="torch CPU threads (0 = torch's default).")


@register_reproducer(
    "pae", options=PaeOptions, description="PAE on the local sites: oracle vs LLM-judge vs random reward"
)
def reproduce(options: PaeOptions, progress: JobContext) -> Report:
    """Oracle vs LLM-judge vs random reward from one SFT start, or (``summary``) the document of the stored 1.5B
    runs; the registry writes ``pae.md`` (+ ``pae/``)."""
    from agents.pae.experiment import reproduce as run
    from agents.pae.experiment import summarise_stored_runs

    if options.preset == "summary":
        return summarise_stored_runs(command="paperworks reproduce pae" + options.cli_options())

    set_threads(options.torch_threads)
    base = RunConfig(
        **options.model_dump(exclude={"preset", "proposer_max_tokens_probe", "torch_threads", "device", "amp"})
    )
    return run(
        base,
        progress,
        size=options.preset,
        proposer_tokens=options.proposer_max_tokens_probe,
        device=options.device,
        amp=options.amp,
    )
