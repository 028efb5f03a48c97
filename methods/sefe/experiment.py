"""The SEFE experiment: every arm × seed through the task-incremental harness, with a resumable cache.

:class:`SefeLearner` is one arm (ASD X %, RegLoRA λ) on one seed. For each task it attaches a
fresh LoRA to the model merged so far, trains on the task's (ASD-rewritten) data with
``CE + λ·L_reg``, reads the adapter's key positions into the :class:`KeyMemory` (always, so
the "|B·A| at stored positions" diagnostic exists for arms without RegLoRA too), merges, and
answers every seen task's native-style test items. Each stage's adapter and evaluation are
cached under ``<cache>/sefe/<hash of everything that determines them>``; the hash of task 1
does not depend on λ (no penalty on task 1), so arms share identical stages and an interrupted
reproduce resumes where it stopped. The hash does not depend on the device (a stage trained on a GPU
serves a CPU run and vice versa; adapters are stored as CPU tensors); ``amp="bf16"`` stages are
keyed apart from fp32 ones.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any

import torch

from core.device import resolve_device
from core.jobs import JobContext, Report, Section, null_context
from core.train import pin_threads
from methods.continual.task_incremental import TaskEval, TaskIncrementalLearner, TIExperiment, TIRun, run_sequence
from methods.sefe.asd import eval_examples, train_examples
from methods.sefe.config import SefeConfig
from methods.sefe.lora import apply_adapter, merge, train_task
from methods.sefe.reglora import KeyMemory, magnitudes
from methods.sefe.split import SplitLM, get_split
from methods.sefe.tasks import TASKS, judge

log = logging.getLogger(__name__)
N_EXAMPLES = 6  # answers kept per (stage, task) for the report/UI, non-compliant ones first


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def default_cache_dir() -> Path:
    from core.config import get_settings

    return Path(get_settings().cache_dir) / "sefe"


def load_base() -> tuple[Any, Any]:
    """The shared local SmolLM2-135M-Instruct and its tokenizer (never mutated: SplitLM copies it)."""
    from core.llm import get_local_model

    lm = get_local_model()
    return lm.model, lm.tokenizer


def split_model(cfg: SefeConfig, device: Any = "cpu", amp: str = "off") -> SplitLM:
    return get_split(cfg.adapt_layers, load_base, device=device, amp=amp)


def evaluate_tasks(split: SplitLM, cfg: SefeConfig, tasks: list[str], progress: JobContext) -> dict:
    """Greedy answers to every task's native test items, judged for format and correctness."""
    out: dict[str, TaskEval] = {}
    for k, name in enumerate(tasks):
        items = eval_examples(name, n_test=cfg.n_test)
        answers = split.generate(
            [e.prompt for e in items],
            max_new_tokens=cfg.max_new_tokens,
            batch_size=cfg.eval_batch,
            progress=progress.sub(k / len(tasks), (k + 1) / len(tasks)),
        )
        judged = [judge(TASKS[name], a, e.label) for a, e in zip(answers, items)]
        rows = [
            {"prompt": e.prompt, "output": a, "answer": e.answer, "compliant": c, "correct": ok}
            for e, a, (c, ok) in zip(items, answers, judged)
        ]
        rows.sort(key=lambda r: r["compliant"])  # non-compliant (superficially forgotten) first
        out[name] = TaskEval(
            n=len(items),
            correct=sum(ok for _, ok in judged),
            compliant=sum(c for c, _ in judged),
            examples=rows[:N_EXAMPLES],
        )
    return out


def _eval_to_json(evals: dict[str, TaskEval]) -> dict:
    return {
        k: {"n": v.n, "correct": v.correct, "compliant": v.compliant, "examples": v.examples} for k, v in evals.items()
    }


def _eval_from_json(d: dict) -> dict[str, TaskEval]:
    return {k: TaskEval(**v) for k, v in d.items()}


def _current_split() -> SplitLM | None:
    from methods.sefe.split import _SPLITS

    return next(iter(_SPLITS.values()), None)


class SefeLearner(TaskIncrementalLearner):
    """One arm (ASD ``x_percent``, RegLoRA ``lam``) on one seed, cached stage by stage."""

    def __init__(
        self,
        cfg: SefeConfig,
        *,
        x_percent: float,
        lam: float,
        seed: int,
        cache_dir: Path | None = None,
        device: Any = "cpu",
        amp: str = "off",
    ):
        self.cfg, self.x, self.lam, self.seed = cfg, float(x_percent), float(lam), int(seed)
        self.device, self.amp = resolve_device(device), amp
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir()
        self.settings = cfg.train_settings()
        self.memory = KeyMemory(cfg.key_fraction)
        self.applied: list[list] = []  # every merged adapter so far, in order
        self.lineage: list[dict] = [self._base_key()]

    def _base_key(self) -> dict:
        from core.llm import model_hash

        c = self.cfg
        key = {
            "v": 1,
            "model": model_hash(),
            "adapt_layers": c.adapt_layers,
            "train": self.settings.__dict__,
            "n_train": c.n_train,
            "key_fraction": c.key_fraction,
            "seed": self.seed,
        }
        if self.amp != "off":  # mixed precision is another computation; the device is not
            key["amp"] = self.amp
        return key

    def _stage_dir(self) -> Path:
        return self.cache_dir / _hash(self.lineage)

    def _ensure_model(self) -> SplitLM:
        """The shared split model holding exactly this learner's merged adapters."""
        split = split_model(self.cfg, self.device, self.amp)
        if split.owner is not self:
            split.reset()
            for pairs in self.applied:
                apply_adapter(split.upper, pairs, self.settings.alpha / self.settings.rank)
            split.owner = self
        return split

    def _record(self, pairs: list) -> None:
        """Remember a merged adapter (applied to the shared model now only if this learner holds it)."""
        self.applied.append(pairs)
        split = _current_split()
        if split is not None and split.owner is self:
            apply_adapter(split.upper, pairs, self.settings.alpha / self.settings.rank)

    def learn_task(self, t: int, task: str, progress: JobContext) -> dict[str, float]:
        self.lineage.append({"task": task, "x": self.x, "lam": self.lam if t > 0 else 0.0})
        d = self._stage_dir()
        if (d / "adapter.pt").exists() and (d / "stats.json").exists():
            pairs = torch.load(d / "adapter.pt", weights_only=True, map_location="cpu")
            pairs = [(n, B, A) for n, B, A in pairs]
            stats = json.loads((d / "stats.json").read_text())
            self._record(pairs)
            progress(1.0, f"{task}: cached")
        else:
            split = self._ensure_model()
            examples = train_examples(task, n_train=self.cfg.n_train, seed=self.seed + 1000 * t, x_percent=self.x)
            t0 = time.perf_counter()
            peft_model, stats = train_task(
                split.upper,
                split.tokenizer,
                examples,
                self.settings,
                seed=self.seed + 1000 * t,
                memory=self.memory,
                lam=self.lam,
                progress=progress,
                features=split.features,
                amp=self.amp,
            )
            split.upper, pairs = merge(peft_model, self.settings)
            self.applied.append(pairs)
            stats["train_s"] = time.perf_counter() - t0
            stats["n_examples"] = len(examples)
            stats["n_transformed"] = sum(e.transformed for e in examples)
            if t > 0:  # |B·A| of this task's update at the positions stored for earlier tasks, and elsewhere
                stats["key_mag"], stats["free_mag"] = magnitudes(pairs, self.memory)
            d.mkdir(parents=True, exist_ok=True)
            torch.save([(n, B, A) for n, B, A in pairs], d / "adapter.pt")
            (d / "stats.json").write_text(json.dumps(stats))
        self.memory.extend(pairs)
        self.memory.to(self.device)  # where the penalty indexes the adapters
        stats = {k: float(v) for k, v in stats.items() if isinstance(v, (int, float))}
        stats["key_positions"] = float(len(self.memory))
        return stats

    def evaluate(self, t: int, tasks: list[str], progress: JobContext) -> dict[str, TaskEval]:
        f = self._stage_dir() / f"eval_{_hash([tasks, self.cfg.n_test, self.cfg.max_new_tokens])}.json"
        if f.exists():
            return _eval_from_json(json.loads(f.read_text()))
        evals = evaluate_tasks(self._ensure_model(), self.cfg, tasks, progress)
        f.write_text(json.dumps(_eval_to_json(evals)))
        return evals


def run_multitask(
    cfg: SefeConfig,
    seed: int,
    progress: JobContext,
    cache_dir: Path | None = None,
    *,
    device: Any = "cpu",
    amp: str = "off",
) -> TIRun:
    """The upper bound: one fresh LoRA trained jointly on every task's native data, evaluated once.

    Only the last row of its matrices is filled (there are no intermediate stages)."""
    import numpy as np

    learner = SefeLearner(cfg, x_percent=0.0, lam=0.0, seed=seed, cache_dir=cache_dir, device=device, amp=amp)
    tasks = list(cfg.tasks)
    learner.lineage.append({"multitask": tasks})
    d = learner._stage_dir()
    if not (d / "stats.json").exists():
        split = learner._ensure_model()
        examples = [
            e
            for k, t in enumerate(tasks)
            for e in train_examples(t, n_train=cfg.n_train, seed=seed + 1000 * k, x_percent=0.0)
        ]
        t0 = time.perf_counter()
        peft_model, stats = train_task(
            split.upper,
            split.tokenizer,
            examples,
            learner.settings,
            seed=seed,
            progress=progress.sub(0, 0.8),
            features=split.features,
            amp=amp,
        )
        split.upper, pairs = merge(peft_model, learner.settings)
        learner.applied.append(pairs)
        stats["train_s"] = time.perf_counter() - t0
        d.mkdir(parents=True, exist_ok=True)
        torch.save(pairs, d / "adapter.pt")
        (d / "stats.json").write_text(json.dumps(stats))
    else:
        learner._record([(n, B, A) for n, B, A in torch.load(d / "adapter.pt", weights_only=True, map_location="cpu")])
        stats = json.loads((d / "stats.json").read_text())
    evals = learner.evaluate(len(tasks) - 1, tasks, progress.sub(0.8, 1.0))
    T = len(tasks)
    mats = {k: np.full((T, T), np.nan) for k in ("accuracy", "compliance", "essential")}
    for j, name in enumerate(tasks):
        e = evals[name]
        mats["accuracy"][T - 1, j], mats["compliance"][T - 1, j], mats["essential"][T - 1, j] = (
            e.accuracy,
            e.compliance,
            e.essential,
        )
    diag = [{} for _ in range(T - 1)] + [{k: float(v) for k, v in stats.items() if isinstance(v, (int, float))}]
    examples = [{} for _ in range(T - 1)] + [{k: v.examples for k, v in evals.items()}]
    return TIRun(
        seed=seed,
        tasks=tasks,
        matrices={k: m.tolist() for k, m in mats.items()},
        diagnostics=diag,
        examples=examples,
        task_seconds=[0.0] * (T - 1) + [float(stats.get("train_s", 0.0))],
    )


def run_experiment(
    cfg: SefeConfig,
    progress: JobContext | None = None,
    *,
    cache_dir: Path | None = None,
    device: Any = "cpu",
    amp: str = "off",
) -> dict[str, TIExperiment]:
    """Every arm of ``cfg`` over every seed → ``{arm id: TIExperiment}`` (zero-shot base model first).

    The model trains and answers on ``device`` (``amp="bf16"``: bfloat16 autocast)."""
    progress = progress or null_context()
    multitask = [("multitask", 0.0, 0.0)] if "multitask" in cfg.arms else []
    k_mt = cfg.multitask_seeds or len(cfg.seeds)
    per_seed = [cfg.arm_plan_for(i) + (multitask if i < k_mt else []) for i in range(len(cfg.seeds))]
    out: dict[str, TIExperiment] = {}
    n = sum(len(jobs) for jobs in per_seed)
    k = 0
    with pin_threads(cfg.threads):
        for seed, jobs in zip(
            cfg.seeds, per_seed, strict=True
        ):  # seed-major: a partial run has every arm of the first seeds
            for arm, x, lam in jobs:
                sub = progress.sub(k / n, (k + 1) / n)
                label = f"{arm} seed {seed}: "
                exp = out.setdefault(arm, TIExperiment(arm=arm, tasks=list(cfg.tasks)))
                if arm == "multitask":
                    exp.runs.append(run_multitask(cfg, seed, sub, cache_dir, device=device, amp=amp))
                else:
                    learner = SefeLearner(
                        cfg, x_percent=x, lam=lam, seed=seed, cache_dir=cache_dir, device=device, amp=amp
                    )
                    exp.runs.append(run_sequence(learner, list(cfg.tasks), sub, seed=seed, label=label))
                k += 1
                log.info("%sdone (%d/%d)", label, k, n)
    return out


def zero_shot(
    cfg: SefeConfig,
    progress: JobContext | None = None,
    *,
    cache_dir: Path | None = None,
    device: Any = "cpu",
    amp: str = "off",
) -> dict:
    """The untrained (possibly truncated) model on every task: its format compliance and accuracy."""
    progress = progress or null_context()
    cache = (Path(cache_dir) if cache_dir else default_cache_dir()) / "zero_shot"
    base = SefeLearner(cfg, x_percent=0, lam=0, seed=0, cache_dir=cache, amp=amp)._base_key()
    f = cache / f"{_hash([base, cfg.tasks, cfg.n_test, cfg.max_new_tokens])}.json"
    if f.exists():
        return _eval_from_json(json.loads(f.read_text()))
    with pin_threads(cfg.threads):
        split = split_model(cfg, device, amp)
        split.reset()
        evals = evaluate_tasks(split, cfg, list(cfg.tasks), progress)
    cache.mkdir(parents=True, exist_ok=True)
    f.write_text(json.dumps(_eval_to_json(evals)))
    return evals


# --- the job body and the reproduction ------------------------------------------------------------------
def run_sefe(
    cfg: SefeConfig,
    progress: JobContext,
    *,
    unit_checks: bool = False,
    title: str | None = None,
    device: Any = "cpu",
    amp: str = "off",
    cache_dir: Path | None = None,
) -> Report:
    """Zero-shot answers, every arm × seed, and the report; the model runs on ``device``."""
    from core.device import device_provenance
    from methods.sefe.checks import all_checks
    from methods.sefe.report import build_report, expected_direction_checks, reading

    dev = resolve_device(device)
    t0 = time.perf_counter()
    zs = zero_shot(cfg, progress.sub(0.0, 0.03), cache_dir=cache_dir, device=dev, amp=amp)
    exps = run_experiment(cfg, progress.sub(0.03, 0.99), cache_dir=cache_dir, device=dev, amp=amp)
    checks = all_checks() if unit_checks else []
    kwargs = {"title": title} if title else {}
    report = build_report(cfg, exps, zero_shot=zs, unit_checks=checks, wall_s=time.perf_counter() - t0, **kwargs)
    report.add_section("Reading", reading(exps, checks + expected_direction_checks(exps), cfg.lam))
    for arm, exp in exps.items():  # the training loss at the end of the last task, mean over seeds
        last = [r.diagnostics[-1]["ce"] for r in exp.runs if r.diagnostics and "ce" in r.diagnostics[-1]]
        if last:
            report.metrics[f"{arm}.train_ce_last"] = sum(last) / len(last)
    report.metrics.update(device_provenance(dev, amp))
    progress(1.0, "done")
    return report


def train_sizes(cfg: SefeConfig) -> dict[str, int]:
    """Training examples per task: ``n_train`` or the whole training split when it is smaller."""
    from methods.sefe.tasks import load_task

    return {t: min(cfg.n_train, len(load_task(t).train_idx)) for t in cfg.tasks}


def outside_spec(cfg: SefeConfig) -> str:
    """What of ``cfg`` lies outside the spec's §6 ranges, and why (measured on this machine)."""
    out = []
    if cfg.lr != 2e-4:
        out.append(f"lr {cfg.lr:g} instead of 2e-4")
    if cfg.alpha / cfg.rank != 2:
        out.append(f"α/r = {cfg.alpha / cfg.rank:g} instead of 2")
    if not 8 <= cfg.batch_size <= 16:
        out.append(f"batch {cfg.batch_size} instead of 8–16")
    if cfg.epochs > 3:
        out.append(f"{cfg.epochs} epochs instead of 1–3")
    text = ""
    if out:
        text += (
            "Outside the spec's §6 ranges (said plainly): "
            + ", ".join(out)
            + ". With ≤ 600 examples and 1–3 epochs a task gets a few dozen to a few hundred optimizer steps, and at "
            "the spec's settings the 135M model did not learn (measured: iris loss 4.7 → 3.0 in 8 steps at lr 2e-4, "
            "every answer 'The answer is: \"iris\"'; at lr 1e-3 and batch 8, 42 steps, every answer one species, "
            "31.6 % = the majority class; at batch 4, 84 steps, 97.4 %). "
        )
    if cfg.adapt_layers:
        text += (
            f"LoRA on the top {cfg.adapt_layers} of 30 layers instead of all (one full-model training step took 26 s "
            "on this shared machine; with the top 4 layers iris stayed at one answer for every flower, 34 %, where "
            "the top 8 reached 97 %)."
        )
    return text


def reproduce_report(options: Any, progress: JobContext) -> Report:
    """``paperworks reproduce sefe``: the spec §6 experiment at the preset's size and its Report (``sefe.md``);
    ``-o preset=stored`` rebuilds the Report from the stored runs (:func:`stored_report`), training nothing."""
    from methods.sefe.config import PRESETS

    if options.preset == "stored":
        return stored_report(json.loads(STORED_RUNS.read_text(encoding="utf-8")), progress)
    overrides: dict = {"threads": options.threads}
    if options.seeds:
        overrides["seeds"] = list(range(options.seeds))
    cfg = SefeConfig(**{**PRESETS[options.preset], **overrides})
    t0 = time.perf_counter()
    report = run_sefe(cfg, progress, unit_checks=True, device=options.device, amp=options.amp)
    wall = time.perf_counter() - t0
    return _finish(
        report,
        cfg,
        "This reproduce call took "
        f"{wall / 60:.1f} min of wall time (stages found in the stage cache are not retrained; the training times "
        "above are those recorded when each stage was trained).",
    )


def _finish(report: Report, cfg: SefeConfig, wall_note: str) -> Report:
    """The reproduction's closing sections: what was shrunk, the cost (``wall_note`` last), the Reading last."""
    shrunk = (
        f"Shrunk for a shared 2-core CPU (spec §6 allows model/data/epochs/r/α/λ changes, not the algorithm): "
        f"SmolLM2-135M-Instruct with LoRA (r={cfg.rank}, α={cfg.alpha:g}, dropout 0.05, lr {cfg.lr:g}, cosine, 3 % "
        f"warm-up, wd 0) on q,k,v,o,gate,up,down of the top {cfg.adapt_layers or 30} of 30 layers "
        f"(N_mod = {7 * (cfg.adapt_layers or 30)}; the frozen lower layers' outputs are cached); "
        f"≤ {cfg.n_train} training examples × {cfg.epochs} epochs per task ("
        + ", ".join(f"{t} {n}" for t, n in train_sizes(cfg).items())
        + f"), batch {cfg.batch_size}; {cfg.n_test} test "
        f"items per task; greedy answers of ≤ {cfg.max_new_tokens} tokens; ASD X = {cfg.asd_percent:g} % by "
        f"rule-based templates (not the MLLM prompts); λ = {cfg.lam:g}; seeds {list(cfg.seeds)}"
        + (
            f"; λ sweep {', '.join(f'{x:g}' for x in cfg.lam_sweep)} on the first {cfg.sweep_seeds or len(cfg.seeds)} "
            "seed(s)"
            if cfg.lam_sweep
            else ""
        )
        + ". "
        "Unchanged: fresh LoRA + merge per task, unscaled B·A top-2 % per matrix, concatenated index lists, "
        "L1 at stored positions averaged per matrix then over matrices, λ·L_reg on every step, ASD's equal split. "
        + outside_spec(cfg)
    )
    stage_s = {
        d["train_s"]
        for e in report.data["arms"].values()
        for r in e["runs"]
        for d in r["diagnostics"]
        if "train_s" in d
    }
    secs = sum(stage_s)  # a stage shared by two arms has one (cached) training time
    reading_sections = [x for x in report.sections if x.title == "Reading"]
    report.sections = [x for x in report.sections if x.title != "Reading"]
    report.add_section("What was shrunk", shrunk)
    report.add_section(
        "Cost",
        f"LoRA training time summed over every distinct stage: {secs / 60:.1f} min with {cfg.threads} torch thread(s) "
        "on the 2-core machine (stages shared between arms — task 1 of sequential/RegLoRA and of ASD/SEFE — are "
        "trained once and cached; evaluation and the frozen-layer features come on top). " + wall_note,
    )
    report.sections += reading_sections  # the plain reading last
    return report


#: The stored runs of the last full reproduction (``report.data`` of :func:`run_sefe`: config, every arm's runs with
#: matrices and diagnostics, the zero-shot answers), which ``-o preset=stored`` rebuilds the results doc from.
STORED_RUNS = Path(__file__).resolve().parents[2] / "docs" / "results" / "sefe" / "runs.json"
STORED_FROM = (
    "the 2026-12-03 `paperworks reproduce sefe` run (commit 24f1ed2: the cpu preset of that day, 3 seeds × the "
    "four sequential arms and multitask, the λ sweep on seed 0)"
)


def stored_experiments(data: dict) -> tuple[SefeConfig, dict[str, TIExperiment], dict[str, TaskEval]]:
    """The config, every arm's runs and the zero-shot answers from a stored ``runs.json`` (``report.data``)."""
    cfg = SefeConfig(**data["config"])
    exps = {a: TIExperiment.from_dict(e) for a, e in data["arms"].items()}
    zs = {}
    for t, z in (data.get("zero_shot") or {}).items():  # stored as shares of the n_test items
        correct, compliant = round(z["accuracy"] * cfg.n_test), round(z["compliance"] * cfg.n_test)
        if abs(correct / cfg.n_test - z["accuracy"]) > 1e-9 or abs(compliant / cfg.n_test - z["compliance"]) > 1e-9:
            raise ValueError(f"zero-shot {t}: the stored shares are not counts of {cfg.n_test} test items")
        zs[t] = TaskEval(n=cfg.n_test, correct=correct, compliant=compliant, examples=z.get("examples", []))
    return cfg, exps, zs


def stored_report(data: dict, progress: JobContext | None = None) -> Report:
    """The results doc rebuilt from stored runs (no training, no model call): the same tables, headlines
    (results.json), §7 checks (the unit checks rerun: they are exact and cheap) and Reading as a fresh run's."""
    from methods.sefe.checks import all_checks
    from methods.sefe.report import build_report, expected_direction_checks, reading

    progress = progress or null_context()
    cfg, exps, zs = stored_experiments(data)
    checks = all_checks()
    report = build_report(cfg, exps, zero_shot=zs, unit_checks=checks, wall_s=data.get("wall_s"))
    report.add_section("Reading", reading(exps, checks + expected_direction_checks(exps), cfg.lam))
    n = len(cfg.seeds)
    report.sections.insert(
        1,
        Section(
            title="Where these numbers come from",
            markdown=f"Rebuilt from the stored per-seed values of {STORED_FROM}: `docs/results/sefe/runs.json` "
            f"(every arm's accuracy, compliance and essential matrices and RegLoRA diagnostics per seed), no rerun "
            f"(`paperworks reproduce sefe -o preset=stored`). The headlines are paired over those {n} seeds; the "
            "current cpu preset runs 5 seeds of the four sequential arms, and that rerun is still to be run: one begun "
            "on 2026-12-06 measured 100–140 s per LoRA stage on one torch thread (the stored run recorded 55–121 s), "
            "and the preset trains 77 stages (14 per seed, the λ sweep's 6 and the multitask bound), about 2.5 h "
            "before evaluation, more than one session here. Its seed-0 sequential arm reproduced the stored "
            "accuracies after iris, cancer and wine exactly and differed after digits (mean over the four tasks "
            "0.044 vs the stored 0.081), so seeds trained by today's code are not pooled with the stored three.",
        ),
    )
    report.summary += f" Rebuilt from the stored per-seed values of {STORED_FROM}, no rerun."
    progress(1.0, "rebuilt from the stored runs")
    return _finish(
        report,
        cfg,
        "The rebuild trains nothing (seconds); the training times above are those the stored run recorded.",
    )
