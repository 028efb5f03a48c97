"""One (task, seed) of the Double-Filter experiment, in the spec §3.3 order.

(1) fine-tune the full model (arm ``none``); (2) run the GA over layer genomes, fitness
F(g) = Acc_val(g) − γ·FLOPs(g)/FLOPs(1) with the fine-tuned weights as a zero-step proxy; (3) fine-tune
from the pretrained weights with the IPF patches (``ipf``), the GA mask (``alf``) and both (``both``);
(4) infer with the same patches and mask. With ``directional`` on VQA, the §7.5 baselines too: random
patches and foreground-first patches at the same ρ, and a random mask with the GA mask's number of zeros.
"""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Any

from methods.double_filter.finetune import Arm, IPFConfig, arm_flops, detected_boxes, evaluate, finetune, keeps_for
from methods.double_filter.ga import GAConfig, random_mask, run_ga
from methods.double_filter.tasks import build


def _groups(model) -> list[str]:
    return [s.group for s in model.sublayers()]


def run_task(task: str, seed: int, pre, tok, opts: Any, progress, *, amp: str = "off") -> dict[str, Any]:
    """Every arm of ``task`` for ``seed``: scores, FLOPs, latency, the GA's curves and genome.

    Fine-tuning and evaluation run on ``pre``'s device (``amp``: bf16 autocast for fine-tuning).
    """
    ipfc = IPFConfig(r_fg=opts.r_fg, tau=opts.tau, score_layers=opts.score_layers, detector=opts.detector)
    data = {s: build(task, s, n) for s, n in (("train", opts.n_train), ("val", opts.n_val), ("test", opts.n_test))}
    t0 = time.perf_counter()
    boxes = {s: detected_boxes(d, opts.detector) for s, d in data.items()}
    det_s_per_image = (time.perf_counter() - t0) / sum(len(d) * (2 if task == "nlvr" else 1) for d in data.values())
    directional = opts.directional and task == "vqa"
    n_arms = 4 + (3 if directional else 0)
    done = [0]
    results: dict[str, dict] = {}

    def run_arm(arm: Arm):
        sub = progress.sub(0.1 + 0.85 * done[0] / n_arms, 0.1 + 0.85 * (done[0] + 1) / n_arms)
        keep_tr, _ = keeps_for(arm, data["train"], pre, boxes["train"], ipfc, seed)
        keep_te, sel_s = keeps_for(arm, data["test"], pre, boxes["test"], ipfc, seed + 1)
        tm = finetune(pre, tok, data["train"], keep_tr, arm.genome, steps=opts.steps, batch_size=opts.batch_size,
                      lr=opts.lr, seed=seed, amp=amp, progress=sub)  # fmt: skip
        ev = evaluate(tm, data["test"], tok, keep_te)
        fl = arm_flops(pre, task, arm, data["test"], tok, ipfc)
        per_image = 2 if task == "nlvr" else 1
        det = det_s_per_image * per_image * len(data["test"]) if arm.patches in ("ipf", "fg_only") else 0.0
        results[arm.name] = {
            "task": task, "seed": seed, "arm": arm.name, "patches": arm.patches, "rho": arm.rho,
            "genome": list(arm.genome) if arm.genome else None, "score": ev["score"], "per_kind": ev["per_kind"],
            "flops": fl, "latency_ms": 1000 * (ev["seconds"] + sel_s + det) / len(data["test"]),
            "model_ms": 1000 * ev["seconds"] / len(data["test"]),
            "kept": pre.n_patches if keep_te is None else int(keep_te.shape[-1]), "patches_total": pre.n_patches,
        }  # fmt: skip
        done[0] += 1
        return tm

    tm_full = run_arm(Arm("none"))
    n_genes = len(pre.sublayers())
    ga_cfg = GAConfig(population=opts.population, generations=opts.generations, seed=seed, max_drop=opts.max_drop)
    full_flops = arm_flops(pre, task, Arm("full"), data["val"], tok, ipfc)["total"]

    def fitness(g: tuple[int, ...]) -> float:
        tm_full.vlp.set_genome(g)
        acc = evaluate(tm_full, data["val"], tok, top_k=8)["score"]
        return acc - opts.gamma * arm_flops(pre, task, Arm("g", genome=g), data["val"], tok, ipfc)["total"] / full_flops

    lo = 0.1 + 0.85 / n_arms
    ga = run_ga(fitness, _groups(pre), ga_cfg, progress=progress.sub(lo, lo + 0.02))
    tm_full.vlp.set_genome([1] * n_genes)
    best = ga.best
    run_arm(Arm("ipf", "ipf", opts.rho))
    run_arm(Arm("alf", genome=best))
    run_arm(Arm("both", "ipf", opts.rho, best))
    if directional:
        run_arm(Arm("random_patches", "random", opts.rho))
        run_arm(Arm("fg_only", "fg_only", opts.rho))
        zeros = n_genes - sum(best)
        run_arm(Arm("random_mask", genome=random_mask(_groups(pre), zeros, seed + 100, opts.max_drop)))
    return {
        "task": task,
        "seed": seed,
        "arms": results,
        "ga": {
            "best": list(best),
            "best_fitness": ga.best_fitness,
            "best_curve": ga.best_curve,
            "mean_curve": ga.mean_curve,
            "evaluations": ga.evaluations,
            "config": asdict(ga_cfg),
            "sublayers": [s.name for s in pre.sublayers()],
        },
    }
