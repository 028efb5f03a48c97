"""What every node reads: the run's configuration, the progress context and the dispatcher.

The progress context, the dispatcher and the learner's device travel in
``config["configurable"]`` (they belong to the process running the graph, never
checkpointed: a run resumed on another worker trains where that worker's job says);
the run configuration is re-read from the ``pae_runs`` row, so a resumed graph sees
exactly the configuration it started with.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.pae import store
from agents.pae.config import RunConfig
from agents.pae.dispatch import Dispatcher, InlineDispatcher
from core.jobs import JobContext, null_context


def load_config(run_id: str) -> RunConfig:
    run = store.get_run(run_id=run_id)
    if run is None:
        raise KeyError(f"no PAE run {run_id!r}")
    return RunConfig.model_validate(run["config"])


def progress_of(config: RunnableConfig | None) -> JobContext:
    ctx = ((config or {}).get("configurable") or {}).get("progress")
    return ctx if isinstance(ctx, JobContext) else null_context()


def device_of(config: RunnableConfig | None) -> tuple[Any, str]:
    """``(device, amp)`` the learner trains with (``("cpu", "off")`` unless the run was started with others)."""
    conf = (config or {}).get("configurable") or {}
    return conf.get("device") or "cpu", conf.get("amp") or "off"


def sft_cache_of(config: RunnableConfig | None) -> bool:
    """Whether the SFT node may reuse (and store) a cached SFT start (default True)."""
    return bool(((config or {}).get("configurable") or {}).get("sft_cache", True))


def dispatcher_of(config: RunnableConfig | None) -> Dispatcher:
    d = ((config or {}).get("configurable") or {}).get("dispatcher")
    return d if d is not None else InlineDispatcher(progress_of(config))


def rollout_params(
    cfg: RunConfig,
    *,
    run_id: str,
    iteration: int,
    phase: str,
    assignments: list[tuple[int, str]],
    policy: dict,
    temperature: float,
) -> dict:
    """Keyword arguments of :func:`agents.pae.work.do_rollouts` (also the ``pae.rollouts`` job params)."""
    return dict(
        run_id=run_id,
        iteration=iteration,
        phase=phase,
        assignments=assignments,
        policy=policy,
        temperature=temperature,
        max_tokens=cfg.policy_max_tokens,
        max_steps=cfg.max_steps,
        wait_s=cfg.wait_s,
        parallel=cfg.parallel_browsers,
        seed=cfg.seed,
        content_seed=cfg.seed,
        keep_screenshots=cfg.keep_screenshots,
    )
