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
    kind: str = "right"  # "right", "other task" (another task's answer) or "same template" (same kind of value)


def probe_cases(
    sites: list[str], tasks_per_site: int, seed: int = 0, wait_s: float = 0.1, *, same_template: bool = False
) -> list[ProbeCase]:
    """Scripted trajectories with their correct answer and a wrong one (same states).

    The wrong answer is the next task's answer on the same site (often a different kind of value: a brand for
    a price question). With ``same_template`` each task also gets the answer of another task of its own
    template (a price for a price question, of another product): only a judge that reads the states can
    reject it.
    """
    from agents.pae.env import BrowserEnv, EnvConfig
    from agents.pae.rollout import run_episode
    from agents.pae.scripted import ScriptedPolicy
    from agents.pae.sites import build_sites
    from agents.pae.sites.server import SiteServer

    built = build_sites(seed)
    oracle = OracleEvaluator()
    cases: list[ProbeCase] = []
    pool = 4 if same_template else 1  # extra tasks to find same-template partners among
    with SiteServer(seed=seed) as srv, BrowserEnv(srv.base_url, EnvConfig(wait_s=wait_s)) as env:
        for name in sites:
            n = pool * tasks_per_site + 1
            tasks = TemplateProposer().propose(built[name], n, random.Random(f"probe:{seed}:{name}"))
            played = []
            for task in tasks[:n]:
                traj = run_episode(env, ScriptedPolicy(task), task)
                if traj.answer is not None:
                    played.append((task, traj))
            for i, (task, traj) in enumerate(played[:tasks_per_site]):
                states = traj.last_states(3)
                answers = [(traj.answer, "right")]
                answers.append((played[(i + 1) % len(played)][1].answer if len(played) > 1 else "N/A", "other task"))
                if same_template:
                    twin = next(
                        (
                            t.answer
                            for other, t in played
                            if other is not task and other.template == task.template and t.answer != traj.answer
                        ),
                        None,
                    )
                    if twin is not None:
                        answers.append((twin, "same template"))
                for answer, kind in answers:
                    v = oracle.evaluate(task.reference, answer)
                    cases.append(ProbeCase(name, task.question, answer, v.reward if v else 0.0, states, kind))
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
    out["kappa_ci"] = kappa_ci(pairs)
    by_kind: dict[str, list[float]] = {}
    for c, (j, _) in zip(cases, pairs, strict=True):
        by_kind.setdefault(c.kind, []).append(j)
    out.update(
        {
            "model": model,
            "unparsable": judge.unparsable,
            "judge_positive_rate": sum(j for j, _ in pairs) / len(pairs) if pairs else float("nan"),
            "oracle_positive_rate": sum(o for _, o in pairs) / len(pairs) if pairs else float("nan"),
            # how often the judge said SUCCESS, per kind of answer (right answers should be high, wrong low)
            "success_rate_by_kind": {k: sum(v) / len(v) for k, v in by_kind.items()},
            "cases_by_kind": {k: len(v) for k, v in by_kind.items()},
            "seconds": round(time.perf_counter() - t0, 1),
            "max_tokens": max_tokens,
            "prompt_version": prompts.EVALUATOR_PROMPT_VERSION,
            "checked": judge.checked,
        }
    )
    return out


def kappa_ci(pairs: list[tuple[float, float]], n_boot: int = 1000, seed: int = 0) -> tuple[float, float]:
    """Percentile-bootstrap 95% interval of Cohen's κ over the cases (resamples where κ is undefined count as 0)."""
    import math

    if not pairs:
        return (float("nan"), float("nan"))
    rng = random.Random(seed)
    ks = []
    for _ in range(n_boot):
        k = agreement([pairs[rng.randrange(len(pairs))] for _ in pairs])["kappa"]
        ks.append(0.0 if math.isnan(k) else k)
    ks.sort()
    return (ks[int(0.025 * n_boot)], ks[int(0.975 * n_boot) - 1])


def probe(
    models: list[str],
    *,
    sites: list[str],
    tasks_per_site: int = 2,
    seed: int = 0,
    max_tokens: int = 256,
    same_template: bool = True,
):
    """One agreement row per model over the same cases."""
    cases = probe_cases(sites, tasks_per_site, seed, same_template=same_template)
    log.info("judge probe: %d cases", len(cases))
    return [judge_agreement(cases, m, max_tokens=max_tokens) for m in models]
