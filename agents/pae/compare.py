"""Reward arms side by side: held-out success before and after PAE, pooled over seeds, with 95% intervals.

Each run tests the same held-out tasks before training and after its last iteration
(the sites' oracle; greedy or sampled as the run's ``test_temperature`` says), so a run gives
one (before, after) pair per test task.
Runs are grouped by their reward arm (``llm``, ``oracle``, ``random``); seeds pool.

* rates: Wilson 95% intervals on solved / episodes;
* the change (after − before): a paired percentile bootstrap that resamples test tasks
  within each run (seeds stay balanced), 2,000 resamples;
* arm against arm (e.g. judge − random): the difference of their changes, each arm
  resampled independently as above.

A change whose interval holds 0 is not a measured improvement, whatever its sign.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from core.stats import wilson

ALL = "all"


@dataclass(frozen=True)
class Pair:
    """One test task of one run: solved before training, and after the last iteration."""

    run_id: str
    arm: str
    seed: int
    split: str
    task: str
    before: float
    after: float


def load_pairs(run_ids: list[str]) -> list[Pair]:
    """The (before, after) test pairs of stored runs; a run tested only once (or never) is an error."""
    from agents.pae import store

    pairs: list[Pair] = []
    for run_id in run_ids:
        run = store.get_run(run_id=run_id)
        if run is None:
            raise ValueError(f"no PAE run {run_id}")
        cfg = run.get("config") or {}
        rows = store.trajectory_rows(run_id=run_id, phase="test")
        tested = sorted({r["iteration"] for r in rows})
        if len(tested) < 2:
            raise ValueError(f"run {run_id} was tested {len(tested)} time(s): no before/after to compare")
        first, last = tested[0], tested[-1]
        by_task: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
        for r in rows:
            if r["iteration"] in (first, last):
                by_task[r["task_row_id"]][r["iteration"]] = r
        for got in by_task.values():
            if first in got and last in got:
                r = got[first]
                pairs.append(
                    Pair(
                        run_id=run_id,
                        arm=str(cfg.get("reward", "?")),
                        seed=int(cfg.get("seed", 0)),
                        split=r["split"],
                        task=r["task_id"],
                        before=float(r["oracle_reward"] or 0.0),
                        after=float(got[last]["oracle_reward"] or 0.0),
                    )
                )
    return pairs


def _resampled_changes(pairs: list[Pair], rng: random.Random, n_boot: int) -> list[float]:
    """Bootstrap distribution of the mean change, resampling tasks within each run."""
    by_run: dict[str, list[float]] = defaultdict(list)
    for p in pairs:
        by_run[p.run_id].append(p.after - p.before)
    groups = list(by_run.values())
    n = sum(len(g) for g in groups)
    out = []
    for _ in range(n_boot):
        total = 0.0
        for g in groups:
            total += sum(g[rng.randrange(len(g))] for _ in g)
        out.append(total / n)
    return out


def _interval(values: list[float]) -> tuple[float, float]:
    s = sorted(values)
    return (s[int(0.025 * len(s))], s[min(len(s) - 1, int(0.975 * len(s)))])


def compare(pairs: list[Pair], *, n_boot: int = 2000, seed: int = 0) -> dict[str, Any]:
    """Per arm and split (and ``all`` splits): before/after rates with Wilson CIs and the paired change's CI;
    per pair of arms: the difference of their changes on all splits, with its CI."""
    rng = random.Random(seed)
    arms: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        arms[p.arm].append(p)
    rows = []
    boots: dict[str, list[float]] = {}
    for arm in sorted(arms):
        splits = [ALL, *sorted({p.split for p in arms[arm]})]
        for split in splits:
            sel = [p for p in arms[arm] if split in (ALL, p.split)]
            n = len(sel)
            kb, ka = sum(p.before for p in sel), sum(p.after for p in sel)
            dist = _resampled_changes(sel, rng, n_boot)
            if split == ALL:
                boots[arm] = dist
            rows.append(
                {
                    "arm": arm,
                    "split": split,
                    "runs": len({p.run_id for p in sel}),
                    "seeds": sorted({p.seed for p in sel}),
                    "n": n,
                    "before": kb / n,
                    "before_solved": kb,
                    "before_ci": wilson(kb, n, empty=(0.0, 1.0)),
                    "after": ka / n,
                    "after_solved": ka,
                    "after_ci": wilson(ka, n, empty=(0.0, 1.0)),
                    "change": (ka - kb) / n,
                    "change_ci": _interval(dist),
                    "gained": sum(1 for p in sel if p.after > p.before),
                    "lost": sum(1 for p in sel if p.after < p.before),
                }
            )
    versus = []
    names = sorted(boots)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ca = next(r["change"] for r in rows if r["arm"] == a and r["split"] == ALL)
            cb = next(r["change"] for r in rows if r["arm"] == b and r["split"] == ALL)
            diff = [x - y for x, y in zip(boots[a], boots[b])]  # independent resamples of the two arms
            versus.append({"arms": f"{a} − {b}", "difference": ca - cb, "ci": _interval(diff)})
    return {"rows": rows, "versus": versus, "n_boot": n_boot}


def markdown(result: dict[str, Any]) -> str:
    """The comparison as two Markdown tables."""

    def pct(x: float) -> str:
        return f"{100 * x:.1f}"

    def ci(c: tuple[float, float], signed: bool = False) -> str:
        f = (lambda v: f"{100 * v:+.1f}") if signed else pct
        return f"[{f(c[0])}, {f(c[1])}]"

    lines = [
        "| arm | split | seeds | n | before % [95% CI] | after % [95% CI] | change, points [95% CI] | gained / lost |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        seeds = ",".join(str(s) for s in r["seeds"])
        lines.append(
            f"| {r['arm']} | {r['split']} | {seeds} | {r['n']} | {pct(r['before'])} {ci(r['before_ci'])} "
            f"({r['before_solved']:g}) | {pct(r['after'])} {ci(r['after_ci'])} ({r['after_solved']:g}) | "
            f"{100 * r['change']:+.1f} {ci(r['change_ci'], signed=True)} | {r['gained']} / {r['lost']} |"
        )
    if result["versus"]:
        lines += ["", "| arms (all splits) | difference of changes, points [95% CI] |", "|---|---|"]
        for v in result["versus"]:
            lines.append(f"| {v['arms']} | {100 * v['difference']:+.1f} {ci(v['ci'], signed=True)} |")
    lines += [
        "",
        f"Rates: Wilson intervals; changes: paired percentile bootstrap over test tasks within each run "
        f"({result['n_boot']} resamples). An interval holding 0 is no measured change.",
    ]
    return "\n".join(lines)
