"""The browser environment (spec §3.2, §6): Playwright driving Debian's chromium headless at 1024×768.

Each episode gets a fresh browser context. After every action the Set-of-Marks boxes
are removed, the action is executed, the page is labelled again and screenshotted
(one PNG per step). Replies without ``Thought:``/``Action:`` or with an invalid action
produce a "Format ERROR" observation and no browser action. ``ANSWER`` ends the
episode; so does the step cap (10 by default). Only allow-listed origins load
(:mod:`agents.pae.security`).

Playwright's sync API is bound to the thread that started it: create, use and close
one :class:`BrowserEnv` per thread (the rollout runner does).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from agents.pae import som
from agents.pae.actions import Action, FormatError, ParsedReply, parse_reply
from agents.pae.security import AllowList

log = logging.getLogger(__name__)

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
VIEWPORT = {"width": 1024, "height": 768}


@dataclass
class Observation:
    """What the agent sees after a step (the screenshot, or its text stand-in for a text-only policy)."""

    url: str
    title: str
    elements: list[som.Element]
    page_text: str
    screenshot: str | None = None
    message: str = ""  # feedback: format errors, refused navigation, missing element

    @property
    def element_table(self) -> str:
        return som.element_table(self.elements)


@dataclass
class StepOutcome:
    observation: Observation
    parsed: ParsedReply
    done: bool
    answer: str | None = None
    elapsed_s: float = 0.0


@dataclass
class EnvConfig:
    max_steps: int = 10  # spec: max_iter = 10
    wait_s: float = 5.0  # the Wait action (spec: 5 s)
    action_timeout_ms: int = 5000
    page_text_chars: int = 1500
    screenshot_dir: Path | None = None
    extra_hosts: frozenset[str] = field(default_factory=frozenset)


class NavigationRefused(RuntimeError):
    pass


SHOT_ATTEMPTS = 3


def capture(page, path: Path, attempts: int = SHOT_ATTEMPTS, pause_s: float = 0.5) -> str | None:
    """Screenshot ``page`` to ``path``; a failed capture is retried, then the state goes without one.

    Chromium under load sometimes answers "Unable to capture screenshot"; one lost picture must not
    end an hour-long training job. A text-only policy and judge read the page text anyway; a vision
    judge then sees that state as text.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, attempts + 1):
        try:
            page.screenshot(path=str(path))
            return str(path)
        except Exception as exc:  # playwright's Error (protocol errors, timeouts)
            first = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
            if attempt == attempts:
                log.warning("no screenshot for %s after %d attempts: %s", path.name, attempts, first)
                return None
            log.info("screenshot %s failed (%s); retrying", path.name, first)
            time.sleep(pause_s)
    return None


class BrowserEnv:
    """One chromium, one context per episode, sites at ``base_url``."""

    def __init__(self, base_url: str, config: EnvConfig | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.config = config or EnvConfig()
        self.allow = AllowList.for_sites(self.base_url, self.config.extra_hosts)
        self._pw = self._browser = self._context = self.page = None
        self.steps = 0
        self.refused: list[str] = []
        self._shot_prefix: Path | None = None

    # --- lifecycle -----------------------------------------------------------
    def start(self) -> BrowserEnv:
        from playwright.sync_api import sync_playwright

        self._pw = sync_playwright().start()
        self._browser = self._pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        return self

    def close(self) -> None:
        for obj, meth in ((self._context, "close"), (self._browser, "close"), (self._pw, "stop")):
            if obj is not None:
                try:
                    getattr(obj, meth)()
                except Exception:  # closing is best effort
                    log.debug("closing %s failed", obj, exc_info=True)
        self._context = self._browser = self._pw = self.page = None

    @property
    def browser(self):  # noqa: ANN201 - playwright Browser
        """The chromium instance (its other contexts are not bound by this environment's allow-list)."""
        return self._browser

    def __enter__(self) -> BrowserEnv:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _guard(self, route) -> None:  # noqa: ANN001 - playwright Route
        url = route.request.url
        if self.allow.allows(url):
            route.continue_()
        else:
            self.refused.append(url)
            route.abort("blockedbyclient")

    # --- episode ---------------------------------------------------------------
    def reset(self, start_path: str, screenshot_prefix: Path | None = None) -> Observation:
        """Open a fresh context at ``base_url + start_path`` and return the first observation."""
        if self._browser is None:
            self.start()
        if self._context is not None:
            self._context.close()
        self._context = self._browser.new_context(viewport=VIEWPORT, java_script_enabled=True)
        self._context.route("**/*", self._guard)
        self.page = self._context.new_page()
        self.page.set_default_timeout(self.config.action_timeout_ms)
        self.steps, self.refused = 0, []
        self._shot_prefix = screenshot_prefix
        message = ""
        try:
            self.goto(self.base_url + start_path if start_path.startswith("/") else start_path)
        except NavigationRefused as exc:
            message = str(exc)
        return self._observe(message)

    def goto(self, url: str) -> None:
        if not self.allow.allows(url):
            self.refused.append(url)
            raise NavigationRefused(self.allow.reason(url))
        self.page.goto(url, wait_until="domcontentloaded")

    def _observe(self, message: str = "") -> Observation:
        page = self.page
        if not self.allow.allows(page.url):  # e.g. chrome-error:// after a blocked navigation
            message = (message + " " if message else "") + self.allow.reason(page.url)
        elements = som.label_page(page)
        text = som.page_text(page, self.config.page_text_chars)
        shot = None
        if self._shot_prefix is not None:
            path = Path(f"{self._shot_prefix}_{self.steps:02d}.png")
            shot = capture(page, path)
        return Observation(
            url=page.url, title=page.title(), elements=elements, page_text=text, screenshot=shot, message=message
        )

    def step(self, reply: str) -> StepOutcome:
        """Execute one policy reply (Thought/Action text)."""
        t0 = time.perf_counter()
        self.steps += 1
        parsed = parse_reply(reply)
        act = parsed.action
        if isinstance(act, Action) and act.kind == "answer":
            obs = self._observe()
            return StepOutcome(obs, parsed, True, act.content, time.perf_counter() - t0)
        message = act.message if isinstance(act, FormatError) else ""
        refused_before = len(self.refused)
        if isinstance(act, Action):
            som.remove_labels(self.page)
            try:
                self._execute(act)
            except NavigationRefused as exc:
                message = str(exc)
            except Exception as exc:  # a failed click/type is feedback, not a crash
                message = f"Action failed: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        try:
            self.page.wait_for_load_state("domcontentloaded", timeout=self.config.action_timeout_ms)
        except Exception:
            pass
        if len(self.refused) > refused_before:
            message = message or self.allow.reason(self.refused[-1])
            if self.allow.allows(self.page.url):
                # the aborted navigation commits chromium's error page a moment later (later still under load):
                # wait for it so it is left below, not observed
                try:
                    self.page.wait_for_url(lambda u: not self.allow.allows(u), timeout=2000)
                except Exception:
                    pass
        if not self.allow.allows(self.page.url):  # e.g. chrome-error:// after a blocked navigation
            message = message or self.allow.reason(self.page.url)
            try:
                self.page.go_back(wait_until="domcontentloaded")
            except Exception:
                pass
        obs = self._observe(message)
        done = self.steps >= self.config.max_steps
        return StepOutcome(obs, parsed, done, None, time.perf_counter() - t0)

    def _locate(self, index: int):
        loc = self.page.locator(f'[data-som="{index}"]')
        if loc.count() == 0:
            raise LookupError(f"there is no element [{index}] on this page")
        return loc.first

    def _execute(self, act: Action) -> None:
        page = self.page
        n_refused = len(self.refused)
        if act.kind == "click":
            el = self._locate(act.element)
            el.evaluate("e => { if (e.tagName === 'A') e.setAttribute('target', '_self'); }")
            el.click(timeout=self.config.action_timeout_ms)
        elif act.kind == "type":
            el = self._locate(act.element)
            el.fill("", timeout=self.config.action_timeout_ms)
            el.fill(act.content, timeout=self.config.action_timeout_ms)
            el.press("Enter")
        elif act.kind == "scroll":
            dy = int(VIEWPORT["height"] * 2 / 3) * (1 if act.content == "down" else -1)
            if act.element in (None, -1):
                page.evaluate(f"window.scrollBy(0, {dy})")
            else:
                self._locate(act.element).evaluate(
                    f"e => e.scrollBy(0, Math.round(e.clientHeight * 2 / 3) * {1 if dy > 0 else -1})"
                )
        elif act.kind == "wait":
            time.sleep(self.config.wait_s)
        elif act.kind == "goback":
            page.go_back(wait_until="domcontentloaded")
        elif act.kind == "google":
            # WebVoyager's "jump to google.com"; offline the start page of the local sites stands in for it
            self.goto(self.base_url + "/")
        if len(self.refused) > n_refused:
            raise NavigationRefused(self.allow.reason(self.refused[-1]))
