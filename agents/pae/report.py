"""The Reports of ``paperworks reproduce pae`` (the runs are in :mod:`agents.pae.experiment`).

:func:`build_run_report`: one reproduction run's three reward arms (LLM judge, oracle, count-matched random)
from one SFT start: success per site before and after, per-iteration rows, the judge's agreement with the
oracle, the proposer probe, a figure and a Reading. :func:`stored_runs_report`: ``docs/results/pae.md`` from
the stored 1.5B-judge runs' per-task pairs, opening with the ``core.evidence`` headlines.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from agents.pae import store
from agents.pae.config import RunConfig
from agents.pae.loop import RunResult, curves
from core.evidence import Evidence
from core.jobs import Report
from core.provenance import provenance_line

log = logging.getLogger(__name__)

PAPER_NOTE = (
    "PAE (Zhou et al., ICML 2025) trains LLaVA-1.6 7B/34B on 1024-trajectory iterations with 256 browsers on 8×A100, "
    "starting from SFT on Claude 3 Sonnet trajectories, and reports roughly +50% relative success on unseen "
    "WebVoyager tasks, e.g. LLaVA-7B 14.9% → 22.3% and LLaVA-34B 22.2% → 33.0% (numbers recalled from the paper's "
    "tables, not re-read offline — verify). Nothing here is comparable in scale: a 135M text-only model, a few "
    "dozen trajectories per iteration, five toy sites. What carries over is the algorithm, run exactly: random "
    "proposed task per rollout, binary evaluator reward with no ANSWER ⇒ 0, per-task shortest-20% filter, NLL of "
    "the kept actions, 10-step cap, success per site and averaged."
)


ARMS = {"llm": "LLM judge (the method)", "oracle": "oracle (sanity arm)", "random": "random (count-matched)"}


def _tests(res: RunResult) -> tuple[dict, dict]:
    tests = [h for h in res.history if h["kind"] == "test" and "success" in h]
    return (tests[0] if tests else {}), (tests[-1] if tests else {})


def build_run_report(
    base: RunConfig,
    results: dict[str, RunResult],
    *,
    size: str,
    minutes: float,
    judge_rows: list[dict[str, Any]],
    proposer_rows: list[list[Any]],
    device: Any = "cpu",
    amp: str = "off",
) -> Report:
    """The Report of one reproduction run (three reward arms from one SFT start): tables, figure, Reading."""
    from core.device import device_provenance

    dev = device
    before, _ = _tests(results["oracle"])
    report = Report(title="PAE on the local sites (SmolLM2-135M policy)")
    rows = []
    for reward, res in results.items():
        _, after = _tests(res)
        for key in sorted({*before.get("per_site", {}), *after.get("per_site", {})}):
            rows.append(
                [
                    ARMS[reward],
                    key,
                    before.get("per_site", {}).get(key, float("nan")),
                    after.get("per_site", {}).get(key, float("nan")),
                ]
            )
        for split in ("test", "heldout_site", "webarena"):
            if split in after.get("success", {}):
                rows.append(
                    [
                        ARMS[reward],
                        f"{split} (average)",
                        before["success"].get(split, float("nan")),
                        after["success"][split],
                    ]
                )
    report.add_table(
        "Test success (oracle) before and after PAE, per site", ["reward", "split/site", "before", "after"], rows
    )
    report.add_table(
        "Rollout success and upper bound per iteration",
        [
            "reward",
            "iteration",
            "rollout success (oracle)",
            "training reward",
            "upper bound (seen tasks)",
            "upper bound (pool)",
            "kept",
            "BC examples",
        ],
        _iteration_rows(results),
    )
    report.add_table(
        "LLM judge vs oracle before training (scripted trajectories, each with its right and a wrong answer)",
        [
            "judge model",
            "prompt",
            "cases",
            "agreement",
            "Cohen's kappa [95% CI]",
            "precision",
            "recall",
            "SUCCESS on right / other task's / same-template answers",
            "unparsable",
            "seconds",
        ],
        [
            [
                r["model"],
                f"v{r.get('prompt_version', '?')}"
                + (", check lines constrained" if r.get("checked") else ", free text"),
                r["n"],
                r["agreement"],
                f"{r['kappa']:.2f} [{r['kappa_ci'][0]:.2f}, {r['kappa_ci'][1]:.2f}]" if "kappa_ci" in r else r["kappa"],
                r["precision"],
                r["recall"],
                " / ".join(
                    f"{r.get('success_rate_by_kind', {}).get(k, float('nan')):.2f}"
                    for k in ("right", "other task", "same template")
                ),
                r["unparsable"],
                r["seconds"],
            ]
            for r in judge_rows
        ],
        note="Every answer of a task comes with the same last 3 states (URL, page text, element table): its right "
        "answer, another task's answer (often another kind of value) and another same-template task's answer "
        "(the same kind of value, wrong): only reading the states rejects the last. kappa 0 = chance.",
    )
    report.add_table(
        "LLM judge vs oracle",
        ["which", "trajectories", "agreement", "Cohen's kappa", "precision", "recall"],
        [
            [label, a["n"], a["agreement"], a["kappa"], a["precision"], a["recall"]]
            for label, a in _agreement(results).items()
        ],
    )
    if proposer_rows:
        report.add_table(
            "LLM proposer (one request of 5 tasks per site, free text and under the task JSON schema)",
            [
                "site",
                "decoding",
                "asked",
                "valid new tasks",
                "format errors",
                "seconds",
                "first valid task (or raw reply)",
            ],
            proposer_rows,
        )
    report.add_figure("curves.png", _plot(results), caption="per-iteration success and upper bound")
    report.data.update(
        {
            "size": size,
            "config": base.model_dump(mode="json"),
            "minutes": minutes,
            "runs": {k: r.run_id for k, r in results.items()},
            "history": {k: r.history for k, r in results.items()},
        }
    )
    report.metrics.update({"minutes": round(minutes, 1), "provenance": provenance_line(dev, amp)})
    report.metrics.update(device_provenance(dev, amp))
    report.summary = (
        f"preset {size}, seed {base.seed}, {minutes:.1f} min on this machine; command: paperworks reproduce pae"
    )
    report.add_section("Setup", _setup_text(base, size))
    from agents.pae.analysis import behaviour, capability_text

    run_ids = [r.run_id for r in results.values()]
    stats, demo = behaviour(run_ids), behaviour(run_ids[:1], phases=("demo",))
    report.data["behaviour"] = {"policy": stats, "demonstrator": demo}
    report.add_section("What the 135M model can and cannot do", capability_text(stats, demo))
    report.add_section("Reading the numbers", _discussion(results, before))
    report.add_section("The paper, for scale", PAPER_NOTE)
    report.add_file("history.json", json.dumps(report.data, indent=1, default=str), kind="json")
    ev = run_evidence(results)
    report.sections.insert(0, ev.section())
    report.add_json(
        "results.json",
        ev.to_json(size=size, config=base.model_dump(mode="json")),
        caption="every arm's per-task (before, after) test outcomes and the headline specifications",
    )
    return report


def run_evidence(results: dict[str, RunResult]) -> Evidence:
    """Each arm's change in held-out success (paired bootstrap over the test tasks, from the stored episodes) and
    judge − oracle / judge − random (each arm's changes resampled on its own)."""
    from agents.pae.compare import load_pairs

    raw: dict[str, Any] = {}
    for reward, res in results.items():
        ps = load_pairs([res.run_id])
        raw[reward] = {
            "before": [p.before for p in ps],
            "after": [p.after for p in ps],
            "change": [p.after - p.before for p in ps],
        }
    ev = Evidence(raw)
    rate = {"scale": 100.0, "unit": "points", "digits": 1}
    for reward, v in raw.items():
        if len(v["before"]) < 2:
            continue
        ev.headline(
            f"{ARMS[reward]}: held-out success rises after PAE",
            stat="paired_diff",
            a=f"{reward}/after",
            b=f"{reward}/before",
            interval="bootstrap",
            paper=PAPER_GAIN if reward == "llm" else "— (control arm)",
            context=f"before {100 * sum(v['before']) / len(v['before']):.1f} % ({len(v['before'])} tasks)",
            direction="less" if reward == "random" else "greater",
            **rate,
        )
    for other in ("oracle", "random"):
        if "llm" in raw and other in raw and len(raw[other]["change"]) > 1:
            ev.headline(
                f"judge − {other} reward: change in held-out success",
                stat="diff",
                a="llm/change",
                b=f"{other}/change",
                paper="judge close to ground truth"
                if other == "oracle"
                else "judge above a count-matched random reward",
                context="each arm's per-task changes resampled on its own",
                **rate,
            )
    return ev


def _discussion(results: dict[str, RunResult], before: dict[str, Any]) -> str:
    """Direction checks of spec §7, stated from the measured numbers."""

    def avg(d: dict[str, Any]) -> float:
        vals = [v for k, v in (d.get("success") or {}).items() if k in ("test", "heldout_site")]
        return sum(vals) / len(vals) if vals else float("nan")

    parts = []
    b = avg(before)
    for reward, res in results.items():
        _, after = _tests(res)
        ub = [h.get("upper_bound_pool", h["upper_bound"]) for h in res.history if h["kind"] == "filter"]
        mono = all(x <= y + 1e-9 for x, y in zip(ub, ub[1:]))
        kept = sum(h.get("kept", 0) for h in res.history if h["kind"] == "filter")
        parts.append(
            f"- **{ARMS[reward]}**: held-out average (unseen tasks + unseen site) {b:.2f} → {avg(after):.2f}; "
            f"upper bound (training tasks solved so far / pool) per iteration "
            f"{', '.join(f'{x:.2f}' for x in ub) or 'n/a'} "
            f"({'non-decreasing' if mono else 'DECREASED'}); {kept} kept trajectories over the run."
        )
    parts.append(
        "Expected (spec §7): the upper bound never decreases; with the oracle as reward success should "
        "rise; with random rewards it should not. Differences of one or two episodes are within noise "
        "at this scale (a few dozen test episodes)."
    )
    return "\n".join(parts)


def _iteration_rows(results: dict[str, RunResult]) -> list[list[Any]]:
    rows = []
    for reward, res in results.items():
        by_it: dict[int, dict[str, Any]] = {}
        for h in res.history:
            by_it.setdefault(h.get("iteration", 0), {})[h["kind"]] = h
        for it, d in sorted(by_it.items()):
            if "rollout" not in d:
                continue
            rows.append(
                [
                    ARMS[reward],
                    it,
                    d["rollout"]["oracle_success"],
                    d["rollout"]["reward"],
                    d.get("filter", {}).get("upper_bound"),
                    d.get("filter", {}).get("upper_bound_pool"),
                    d.get("filter", {}).get("kept"),
                    d.get("train", {}).get("examples"),
                ]
            )
    return rows


def _agreement(results: dict[str, RunResult]) -> dict[str, dict[str, float]]:
    """Judge vs oracle on every judged trajectory, and on those that answered (the judge was actually asked)."""
    from agents.pae.evaluator import agreement

    pairs, answered = [], []
    for res in results.values():
        for r in store.trajectory_rows(run_id=res.run_id):
            if r["judge_reward"] is not None and r["oracle_reward"] is not None:
                pairs.append((r["judge_reward"], r["oracle_reward"]))
                if r["answer"] is not None:
                    answered.append(pairs[-1])
    return {"all judged": agreement(pairs), "answered only": agreement(answered)}


def _plot(results: dict[str, RunResult]):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(4.2 * len(results), 3.4), sharey=True)
    for ax, (reward, res) in zip(axes, results.items()):
        for name, pts in curves(res.history).items():
            if pts and name != "rollout reward":
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o", label=name, linestyle="--" if name == "upper bound" else "-")
        ax.set_title(f"reward: {reward}")
        ax.set_xlabel("iteration")
        ax.set_ylim(-0.03, 1.03)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("success rate")
    axes[0].legend(fontsize=7)
    return fig


def _decoding(temperature: float) -> str:
    """How the test decodes, in words (greedy at 0, else sampled with per-episode seeds)."""
    if temperature == 0:
        return "are greedy"
    return f"sample at T = {temperature} (one seeded sample per task, as the paper's agent)"


def _setup_text(cfg: RunConfig, size: str) -> str:
    return (
        f"Preset `{size}`: training sites {', '.join(cfg.train_sites)} ({cfg.tasks_per_site} template tasks "
        f"each), held-out site {', '.join(cfg.heldout_sites)}; test = {cfg.test_tasks_per_site} unseen tasks "
        f"per training site + {cfg.test_tasks_per_site} per held-out site + {cfg.webarena_tasks} WebArena map "
        f"tasks (evenly spaced of 89) on MiniMap. SFT start: {cfg.sft_demos_per_site} scripted-oracle "
        f"demonstrations per training site, {cfg.sft_epochs} epochs. PAE: {cfg.iterations} iterations × "
        f"{cfg.rollouts_per_iteration} rollouts (random task per rollout, T = {cfg.temperature}), step cap "
        f"{cfg.max_steps}, filter top-{cfg.top_p_filter:.0%} shortest successes per task, LoRA r = {cfg.lora_r}, "
        f"α = {cfg.lora_alpha}, lr {cfg.lr} (PAE updates: {cfg.actor_lr or cfg.lr}), grad-accum {cfg.grad_accum}, {cfg.actor_epochs} epoch per "
        f"iteration. Tests {_decoding(cfg.test_temperature)}; success is the sites' oracle. Rewards: the LLM judge "
        f"(`{cfg.judge_model or 'the default model'}`, up to {cfg.judge_max_tokens} tokens to think, "
        f"{cfg.judge_retries} retries when no verdict parses, element tables shown) is the method; the oracle arm "
        f"is a labelled sanity check (it trains on the sites' ground truth); the random control gives exactly the "
        f"judge arm's number of positives per iteration to random answered trajectories. Unseen-task test: "
        f"{cfg.holdout_templates} whole task template(s) per training site held out from training and demos."
    )


# --- the stored 1.5B runs (-o preset=summary) -----------------------------------------------------------------
ARM_NAMES = {"llm": "LLM judge (the method)", "oracle": "oracle (sanity arm)", "random": "random, count-matched"}
POOLED = "judge T1 lr1e-4 seeds 0+1"
PAPER_GAIN = "LLaVA-7B 14.9 % → 22.3 % (+7.4) on unseen WebVoyager tasks (recalled, not re-read offline)"


def _run_label(r: dict[str, Any]) -> str:
    seeds = "seeds " + r["seeds"].replace(",", " + ") if "," in r["seeds"] else f"seed {r['seeds']}"
    return f"{ARM_NAMES[r['arm']]}, {seeds}, test {r['decoding']}, PAE lr {r['lr']}"


def _stored_raw(runs: list[dict[str, Any]]) -> dict[str, Any]:
    raw: dict[str, Any] = {"runs": {}, "pooled": {}}
    for r in runs:
        entry = {k: r[k] for k in ("arm", "seeds", "decoding", "lr", "reproducible", "superseded_by")}
        entry["source"] = r["compare"] or r["report"]
        entry["counts"] = r["counts"]
        for split, p in r["pairs"].items():
            entry[split] = {**p, "change": [a - b for a, b in zip(p["after"], p["before"], strict=True)]}
        raw["runs"][r["key"]] = entry
    pool = [raw["runs"][k]["all"] for k in ("s0-t1-lr1e-4-llm", "s1-t1-lr1e-4-llm") if k in raw["runs"]]
    if len(pool) == 2:
        raw["pooled"][POOLED] = {k: pool[0][k] + pool[1][k] for k in ("before", "after", "change")}
    return raw


def stored_evidence(runs: list[dict[str, Any]]) -> Evidence:
    """Headlines from the reproducible starts: each arm's change in held-out success (paired bootstrap over test
    tasks), the judge arm pooled over seeds 0 and 1, and judge − oracle from one start."""
    ev = Evidence(_stored_raw(runs))
    rate = {"scale": 100.0, "unit": "points", "digits": 1, "interval": "bootstrap"}

    def pct(xs: list[float]) -> float:
        return 100.0 * sum(xs) / len(xs)

    if POOLED in ev.raw["pooled"]:
        p = ev.raw["pooled"][POOLED]
        ev.headline(
            "The method: PAE with the 1.5B judge raises the 135M policy's held-out success (seeds 0 + 1 pooled, "
            "reproducible starts, test T = 1.0, PAE lr 1e-4)",
            stat="paired_diff",
            a=f"pooled/{POOLED}/after",
            b=f"pooled/{POOLED}/before",
            paper=PAPER_GAIN,
            context=f"before {pct(p['before']):.1f} %, after {pct(p['after']):.1f} % ({len(p['before'])} tasks)",
            **rate,
        )
    current = [r for r in runs if r["reproducible"]]
    for r in current:
        a = ev.raw["runs"][r["key"]]["all"]
        ev.headline(
            f"{_run_label(r)}: held-out success rises",
            stat="paired_diff",
            a=f"runs/{r['key']}/all/after",
            b=f"runs/{r['key']}/all/before",
            paper=PAPER_GAIN if r["arm"] == "llm" else "— (sanity arm: ground truth should raise it, spec §7)",
            context=f"before {pct(a['before']):.1f} %, after {pct(a['after']):.1f} % ({len(a['before'])} tasks)",
            **rate,
        )
    by = {(r["seeds"], r["decoding"], r["lr"], r["arm"]): r["key"] for r in current}
    for (seeds, dec, lr, arm), key in by.items():
        other = by.get((seeds, dec, lr, "oracle"))
        if arm != "llm" or other is None:
            continue
        ev.headline(
            f"Judge − oracle reward from one start (seed {seeds}, test {dec}, PAE lr {lr}): the judge arm gains more "
            "than the oracle arm",
            stat="diff",
            a=f"runs/{key}/all/change",
            b=f"runs/{other}/all/change",
            paper="the VLM evaluator close to the oracle (no advantage claimed)",
            context="difference of the two arms' changes, each resampled on its own",
            scale=100.0,
            unit="points",
            digits=1,
        )
    return ev


def _stored_table(runs: list[dict[str, Any]]) -> str:
    from core.stats import paired_bootstrap_ci, wilson

    head = (
        "| start | test decoding | PAE lr | arm | held-out before → after [95 % Wilson] | change, points [95 % paired "
        "bootstrap] | gained / lost | status |\n|---|---|---|---|---|---|---|---|"
    )
    rows = []
    for r in runs:
        c, p = r["counts"]["all"], r["pairs"]["all"]
        lo_b, hi_b = wilson(c["before"], c["n"])
        lo_a, hi_a = wilson(c["after"], c["n"])
        ci = paired_bootstrap_ci(p["after"], p["before"], n_boot=2000, seed=0)
        seeds = "seeds 0 + 1 (two runs pooled)" if "," in r["seeds"] else f"seed {r['seeds']}"
        start = f"{seeds}, {'reproducible' if r['reproducible'] else 'irreproducible'}"
        status = "current" if r["reproducible"] else f"**superseded** by {r['superseded_by']}"
        rows.append(
            f"| {start} | {r['decoding']} | {r['lr']} | {ARM_NAMES[r['arm']]} | "
            f"{100 * c['before'] / c['n']:.1f} % [{100 * lo_b:.1f}, {100 * hi_b:.1f}] → {100 * c['after'] / c['n']:.1f} % "
            f"[{100 * lo_a:.1f}, {100 * hi_a:.1f}] ({c['n']}) | {100 * ci.estimate:+.1f} [{100 * ci.low:+.1f}, "
            f"{100 * ci.high:+.1f}] | {c['gained']} / {c['lost']} | {status} |"
        )
    return head + "\n" + "\n".join(rows)


def stored_runs_report(runs: list[dict[str, Any]], *, command: str) -> Report:
    """``docs/results/pae.md`` from the stored 1.5B runs: headlines, every run's before/after, a Reading, links."""
    ev = stored_evidence(runs)
    n = ev.counts()
    current = [r for r in runs if r["reproducible"]]
    old = [r for r in runs if not r["reproducible"]]
    report = Report(
        title="PAE on the local sites (SmolLM2-135M policy, Qwen2.5-Coder-1.5B judge and proposer)",
        summary=(
            f"{len(current)} runs from reproducible SFT starts (seeds 0 and 1; 3 iterations of 12 rollouts; 47–48 "
            f"held-out tasks each) and {len(old)} earlier runs from starts that could not be rebuilt (superseded). "
            f"Headline claims: {n['holds']} hold, {n['fails']} fail, {n['not resolved']} not resolved (paired "
            "percentile bootstrap over test tasks, 2,000 resamples). Built by `" + command + "` from the stored "
            "runs' reports (no model call)."
        ),
    )
    pooled = next((h for h in ev.headlines if h.claim.startswith("The method")), None)
    text = []
    if pooled is not None:
        r = pooled.result
        text.append(
            f"**The method.** Pooled over the two reproducible starts at the paper's test temperature and the lower "
            f"PAE-update learning rate, judge-rewarded PAE changes held-out success by {100 * r['estimate']:+.1f} "
            f"points [{100 * r['low']:+.1f}, {100 * r['high']:+.1f}] ({r['verdict']}; the paper: {PAPER_GAIN})."
        )

    def runs_with(v: str, prefix: str = "") -> list[str]:
        return [
            h.claim.split(": held-out")[0].split(": the judge")[0]
            for h in ev.headlines
            if h.result["verdict"] == v and not h.claim.startswith("The method") and h.claim.startswith(prefix)
        ]

    rises, falls, open_ = runs_with("holds"), runs_with("fails"), runs_with("not resolved")
    text.append(
        "**Per run (reproducible starts), held-out success after − before.** "
        + (
            "Rises (interval above 0): " + "; ".join(x for x in rises if not x.startswith("Judge")) + ". "
            if rises
            else "No run's rise holds. "
        )
        + (
            "Falls (interval below 0): " + "; ".join(x for x in falls if not x.startswith("Judge")) + ". "
            if falls
            else ""
        )
        + "Not resolved (interval across 0): "
        + ("; ".join(x for x in open_ if not x.startswith("Judge")) or "none")
        + ". Judge − oracle from one start: "
        + "; ".join(
            f"{h.claim.split(' (')[1].split(')')[0]} {100 * h.result['estimate']:+.1f} "
            f"[{100 * h.result['low']:+.1f}, {100 * h.result['high']:+.1f}] ({h.result['verdict']})"
            for h in ev.headlines
            if h.claim.startswith("Judge")
        )
        + "."
    )
    if old:
        gains = [
            f"{_run_label(r)} {100 * (r['counts']['all']['after'] - r['counts']['all']['before']) / r['counts']['all']['n']:+.1f}"
            for r in old
        ]
        text.append(
            "**Superseded.** The earlier runs (" + "; ".join(gains) + " points) started from SFT adapters that "
            "could not be rebuilt (an unseeded LoRA init, examples in database-id order, the sites' random ports in "
            "the prompts); their gains, reported in the run log's older boxes, are not repeated from any reproducible "
            "start and are withdrawn. They stay in the table and in results.json, marked superseded."
        )
    text.append(
        "**Scale.** 36 rollouts per run on a 135M text policy and five toy sites, against the paper's "
        "1024-trajectory iterations with LLaVA-7B/34B: these runs say nothing against the method at scale; they say "
        "that at this size the evaluator is not the bottleneck (the judge's agreement with the oracle is in the run "
        "log and the judge probe) and the amount of practice is."
    )
    report.add_section(
        "Every 1.5B-judge run: held-out success before and after PAE",
        _stored_table(runs)
        + "\n\nRates: Wilson intervals; changes: paired percentile bootstrap over the run's test tasks (2,000 "
        "resamples, seed 0). 'Before' is the SFT start's test, 'after' the test after iteration 3; success is the "
        "sites' oracle.",
    )
    report.add_section("Reading", "\n\n".join(text))
    report.add_section(
        "How these numbers were derived",
        "Every run tested the same held-out tasks before training and after its last iteration. The runs' "
        "database stayed on the machine that ran them; their reports in `docs/results/pae/` keep the solved counts "
        "per site, and their compare tables (`paperworks pae compare`) the tasks gained and lost per split. "
        "Gained and lost fix each split's (before, after) pairs exactly (both solved = before − lost, neither = n − "
        "before − gained); which task is which is not needed for paired statistics, so `results.json` holds every "
        "run's per-task pairs in a canonical order (both, gained, lost, neither). A run without a compare table is "
        "used only when it solved nothing before (then every success after is a gain). Sources per run: "
        + "; ".join(f"`{r['key']}` ← {r['compare'] or r['report']}" for r in runs)
        + ".",
    )
    report.add_section(
        "Run log, probes and the earlier run",
        "- [Run log](pae/runlog.md): the dated boxes written as each run finished (commands, wall times, per-iteration "
        "tables, the judge's agreement with the oracle on its rollouts); older boxes whose gains the summary "
        "withdraws are marked superseded.\n"
        "- [Judge vs oracle before training](pae/judge-probe.md) (`paperworks pae judge-probe`) and "
        "[the 1.5B proposer probe](pae/proposer-probe-1.5b.md).\n"
        "- [The earlier small-preset run](pae/small-run.md) (`paperworks reproduce pae`, before issue #26).\n"
        "- Per-run reports and compare tables: `docs/results/pae/issue-1.5b-*.md`.",
    )
    report.sections.insert(0, ev.section())
    report.add_json(
        "results.json",
        ev.to_json(command=command, runs=[{k: r[k] for k in ("key", "compare", "report")} for r in runs]),
        caption="every run's per-task (before, after) pairs and the headline specifications (core.evidence)",
    )
    return report
