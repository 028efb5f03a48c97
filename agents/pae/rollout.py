"""Episodes and batches of episodes with a bounded number of parallel browsers.

``run_episode`` plays one task: reset the browser at the task's start page, then
ask the policy for a reply, step, and repeat until ANSWER or the step cap. Every step
keeps the reply, the parsed thought/action, the page state it acted on, its
screenshot and the exact prompt messages (what behaviour cloning trains on).

``run_batch`` spreads episodes over ``parallel`` worker threads, each owning one
chromium (Playwright's sync API is thread-bound).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agents.pae.actions import Action, FormatError
from agents.pae.env import BrowserEnv, EnvConfig, Observation
from agents.pae.evaluator import State
from agents.pae.policy import build_messages, history_entry
from agents.pae.sites.base import SiteTask

log = logging.getLogger(__name__)


class Policy(Protocol):
    name: str

    def act(self, task: str, obs: Observation, history: str) -> str: ...


@dataclass
class StepRecord:
    idx: int
    url: str
    page_text: str
    elements: str
    screenshot: str | None  # the state the reply acted on (with its Set-of-Marks)
    prompt: list[dict[str, str]]
    reply: str
    thought: str
    action: str
    format_error: bool
    message: str  # feedback the state carried (error of the previous action)


@dataclass
class Trajectory:
    task: SiteTask
    policy: str
    steps: list[StepRecord] = field(default_factory=list)
    answer: str | None = None
    timed_out: bool = False
    final: State | None = None  # the state after the last step
    seconds: float = 0.0

    @property
    def length(self) -> int:
        return len(self.steps)

    @property
    def format_errors(self) -> int:
        return sum(s.format_error for s in self.steps)

    def last_states(self, k: int = 3) -> list[State]:
        """The last ``k`` states (those the final steps acted on, then the final one)."""
        states = [State(s.url, s.page_text, s.elements, s.screenshot) for s in self.steps]
        if self.final is not None and not (self.steps and self.answer is not None):
            states.append(self.final)  # an ANSWER leaves the page unchanged: its state is already last
        return states[-k:]


def run_episode(env: BrowserEnv, policy: Policy, task: SiteTask, shot_prefix: Path | None = None) -> Trajectory:
    """Play ``task`` with ``policy`` until ANSWER or the step cap."""
    t0 = time.perf_counter()
    traj = Trajectory(task=task, policy=policy.name)
    obs = env.reset(task.start_path, shot_prefix)
    history = ""
    while True:
        messages = (
            policy.messages(task.question, obs, history)
            if hasattr(policy, "messages")
            else build_messages(task.question, obs, history, compact=True)
        )
        reply = policy.act(task.question, obs, history)
        out = env.step(reply)
        act = out.parsed.action
        traj.steps.append(
            StepRecord(
                idx=len(traj.steps),
                url=obs.url,
                page_text=obs.page_text,
                elements=obs.element_table,
                screenshot=obs.screenshot,
                prompt=messages,
                reply=reply,
                thought=out.parsed.thought,
                action=act.render() if isinstance(act, Action) else out.parsed.action_text,
                format_error=isinstance(act, FormatError),
                message=obs.message,
            )
        )
        history += history_entry(len(traj.steps), out.parsed.action_text, out.observation)
        obs = out.observation
        if out.done:
            traj.answer = out.answer
            traj.timed_out = out.answer is None
            break
    traj.final = State(obs.url, obs.page_text, obs.element_table, obs.screenshot)
    traj.seconds = time.perf_counter() - t0
    return traj


PolicyFactory = Callable[[SiteTask], Policy]


def run_batch(
    base_url: str,
    jobs: Sequence[tuple[Any, SiteTask]],
    policy_factory: PolicyFactory,
    *,
    parallel: int = 1,
    env_config: EnvConfig | None = None,
    shot_dir: Path | None = None,
    on_done: Callable[[Any, Trajectory], None] | None = None,
) -> dict[Any, Trajectory]:
    """Run ``(key, task)`` episodes on ``parallel`` browsers; ``on_done(key, traj)`` is called as each ends."""
    work: queue.Queue[tuple[Any, SiteTask]] = queue.Queue()
    for item in jobs:
        work.put(item)
    results: dict[Any, Trajectory] = {}
    errors: list[BaseException] = []
    lock = threading.Lock()

    def worker() -> None:
        try:
            with BrowserEnv(base_url, env_config) as env:
                while True:
                    try:
                        key, task = work.get_nowait()
                    except queue.Empty:
                        return
                    prefix = Path(shot_dir) / f"{key}" if shot_dir is not None else None
                    traj = run_episode(env, policy_factory(task), task, prefix)
                    with lock:
                        results[key] = traj
                    if on_done is not None:
                        on_done(key, traj)
        except BaseException as exc:  # surfaced to the caller below
            log.exception("rollout worker failed")
            errors.append(exc)

    n = max(1, min(parallel, len(jobs)))
    threads = [threading.Thread(target=worker, name=f"pae-env-{i}", daemon=True) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results
