"""Every knob of a PAE run, with the paper's value where one exists (spec §3) and CPU-scale defaults.

The CPU defaults shrink sizes (sites × tasks, rollouts per iteration, iterations, LoRA
rank) and raise the learning rate / shrink gradient accumulation so that a handful of
kept trajectories still move a 135M policy; the algorithm (random task per rollout,
binary evaluator reward with "no ANSWER ⇒ 0", per-task 20th-percentile filter, NLL of
the kept actions, 10-step cap) is the paper's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from agents.pae.sites import SITE_NAMES
from core.ownership import owned

RewardSource = Literal["oracle", "llm", "random"]
Dispatch = Literal["inline", "celery"]


class RunConfig(BaseModel):
    """A PAE training run."""

    name: str = Field("pae", max_length=200, description="A label for the run.")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="Seeds content, task sampling, sampling and training.")
    train_sites: list[str] = Field(
        default_factory=lambda: ["shop", "recipes", "dictionary", "map"],
        description="Sites whose proposed tasks are practised.",
    )
    heldout_sites: list[str] = Field(
        default_factory=lambda: ["news"], description="Sites never practised on (zero-shot generalisation test)."
    )
    tasks_per_site: int = Field(20, ge=1, le=200, description="Template-proposed training tasks per site.")
    llm_tasks_per_site: int = Field(
        0, ge=0, le=50, description="Tasks to ask the LLM proposer for, per site (paper: 25)."
    )
    proposer_max_tokens: int = Field(512, ge=32, le=4096, description="Proposer reply budget (paper: 2048).")
    test_tasks_per_site: int = Field(4, ge=0, le=100, description="Held-out template tasks per site.")
    webarena_tasks: int = Field(0, ge=0, le=89, description="WebArena map tasks (of 89) added to the test set.")
    iterations: int = Field(3, ge=0, le=200, description="Global iterations (paper: 200).")
    rollouts_per_iteration: int = Field(16, ge=1, le=1024, description="Trajectories per iteration (paper: 1024).")
    initial_test: bool = Field(True, description="Test the starting policy before the first update.")
    eval_every: int = Field(3, ge=1, le=100, description="Test every k iterations, and at the start (paper: 3).")
    max_steps: int = Field(10, ge=1, le=30, description="Episode step cap (paper: 10).")
    wait_s: float = Field(5.0, ge=0, le=30, description="Seconds the Wait action waits (paper: 5).")
    parallel_browsers: int = Field(1, ge=1, le=16, description="Concurrent browsers per rollout batch.")
    rollout_batch: int = Field(8, ge=1, le=256, description="Episodes per rollout job when dispatching to Celery.")
    dispatch: Dispatch = Field("inline", description="Run rollouts/evaluation in this process or as Celery jobs.")
    reward: RewardSource = Field(
        "llm",
        description="Training reward: the LLM judge (the method), the sites' oracle (a labelled sanity arm), or "
        "random (as many positives as the judge gives, on random answered trajectories).",
    )
    random_positives: list[int] | None = Field(
        None,
        description="Random arm: positives per iteration (the judge arm's counts); default: the judge's count "
        "on the same batch.",
    )
    judge_model: str | None = Field(None, max_length=200, description="Gateway model of the LLM judge.")
    judge_max_tokens: int = Field(
        256, ge=4, le=1000, description="Judge reply budget: room to think before the verdict (paper: 1000)."
    )
    judge_retries: int = Field(2, ge=0, le=5, description="Extra judge calls when a reply states no verdict.")
    proposer_model: str | None = Field(None, max_length=200, description="Gateway model of the LLM proposer.")
    proposer_constrained: bool = Field(
        True, description="Constrain the LLM proposer to the task JSON schema (local models) so it yields valid tasks."
    )
    holdout_templates: int = Field(
        1,
        ge=0,
        le=3,
        description="Whole task templates per training site never trained on: the unseen-task test uses only them.",
    )
    judge_tests: bool = Field(True, description="Also run the LLM judge on test trajectories (agreement).")
    policy_model: str | None = Field(
        None, max_length=300, description="Gateway model of the policy; default the local SmolLM2."
    )
    policy_max_tokens: int = Field(48, ge=8, le=512, description="Reply budget of the policy (paper: 256).")
    temperature: float = Field(1.0, ge=0, le=2, description="Rollout sampling temperature (paper: 1.0).")
    test_temperature: float = Field(
        1.0,
        ge=0,
        le=2,
        description="Test-time sampling temperature (paper: 1.0: the reference agent samples in evaluation as in "
        "rollouts; 0 = greedy, which after a few BC updates can loop on one action until the step cap).",
    )
    top_p_filter: float = Field(0.2, ge=0, le=1, description="Per-task length quantile kept (paper: 0.2).")
    actor_trajectories: int = Field(64, ge=1, le=4096, description="Kept trajectories sampled per update.")
    actor_epochs: int = Field(1, ge=1, le=20, description="BC epochs per iteration (paper: 1).")
    lora_r: int = Field(16, ge=1, le=256, description="LoRA rank (paper: 256).")
    lora_alpha: int = Field(32, ge=1, le=512, description="LoRA alpha (paper: 256).")
    lr: float = Field(3e-4, gt=0, le=1e-2, description="Adam learning rate (paper: 2e-5 at r=256).")
    actor_lr: float | None = Field(
        None,
        gt=0,
        le=1e-2,
        description="Adam learning rate of the PAE updates (paper: 2e-5, its lm_lr); default: lr, the SFT start's.",
    )
    grad_accum: int = Field(4, ge=1, le=256, description="Gradient accumulation (paper: 32).")
    max_len: int = Field(768, ge=128, le=4096, description="Token budget of one BC example.")
    sft_demos_per_site: int = Field(
        0,
        ge=0,
        le=100,
        description="Scripted-oracle demonstrations per train site for the SFT start "
        "(the paper starts from SFT on a stronger agent's trajectories).",
    )
    sft_epochs: int = Field(2, ge=1, le=20, description="Epochs of the SFT start.")
    sft_adapter: str | None = Field(
        None,
        max_length=500,
        description="SFT adapter to start from (skips SFT): a directory inside the artifact store, the data "
        "directory or <home>/uploads, or the id of a stored adapter artifact (adapter.tar.gz); over the API, "
        "an artifact of the key's own jobs or a directory of the data directory.",
        json_schema_extra=owned("artifact-or-path"),
    )
    keep_screenshots: bool = Field(True, description="Store a screenshot per step.")

    @field_validator("sft_adapter")
    @classmethod
    def _adapter_inside_roots(cls, v: str | None) -> str | None:
        from core.server_paths import inside_roots

        return None if v is None else inside_roots(v, kind="dir", allow_artifact_id=True)

    @model_validator(mode="after")
    def _sites_known(self) -> RunConfig:
        self.validate_sites()
        return self

    def validate_sites(self) -> None:
        unknown = [s for s in [*self.train_sites, *self.heldout_sites] if s not in SITE_NAMES]
        if unknown:
            raise ValueError(f"unknown sites {unknown}; known: {list(SITE_NAMES)}")
        if set(self.train_sites) & set(self.heldout_sites):
            raise ValueError("a held-out site cannot also be a training site")


#: Named sizes of ``paperworks reproduce pae`` (and ``paperworks pae run --preset``): RunConfig overrides.
PRESETS: dict[str, dict[str, Any]] = {
    # sized for two shared CPU cores (see docs/results/pae/small-run.md for the measured time)
    "small": dict(
        tasks_per_site=20,
        test_tasks_per_site=2,
        webarena_tasks=4,
        iterations=2,
        rollouts_per_iteration=6,
        sft_demos_per_site=8,
        sft_epochs=3,
        eval_every=100,
        max_steps=10,
        policy_max_tokens=32,
        judge_max_tokens=256,
        actor_trajectories=16,
        llm_tasks_per_site=0,
        lr=5e-4,
        grad_accum=2,
    ),
    # the suggested scale (5 sites × 20 tasks, 16-32 rollouts, 3 iterations): hours on 2 cores
    "issue": dict(
        tasks_per_site=20,
        test_tasks_per_site=6,
        webarena_tasks=20,
        iterations=3,
        rollouts_per_iteration=24,
        sft_demos_per_site=5,
        sft_epochs=2,
        eval_every=100,
        max_steps=10,
        policy_max_tokens=48,
        judge_max_tokens=256,
        actor_trajectories=64,
        llm_tasks_per_site=5,
    ),
    # issue #26: the 1.5B model as judge and proposer over the 135M policy, >= 40 held-out tasks
    # (8 per training site x 4 + 8 on the held-out site), 3 iterations; run per seed (-o seed=0, 1).
    # SFT start: 10 demonstrations a site, 3 epochs, lr 5e-4, grad-accum 2 (lr and grad-accum as in `small`).
    # With 5 x 2 at lr 3e-4 the seed-0 start solved 0 of 48 held-out tasks and the judge had no success to find;
    # with this one, 11-12 of 48 (seed 1: 0 of 47; docs/results/pae/runlog.md).
    "issue-1.5b": dict(
        tasks_per_site=20,
        test_tasks_per_site=8,
        webarena_tasks=8,
        iterations=3,
        rollouts_per_iteration=24,
        sft_demos_per_site=10,
        sft_epochs=3,
        lr=5e-4,
        grad_accum=2,
        eval_every=100,
        max_steps=10,
        policy_max_tokens=48,
        judge_model="local/qwen2.5-coder-1.5b-instruct",
        proposer_model="local/qwen2.5-coder-1.5b-instruct",
        judge_max_tokens=320,
        actor_trajectories=64,
        llm_tasks_per_site=5,
    ),
}
