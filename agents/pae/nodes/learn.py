"""SFT, FILTER and TRAIN: the learner side of the loop (math in :mod:`methods.pae_learner`).

* SFT: the scripted oracle demonstrates ``sft_demos_per_site`` tasks per training
  site and the local policy is behaviour-cloned on them (the paper starts PAE from
  an SFT checkpoint trained on a stronger agent's trajectories). The adapter is cached
  across runs under ``<cache_dir>/pae/sft/`` keyed by everything that determines it.
* FILTER: the replay buffer (every rollout so far) → reward > 0 → per-task shortest
  20th percentile; also the "upper bound" (tasks solved at least once so far).
* TRAIN: ``actor_trajectories`` kept trajectories sampled without replacement, their
  steps flattened to (prompt, reply) pairs, ``actor_epochs`` of LoRA BC continuing
  from the current adapter; the new adapter is the next iteration's policy.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.pae import prompts, store
from agents.pae.config import RunConfig
from agents.pae.nodes.common import (
    device_of,
    dispatcher_of,
    load_config,
    progress_of,
    rollout_params,
    sft_cache_of,
)
from agents.pae.runtime import adapter_ref, store_adapter
from agents.pae.state import PaeState
from core.config import get_settings
from core.jobs import JobContext
from methods.pae_learner.bc import BCExample, LoRAConfig, TrainStats, make_lora_model, train_bc
from methods.pae_learner.checkpoint import extract_adapter, save_adapter
from methods.pae_learner.filtering import calculate_upperbound, filter_trajectories, sample_for_training

log = logging.getLogger(__name__)


@dataclass
class _Traj:
    task_id: str
    reward: float
    length: int
    id: str


def lora_config(cfg: RunConfig, epochs: int, *, actor: bool = False) -> LoRAConfig:
    """LoRA training settings of the SFT start, or with ``actor`` of a PAE update (its own lr when set)."""
    return LoRAConfig(
        r=cfg.lora_r,
        alpha=cfg.lora_alpha,
        lr=(cfg.actor_lr or cfg.lr) if actor else cfg.lr,
        grad_accum=cfg.grad_accum,
        epochs=epochs,
        max_len=cfg.max_len,
        seed=cfg.seed,
    )


def update_policy(
    policy: dict[str, Any],
    trajectory_ids: list[str],
    lcfg: LoRAConfig,
    progress: JobContext,
    *,
    device: Any = "cpu",
    amp: str = "off",
) -> tuple[dict[str, Any], TrainStats]:
    """Behaviour-clone every step of ``trajectory_ids`` into the policy's LoRA; returns the new policy ref.

    The LoRA model (a copy of the shared local model) trains on ``device``; the adapter is saved from there.
    """
    from core.artifacts import get_artifact_store
    from core.llm import get_local_model

    examples = [BCExample.from_messages(p, reply) for p, reply, _ in store.step_examples(trajectory_ids=trajectory_ids)]
    lm = get_local_model()
    with tempfile.TemporaryDirectory(prefix="pae-train-") as tmp:
        start = None
        if policy.get("kind") == "adapter":
            start = str(extract_adapter(get_artifact_store().read(policy["sha256"]), Path(tmp) / "start"))
        model = make_lora_model(lm.model, lcfg, start, device=device)
        stats = train_bc(
            model,
            lm.tokenizer,
            examples,
            lcfg,
            on_step=lambda i, n, loss: progress(i / max(1, n), f"BC step {i}/{n} loss {loss:.3f}"),
            amp=amp,
        )
        ref = store_adapter(save_adapter(model, Path(tmp) / "out"))
        del model
    return ref, stats


def _sft_key(cfg: RunConfig, demo_keys: list[str], amp: str = "off") -> str:
    """The cached SFT adapter's key: everything that determines it; not the device, ``amp`` only when on."""
    from core.llm import model_hash

    extra = {"amp": amp} if amp != "off" else {}
    blob = json.dumps(
        {
            **extra,
            "demos": sorted(demo_keys),
            "lora": lora_config(cfg, cfg.sft_epochs).__dict__,
            "lora_init": "seeded",  # adapters cached before LoRA init and example order were
            "example_order": "given",  # reproducible are not reused
            "model": model_hash(),
            "policy_max_tokens": cfg.policy_max_tokens,
            "prompt": prompts.PROMPT_VERSION,
        },
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def sft(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    from agents.pae.runtime import base_policy_ref
    from core.artifacts import get_artifact_store

    run_id = state["run_id"]
    cfg = load_config(run_id)
    progress = progress_of(config)
    base = base_policy_ref(cfg.policy_model)
    if cfg.sft_adapter:
        ref = adapter_ref(cfg.sft_adapter)
        return {"policy": ref, "history": [{"kind": "sft", "iteration": 0, "source": "given adapter"}]}
    demos = store.load_tasks(run_id=run_id, split="demo")
    if not demos or cfg.policy_model is not None:
        return {"policy": base, "history": [{"kind": "sft", "iteration": 0, "source": "none"}]}
    ids = dispatcher_of(config).rollouts(
        **rollout_params(
            cfg,
            run_id=run_id,
            iteration=0,
            phase="demo",
            assignments=[(i, rid) for i, (rid, _, _) in enumerate(demos)],
            policy={"kind": "scripted"},
            temperature=0.0,
        )
    )
    dispatcher_of(config).evaluate(trajectory_ids=ids, judge=False, judge_max_tokens=cfg.judge_max_tokens)
    good = [r["id"] for r in store.trajectory_rows(run_id=run_id, phase="demo") if (r["oracle_reward"] or 0) > 0]
    device, amp = device_of(config)
    cache = Path(get_settings().cache_dir) / "pae" / "sft" / f"{_sft_key(cfg, [t.id for _, t, _ in demos], amp)}.tar.gz"
    use_cache = sft_cache_of(config)
    if use_cache and cache.exists():
        stored = get_artifact_store().put_bytes(cache.read_bytes(), name="adapter.tar.gz", mime="application/gzip")
        ref = {"kind": "adapter", "sha256": stored.sha256, "size": stored.size}
        record = {"kind": "sft", "iteration": 0, "source": "cache", "demos": len(good)}
    else:
        ref, stats = update_policy(base, good, lora_config(cfg, cfg.sft_epochs), progress, device=device, amp=amp)
        if use_cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_bytes(get_artifact_store().read(ref["sha256"]))
        record = {
            "kind": "sft",
            "iteration": 0,
            "source": "trained",
            "demos": len(good),
            "examples": stats.examples,
            "loss": stats.mean_loss,
            "seconds": stats.seconds,
        }
    store.update_run(run_id=run_id, policy=json.dumps(ref))
    return {"policy": ref, "history": [record]}


def filter_node(state: PaeState, config: RunnableConfig) -> dict[str, Any]:  # noqa: ARG001 - node signature
    run_id, it = state["run_id"], state.get("iteration", 0)
    cfg = load_config(run_id)
    rows = store.trajectory_rows(run_id=run_id, phase="rollout", max_iteration=it)
    trajs = [_Traj(r["task_id"], r["reward"] or 0.0, r["length"], r["id"]) for r in rows]
    kept = filter_trajectories(trajs, cfg.top_p_filter)
    oracle_trajs = [_Traj(r["task_id"], r["oracle_reward"] or 0.0, r["length"], r["id"]) for r in rows]
    pool = len(store.load_tasks(run_id=run_id, split="train")) or 1
    solved = len({t.task_id for t in trajs if t.reward > 0})
    record = {
        "kind": "filter",
        "iteration": it,
        "buffer": len(trajs),
        "kept": len(kept),
        "kept_tasks": len({k.task_id for k in kept}),
        "upper_bound": calculate_upperbound(trajs),
        "upper_bound_pool": solved / pool,
        "upper_bound_oracle": calculate_upperbound(oracle_trajs),
    }
    return {"kept": [k.id for k in kept], "history": [record]}


def train(state: PaeState, config: RunnableConfig) -> dict[str, Any]:
    run_id, it = state["run_id"], state.get("iteration", 0)
    cfg = load_config(run_id)
    kept = list(state.get("kept") or [])
    rng = random.Random(f"train:{cfg.seed}:{it}")
    chosen = sample_for_training(kept, cfg.actor_trajectories, rng)
    policy = state["policy"]
    trainable = policy.get("kind") == "adapter" or str(policy.get("model", "")).startswith("local/")
    if not trainable:
        record = {
            "kind": "train",
            "iteration": it,
            "trajectories": len(chosen),
            "examples": 0,
            "note": f"policy {policy.get('model')} has no local weights to fine-tune: unchanged",
        }
    elif not chosen:
        record = {
            "kind": "train",
            "iteration": it,
            "trajectories": 0,
            "examples": 0,
            "note": "no successful trajectory to clone: policy unchanged",
        }
    else:
        device, amp = device_of(config)
        policy, stats = update_policy(
            policy,
            chosen,
            lora_config(cfg, cfg.actor_epochs, actor=True),
            progress_of(config),
            device=device,
            amp=amp,
        )
        record = {
            "kind": "train",
            "iteration": it,
            "trajectories": len(chosen),
            "examples": stats.examples,
            "loss": stats.mean_loss,
            "optimizer_steps": stats.optimizer_steps,
            "lr": cfg.actor_lr or cfg.lr,
            "seconds": stats.seconds,
        }
    store.update_run(run_id=run_id, iteration=it + 1, policy=json.dumps(policy))
    return {"policy": policy, "iteration": it + 1, "history": [record]}
