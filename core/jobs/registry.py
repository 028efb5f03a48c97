"""The method registry: every runnable job type, and every ``reproduce`` experiment.

A method registers itself once, in its package's ``jobs.py`` module::

    from core.jobs import Report, JobContext, register_method

    class Params(BaseModel):
        n: int = Field(3, ge=1, le=100, description="How many.")

    @register_method("mymethod.run", title="My method", description="...", queue="cpu")
    def run(params: Params, progress: JobContext) -> Report:
        progress(0.5, "half way")
        return Report(title="done")

    @register_reproducer("mymethod")
    def reproduce(out_dir: Path, progress: JobContext, **options) -> Path: ...

The worker, API, CLI and UI are generic over this registry. :func:`load_all`
discovers every ``methods/<pkg>/jobs.py`` and ``agents/<pkg>/jobs.py`` by name,
so adding a method never edits an entrypoint.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from core.jobs.context import JobContext
from core.jobs.report import Report

log = logging.getLogger(__name__)

Queue = Literal["cpu", "gpu"]
RunFn = Callable[[Any, JobContext], Report]


class UnknownMethod(KeyError):
    """No method is registered under that name."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else "unknown method"


class InvalidParams(ValueError):
    """The parameters do not validate against the method's model."""

    def __init__(self, method: str, errors: list[dict[str, Any]]):
        self.method = method
        self.errors = errors
        parts = []
        for e in errors:
            loc = ".".join(str(x) for x in e.get("loc", ())) or "(params)"
            parts.append(f"{loc}: {e.get('msg')}")
        super().__init__(f"invalid params for {method}: " + "; ".join(parts))


@dataclass(frozen=True)
class MethodSpec:
    """One registered job type."""

    name: str
    title: str
    description: str
    params_model: type[BaseModel]
    run: RunFn
    queue: Queue = "cpu"
    tags: tuple[str, ...] = ()

    def validate(self, params: dict[str, Any] | None) -> BaseModel:
        try:
            return self.params_model.model_validate(params or {})
        except ValidationError as exc:
            raise InvalidParams(self.name, exc.errors(include_url=False, include_context=False)) from None

    def json_schema(self) -> dict[str, Any]:
        return self.params_model.model_json_schema()


@dataclass(frozen=True)
class ReproducerSpec:
    """A ``paperworks reproduce NAME`` experiment that writes ``docs/results/NAME.md``."""

    name: str
    run: Callable[..., Path]
    description: str = ""
    options: dict[str, Any] = field(default_factory=dict)


_METHODS: dict[str, MethodSpec] = {}
_REPRODUCERS: dict[str, ReproducerSpec] = {}
_PREPARERS: dict[str, Callable[[], str]] = {}
_LOCK = threading.Lock()
_LOADED = False
DISCOVERY_PACKAGES = ("methods", "agents")


def register_method(name: str, *, title: str = "", description: str = "", queue: Queue = "cpu",
                    params: type[BaseModel] | None = None, tags: tuple[str, ...] = ()) -> Callable[[RunFn], RunFn]:
    """Decorator registering ``run(params, progress) -> Report`` as job type ``name``.

    The params model is taken from ``params=`` or from the first argument's annotation.
    """

    def deco(fn: RunFn) -> RunFn:
        model = params
        if model is None:
            hints = inspect.get_annotations(fn, eval_str=True)
            first = next(iter(inspect.signature(fn).parameters))
            model = hints.get(first)
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise TypeError(f"{name}: the params model must be a pydantic BaseModel")
        doc = inspect.getdoc(fn) or ""
        spec = MethodSpec(name=name, title=title or name, description=description or doc.split("\n\n")[0],
                          params_model=model, run=fn, queue=queue, tags=tags)
        with _LOCK:
            existing = _METHODS.get(name)
            if existing is not None and existing.run.__qualname__ != fn.__qualname__:
                raise ValueError(f"method {name!r} registered twice")
            _METHODS[name] = spec
        return fn

    return deco


def register_reproducer(name: str, *, description: str = "") -> Callable[[Callable[..., Path]], Callable[..., Path]]:
    """Decorator registering ``fn(out_dir: Path, progress: JobContext, **options) -> Path``."""

    def deco(fn: Callable[..., Path]) -> Callable[..., Path]:
        with _LOCK:
            _REPRODUCERS[name] = ReproducerSpec(name=name, run=fn,
                                                description=description or (inspect.getdoc(fn) or "").split("\n")[0])
        return fn

    return deco


def register_preparer(name: str) -> Callable[[Callable[[], str]], Callable[[], str]]:
    """Decorator registering an offline set-up step run by ``paperworks prepare``.

    The function must be idempotent, use no network, and return a one-line status.
    """

    def deco(fn: Callable[[], str]) -> Callable[[], str]:
        with _LOCK:
            _PREPARERS[name] = fn
        return fn

    return deco


def list_preparers() -> dict[str, Callable[[], str]]:
    load_all()
    return dict(sorted(_PREPARERS.items()))


def load_all() -> None:
    """Import every ``<pkg>.jobs`` module under ``methods/`` and ``agents/`` (once)."""
    global _LOADED
    if _LOADED:
        return
    with _LOCK:
        if _LOADED:
            return
        _LOADED = True
    for top in DISCOVERY_PACKAGES:
        try:
            pkg = importlib.import_module(top)
        except ImportError:  # pragma: no cover - packages always present in the repo
            continue
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
            if not info.ispkg:
                continue
            modname = f"{top}.{info.name}.jobs"
            try:
                importlib.import_module(modname)
            except ModuleNotFoundError as exc:
                if exc.name != modname:
                    log.warning("could not load %s: %s", modname, exc)
            except Exception:  # a broken method must not take the platform down
                log.exception("could not load %s", modname)


def get_method(name: str) -> MethodSpec:
    load_all()
    try:
        return _METHODS[name]
    except KeyError:
        raise UnknownMethod(f"unknown method {name!r}; known: {', '.join(sorted(_METHODS))}") from None


def list_methods() -> list[MethodSpec]:
    load_all()
    return [_METHODS[k] for k in sorted(_METHODS)]


def get_reproducer(name: str) -> ReproducerSpec:
    load_all()
    try:
        return _REPRODUCERS[name]
    except KeyError:
        raise UnknownMethod(f"no reproducer {name!r}; known: {', '.join(sorted(_REPRODUCERS))}") from None


def list_reproducers() -> list[ReproducerSpec]:
    load_all()
    return [_REPRODUCERS[k] for k in sorted(_REPRODUCERS)]
