"""Start or resume a PAE run and turn its history into a :class:`~core.jobs.Report`."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from agents.pae import graph, store
from agents.pae.config import RunConfig
from agents.pae.dispatch import Dispatcher, InlineDispatcher, JobDispatcher
from core.jobs import JobContext, Report, null_context

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    run_id: str
    state: dict[str, Any]
    report: Report

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self.state.get("history") or [])


def make_dispatcher(
    cfg: RunConfig, progress: JobContext, enqueue: Any = None, steal_after_s: float = 30.0
) -> Dispatcher:
    if cfg.dispatch == "celery":
        return JobDispatcher(
            batch_size=cfg.rollout_batch, enqueue=enqueue, progress=progress, steal_after_s=steal_after_s
        )
    return InlineDispatcher(progress)


def run_pae(
    cfg: RunConfig,
    *,
    run_id: str | None = None,
    progress: JobContext | None = None,
    dispatcher: Dispatcher | None = None,
    device: Any = "cpu",
    amp: str = "off",
    sft_cache: bool = True,
) -> RunResult:
    """Run PAE with ``cfg`` (or resume ``run_id``, keeping its stored configuration).

    ``device``/``amp``: where this process trains the policy's LoRA (the policy itself answers through
    the LLM gateway, whose device is a setting); the report records them. ``sft_cache=False`` trains
    the SFT start even where a cached one fits.
    """
    from core.device import device_provenance, resolve_device

    dev = resolve_device(device)
    cfg.validate_sites()
    progress = progress or null_context()
    if run_id is None or store.get_run(run_id=run_id) is None:
        run_id = store.create_run(name=cfg.name, config=cfg.model_dump(mode="json"), run_id=run_id)
    else:
        cfg = RunConfig.model_validate(store.get_run(run_id=run_id)["config"])
    dispatcher = dispatcher or make_dispatcher(cfg, progress)
    store.update_run(run_id=run_id, status="running")
    try:
        state = graph.run(run_id, dispatcher=dispatcher, progress=progress, device=dev, amp=amp, sft_cache=sft_cache)
    except BaseException as exc:  # the run stays resumable from its checkpoint; say so instead of "running"
        error = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
        store.update_run(run_id=run_id, status="failed", metrics={"error": f"{type(exc).__name__}: {error}"})
        raise
    store.update_run(run_id=run_id, status="finished", metrics={"history": state.get("history", [])})
    report = build_report(run_id, cfg, list(state.get("history") or []))
    report.metrics.update(device_provenance(dev, amp))
    for h in state.get("history") or []:  # the learner's numbers: the SFT start's mean BC loss, when trained here
        if h.get("kind") == "sft" and h.get("source") == "trained":
            report.metrics["sft_loss"] = h["loss"]
    policy = state.get("policy") or {}
    if policy.get("kind") == "adapter":  # the fine-tuned policy's LoRA adapters, as a checkpoint artifact
        from core.artifacts import get_artifact_store

        report.add_file(
            "policy_adapter.tar.gz",
            get_artifact_store().read(policy["sha256"]),
            kind="checkpoint",
            mime="application/gzip",
            caption="LoRA adapters of the final policy",
        )
        report.metrics["policy_adapter_sha256"] = policy["sha256"]
    return RunResult(run_id, dict(state), report)


def curves(history: list[dict[str, Any]]) -> dict[str, list[tuple[int, float]]]:
    """Per-iteration series: rollout success (oracle), training reward, upper bound, test success per split."""
    out: dict[str, list[tuple[int, float]]] = {}
    for h in history:
        it = h.get("iteration", 0)
        if h["kind"] == "rollout":
            out.setdefault("rollout success (oracle)", []).append((it, h["oracle_success"]))
            out.setdefault("rollout reward", []).append((it, h["reward"]))
        elif h["kind"] == "filter":
            out.setdefault("upper bound", []).append((it, h.get("upper_bound_pool", h["upper_bound"])))
        elif h["kind"] == "test":
            for split, v in (h.get("success") or {}).items():
                out.setdefault(f"test: {split}", []).append((it, v))
    return out


def plot_curves(history: list[dict[str, Any]], title: str):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for name, pts in curves(history).items():
        if pts:
            xs, ys = zip(*pts)
            ax.plot(xs, ys, marker="o", label=name, linestyle="--" if name == "upper bound" else "-")
    ax.set_xlabel("iteration (policy updates)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(title)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    return fig


def _site_count(record: dict[str, Any], key: str, rate: float) -> tuple[int | str, int]:
    """Episodes solved and run on one split/site of a test record (older records counted only the split's)."""
    n = (record.get("n_per_site") or {}).get(key)
    if n is None:
        return ("n/a", record["n"].get(key.split("/")[0], 0))
    return (round(rate * n), n)


def build_report(run_id: str, cfg: RunConfig, history: list[dict[str, Any]]) -> Report:
    tests = [h for h in history if h["kind"] == "test" and "success" in h]
    first, last = (tests[0], tests[-1]) if tests else ({}, {})
    summ = ", ".join(
        f"{k}: {first.get('success', {}).get(k, 0):.2f} → {v:.2f}" for k, v in (last.get("success") or {}).items()
    )
    report = Report(title=f"PAE run {cfg.name} ({run_id[:8]})", summary=f"test success (oracle) {summ}")
    report.metrics.update({"run_id": run_id, "iterations": cfg.iterations, "reward": cfg.reward})
    report.metrics["test_decoding"] = "greedy" if cfg.test_temperature == 0 else f"sampled, T = {cfg.test_temperature}"
    report.metrics["pae_update_lr"] = cfg.actor_lr or cfg.lr
    for k, v in (last.get("success") or {}).items():
        report.metrics[f"final_{k}"] = v
    rows = [[h["iteration"], k, v, *_site_count(h, k, v)] for h in tests for k, v in h.get("per_site", {}).items()]
    report.add_table("Test success per site (oracle)", ["iteration", "split/site", "success", "solved", "n"], rows)
    roll = [h for h in history if h["kind"] in ("rollout", "filter", "train")]
    report.add_table(
        "Iterations",
        ["iteration", "record"],
        [
            [
                h["iteration"],
                json.dumps({k: v for k, v in h.items() if k not in ("kind", "iteration")}, default=str)[:300],
            ]
            for h in roll
        ],
    )
    changed = cfg.model_dump(mode="json", exclude_defaults=True)
    report.add_table(
        "Configuration (fields set away from their defaults)",
        ["field", "value"],
        [[k, json.dumps(v)] for k, v in sorted(changed.items())],
    )
    report.add_figure(
        "curves.png",
        plot_curves(history, f"PAE ({cfg.reward} reward)"),
        caption="per-iteration success and upper bound",
    )
    report.data["history"] = history
    return report
