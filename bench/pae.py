"""PAE environment throughput: steps/s (browser + Set-of-Marks labelling + screenshot) and rollouts/min, 1 vs 2 browsers.

Run: ``python bench/pae.py [--episodes 12] [--llm-rollouts 4] [--llm-steps 3]`` → ``docs/bench/pae.md``.

* scripted-oracle policy (no model): the environment's own cost;
* the local SmolLM2-135M policy (transformers, 1 torch thread): what a rollout costs with the model in the loop.
Both are measured in the same run, side by side; the machine's load average is recorded with them.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# bench/ holds modules named like the stdlib's (bench/platform.py): run from the repository root instead
sys.path[:] = [str(REPO)] + [p for p in sys.path if Path(p or ".").resolve() != REPO / "bench"]

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import time  # noqa: E402


def _tasks(n: int):
    from agents.pae.sites import build_sites

    sites = build_sites(0)
    rng = random.Random(0)
    names = ["shop", "recipes", "dictionary", "news", "map"]
    out = []
    while len(out) < n:
        for name in names:
            out.extend(t for t in sites[name].template_tasks(rng, 1))
    return out[:n]


def bench_scripted(base_url: str, n: int, parallel: int, screenshots: bool, tmp: Path) -> dict:
    from agents.pae.env import EnvConfig
    from agents.pae.rollout import run_batch
    from agents.pae.scripted import ScriptedPolicy

    tasks = _tasks(n)
    t0 = time.perf_counter()
    res = run_batch(
        base_url,
        list(enumerate(tasks)),
        ScriptedPolicy,
        parallel=parallel,
        env_config=EnvConfig(),
        shot_dir=tmp if screenshots else None,
    )
    dt = time.perf_counter() - t0
    steps = sum(t.length for t in res.values())
    return {
        "policy": "scripted oracle",
        "browsers": parallel,
        "screenshots": screenshots,
        "rollouts": len(res),
        "steps": steps,
        "seconds": dt,
        "steps_per_s": steps / dt,
        "rollouts_per_min": len(res) / dt * 60,
    }


def bench_llm(base_url: str, n: int, parallel: int, max_steps: int, tmp: Path) -> dict:
    from agents.pae.env import EnvConfig
    from agents.pae.policy import LLMPolicy, PolicyConfig, local_model_string
    from agents.pae.rollout import run_batch

    tasks = _tasks(n)
    t0 = time.perf_counter()
    res = run_batch(
        base_url,
        list(enumerate(tasks)),
        lambda task: LLMPolicy(PolicyConfig(model=local_model_string(None), temperature=1.0, max_tokens=32, seed=7)),
        parallel=parallel,
        env_config=EnvConfig(max_steps=max_steps),
        shot_dir=tmp,
    )
    dt = time.perf_counter() - t0
    steps = sum(t.length for t in res.values())
    return {
        "policy": "SmolLM2-135M (local)",
        "browsers": parallel,
        "screenshots": True,
        "rollouts": len(res),
        "steps": steps,
        "seconds": dt,
        "steps_per_s": steps / dt,
        "rollouts_per_min": len(res) / dt * 60,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--episodes", type=int, default=12)
    ap.add_argument("--llm-rollouts", type=int, default=4)
    ap.add_argument("--llm-steps", type=int, default=3)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "pae.md")
    args = ap.parse_args()
    import tempfile

    import torch

    from agents.pae.sites.server import SiteServer
    from core.llm import get_local_model

    torch.set_num_threads(1)
    get_local_model()  # load once, outside the timings
    load0 = os.getloadavg()
    rows = []
    with SiteServer() as srv, tempfile.TemporaryDirectory() as tmp:
        for screenshots in (False, True):
            for par in (1, 2):
                rows.append(bench_scripted(srv.base_url, args.episodes, par, screenshots, Path(tmp)))
        if args.llm_rollouts:
            for par in (1, 2):
                rows.append(bench_llm(srv.base_url, args.llm_rollouts, par, args.llm_steps, Path(tmp)))
    load1 = os.getloadavg()
    lines = [
        "# PAE environment benchmark",
        "",
        f"`python bench/pae.py --episodes {args.episodes} --llm-rollouts {args.llm_rollouts} "
        f"--llm-steps {args.llm_steps}`, one run, {time.strftime('%Y-%m-%d %H:%M')}; "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
        f"{load0[0]:.1f} at start / {load1[0]:.1f} at end (the cores are shared with other work).",
        "",
        "Scripted-oracle episodes measure the environment alone: reset, Set-of-Marks labelling, actions, "
        "page text, PNG screenshots (1024×768) through headless chromium. Model episodes add SmolLM2-135M "
        "sampling (transformers, 1 torch thread, ≤ 32 new tokens per step, step cap "
        f"{args.llm_steps}).",
        "",
        "| policy | browsers | screenshots | rollouts | steps | seconds | env steps/s | rollouts/min |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['policy']} | {r['browsers']} | {'yes' if r['screenshots'] else 'no'} | {r['rollouts']} "
            f"| {r['steps']} | {r['seconds']:.1f} | {r['steps_per_s']:.2f} | {r['rollouts_per_min']:.1f} |"
        )

    def ratio(policy: str, shots: bool) -> float | None:
        by = {
            r["browsers"]: r["rollouts_per_min"]
            for r in rows
            if r["policy"] == policy and bool(r["screenshots"]) == shots
        }
        return by[2] / by[1] if 1 in by and 2 in by and by[1] else None

    env_r, llm_r = ratio(rows[0]["policy"], True), ratio(rows[-1]["policy"], True)
    lines += [
        "",
        "Reading (2 browsers vs 1, with screenshots): "
        + (f"environment alone ×{env_r:.2f}, " if env_r else "")
        + (f"with the model in the loop ×{llm_r:.2f}. " if llm_r else "")
        + "Chromium's renderer and the Python driver already keep "
        f"{os.cpu_count()} cores busy, so browser-only work gains from a second browser only when cores are "
        "free; with the model in the loop a second browser overlaps page work with generation, which "
        "dominates (the policy decodes one reply at a time).",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.out.read_text())


if __name__ == "__main__":
    main()
