"""The agent policy: any gateway model, SmolLM2-135M-Instruct (or its PAE fine-tune) by default.

Observation (spec §3.2, text variant of §6): the task, the page's element table, the
page text (the stand-in for the screenshot a text-only model cannot see) and the last
512 characters of the textual history. A vision model configured in the gateway also
gets the labelled screenshot. The reply is sampled at temperature 1.0 (spec) and must
be ``Thought: ...`` / ``Action: ...``: when the local provider supports constrained
decoding the reply is constrained to that shape; otherwise the environment parses it
and returns a format-error observation.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from agents.pae import prompts
from agents.pae.env import Observation
from agents.pae.som import shown_url

log = logging.getLogger(__name__)

HISTORY_CHARS = 512  # spec: the LLaVA agent sees the last 512 characters of its history
LOCAL_PREFIX = "local/"


@dataclass
class PolicyConfig:
    model: str | None = None  # a gateway model string; None = settings.llm_model
    temperature: float = 1.0
    max_tokens: int = 64
    page_chars: int = 600
    max_elements: int = 40
    constrain: bool = True  # use the Thought/Action regex when the provider supports it
    compact_prompt: bool | None = None  # default: compact for local models
    local_backend: str = "transformers"  # the fine-tuned policy runs on transformers; keep the base on it too
    seed: int | None = None


def build_messages(
    task: str, obs: Observation, history: str, *, compact: bool, page_chars: int = 600, max_elements: int = 40
) -> list[dict[str, str]]:
    """The chat messages the policy is sampled with (and trained on: BC uses these exact messages)."""
    table = "\n".join(e.line() for e in obs.elements[:max_elements])
    feedback = f"\nFeedback: {obs.message}" if obs.message else ""
    user = prompts.AGENT_USER.format(
        task=task,
        url=shown_url(obs.url),
        page_text=obs.page_text[:page_chars],
        elements=table or "(none)",
        history=history[-HISTORY_CHARS:] or "(start)",
        feedback=feedback,
    )
    system = prompts.AGENT_SYSTEM_COMPACT if compact else prompts.AGENT_SYSTEM
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def history_entry(step: int, action_text: str, obs: Observation) -> str:
    """One line of the textual interaction history."""
    note = f" ({obs.message})" if obs.message else ""
    return f"{step}. {action_text or 'invalid reply'} -> {obs.title}{note}\n"


class LLMPolicy:
    """A policy sampled through :func:`core.llm.complete`."""

    _constraint_ok: dict[str, bool] = {}
    _lock = threading.Lock()

    def __init__(self, config: PolicyConfig | None = None) -> None:
        from core.config import get_settings

        self.config = config or PolicyConfig()
        self.model = self.config.model or get_settings().llm_model
        self.local = self.model.startswith(LOCAL_PREFIX)
        self.compact = self.config.compact_prompt if self.config.compact_prompt is not None else self.local
        self.name = self.model
        self.last_messages: list[dict[str, str]] = []
        self._calls = 0  # with a seed, call k samples with seed + k (distinct yet reproducible)

    def messages(self, task: str, obs: Observation, history: str) -> list[dict[str, str]]:
        return build_messages(
            task,
            obs,
            history,
            compact=self.compact,
            page_chars=self.config.page_chars,
            max_elements=self.config.max_elements,
        )

    def _complete(self, msgs: list[dict[str, str]], images: list[str], **kw: Any) -> str:
        from core.llm import complete
        from core.llm.gateway import supports_vision

        extra: dict[str, Any] = {}
        if self.local:
            extra["backend"] = self.config.local_backend
        if self.config.seed is not None:
            extra["seed"] = self.config.seed + self._calls
        if images and supports_vision(self.model):
            prompt: list[Any] = [msgs[-1]["content"], *images]
            return complete(
                prompt,
                system=msgs[0]["content"],
                model=self.model,
                max_tokens=self.config.max_tokens,
                temperature=self.config.temperature,
                tag="pae.policy",
                **extra,
                **kw,
            ).text
        return complete(
            messages=msgs,
            model=self.model,
            max_tokens=self.config.max_tokens,
            temperature=self.config.temperature,
            tag="pae.policy",
            **extra,
            **kw,
        ).text

    def act(self, task: str, obs: Observation, history: str) -> str:
        """Sample one reply (Thought/Action text) for the current observation."""
        from agents.pae.actions import REPLY_REGEX

        msgs = self.messages(task, obs, history)
        self.last_messages = msgs
        self._calls += 1
        images = [obs.screenshot] if obs.screenshot else []
        key = self.model
        if self.config.constrain and self._constraint_ok.get(key, True):
            try:
                text = self._complete(msgs, images, regex=REPLY_REGEX)
                with self._lock:
                    self._constraint_ok[key] = True
                return text
            except ValueError as exc:  # the provider cannot constrain: parse + format errors instead
                log.info("policy %s: constrained decoding unavailable (%s); parsing free text", key, exc)
                with self._lock:
                    self._constraint_ok[key] = False
            except Exception as exc:  # litellm wraps provider errors; treat a constraint failure the same way
                if "constrain" not in str(exc).lower() and "regex" not in str(exc).lower():
                    raise
                log.info("policy %s: constrained decoding failed (%s); parsing free text", key, exc)
                with self._lock:
                    self._constraint_ok[key] = False
        return self._complete(msgs, images)


def local_model_string(path_or_name: str | None) -> str:
    """``local/<name or directory>``: how the gateway addresses a local (possibly fine-tuned) model."""
    from core.llm import DEFAULT_LOCAL_MODEL

    return LOCAL_PREFIX + (path_or_name or DEFAULT_LOCAL_MODEL)
