"""How far the LLM judge agrees with the sites' oracle, per model, before any training on its rewards.

The probe plays template tasks with the scripted oracle policy (real browser, real
pages) and asks the judge about each trajectory twice: once with the correct final
answer, once with a wrong one (another task's answer on the same site). The states
are identical, so only reading the states against the answer separates the two; the
oracle's string match labels both. Agreement, Cohen's κ, precision and recall come
from :func:`agents.pae.evaluator.agreement`; unparsable replies (after the judge's
retries) are counted.
"""

from __future__ import annotations

import logging
import random
import time
from dataclasses import dataclass, field
from typing import Any

from agents.pae import prompts
from agents.pae.evaluator import LLMJudge, OracleEvaluator, agreement
from agents.pae.proposer import TemplateProposer

log = logging.getLogger(__name__)


@dataclass
class ProbeCase:
    site: str
    question: str
    answer: str
    oracle: float
    states: list[Any] = field(default_factory=list)


def probe_cases(sites: list[str], tasks_per_site: int, seed: int = 0, wait_s: float = 0.1) -> list[ProbeCase]:
    """Scripted trajectories with their correct answer and a wrong one (same states)."""
    from agents.pae.env import BrowserEnv, EnvConfig
    from agents.pae.rollout import run_episode
    from agents.pae.scripted import ScriptedPolicy
    from agents.pae.sites import build_sites
    from agents.pae.sites.server import SiteServer

    built = build_sites(seed)
    oracle = OracleEvaluator()
    cases: list[ProbeCase] = []
    with SiteServer(seed=seed) as srv, BrowserEnv(srv.base_url, EnvConfig(wait_s=wait_s)) as env:
        for name in sites:
            tasks = TemplateProposer().propose(built[name], tasks_per_site + 1, random.Random(f"probe:{seed}:{name}"))
            played = []
            for task in tasks[: tasks_per_site + 1]:
                traj = run_episode(env, ScriptedPolicy(task), task)
                if traj.answer is not None:
                    played.append((task, traj))
            for i, (task, traj) in enumerate(played[:tasks_per_site]):
                states = traj.last_states(3)
                wrong = played[(i + 1) % len(played)][1].answer if len(played) > 1 else "N/A"
                for answer in (traj.answer, wrong):
                    v = oracle.evaluate(task.reference, answer)
                    cases.append(ProbeCase(name, task.question, answer, v.reward if v else 0.0, states))
    return cases


def judge_agreement(cases: list[ProbeCase], model: str, *, max_tokens: int = 256, retries: int = 2) -> dict[str, Any]:
    """The judge's verdicts on ``cases`` against the oracle's."""
    judge = LLMJudge(model, max_tokens=max_tokens, retries=retries)
    t0 = time.perf_counter()
    pairs = []
    for c in cases:
        v = judge.evaluate(c.question, c.answer, c.states)
        pairs.append((v.reward, c.oracle))
    out = agreement(pairs)
    out.update(
        {
            "model": model,
            "unparsable": judge.unparsable,
            "judge_positive_rate": sum(j for j, _ in pairs) / len(pairs) if pairs else float("nan"),
            "oracle_positive_rate": sum(o for _, o in pairs) / len(pairs) if pairs else float("nan"),
            "seconds": round(time.perf_counter() - t0, 1),
            "max_tokens": max_tokens,
            "prompt_version": prompts.EVALUATOR_PROMPT_VERSION,
            "checked": judge.checked,
        }
    )
    return out


def probe(models: list[str], *, sites: list[str], tasks_per_site: int = 2, seed: int = 0, max_tokens: int = 256):
    """One agreement row per model over the same cases."""
    cases = probe_cases(sites, tasks_per_site, seed)
    log.info("judge probe: %d cases", len(cases))
    return [judge_agreement(cases, m, max_tokens=max_tokens) for m in models]
