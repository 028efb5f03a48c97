"""The method registry: every runnable job type, and every ``reproduce`` experiment.

A method registers itself once, in its package's ``jobs.py`` module::

    from core.jobs import Report, JobContext, register_method

    class Params(BaseModel):
        n: int = Field(3, ge=1, le=100, description="How many.")

    @register_method("mymethod.run", title="My method", description="...", queue="cpu")
    def run(params: Params, progress: JobContext) -> Report:
        progress(0.5, "half way")
        return Report(title="done")

    class MyOptions(ReproducerOptions):
        PRESETS = {"quick": {"n": 3}, "full": {"n": 50}}
        preset: Literal["quick", "full"] = "quick"
        n: int = Field(3, ge=1)

    @register_reproducer("mymethod", options=MyOptions)
    def reproduce(options: MyOptions, progress: JobContext) -> Report: ...

A reproducer returns a :class:`Report`; the registry writes it as ``<out_dir>/<name>.md``
with its files in ``<out_dir>/<name>/`` (:meth:`ReproducerSpec.run`).

The worker, API, CLI and UI are generic over this registry. :func:`load_all`
discovers every ``methods/<pkg>/jobs.py`` and ``agents/<pkg>/jobs.py`` by name,
so adding a method never edits an entrypoint.
"""

from __future__ import annotations

import copy
import functools
import importlib
import importlib.util
import inspect
import logging
import pkgutil
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

from core.jobs.context import JobContext, null_context
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
        super().__init__(f"invalid params for {method}: " + "; ".join(error_sentences(errors)))

    def sentences(self, names: Mapping[str, str] | None = None) -> list[str]:
        """One readable sentence per error (:func:`error_sentences`); ``names`` renames fields (``--n-components``)."""
        return error_sentences(self.errors, names)


def error_sentences(errors: list[dict[str, Any]], names: Mapping[str, str] | None = None) -> list[str]:
    """One sentence per validation error: ``"<field>: <what is wrong>"``, or the bare sentence of a cross-field rule.

    A model validator's error has no field (``loc == ()``); its message is the sentence every entry shows
    (CLI, API, UI), without pydantic's ``"Value error, "`` prefix. ``names`` maps a field to how the entry
    calls it (``{"n_components": "--n-components"}``); a leading ``params``/``body`` in ``loc`` is dropped.
    """
    out = []
    for e in errors:
        loc = [str(x) for x in e.get("loc", ())]
        while loc and loc[0] in ("params", "body"):
            loc = loc[1:]
        msg = str(e.get("msg", "")).removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if not loc:
            out.append(msg)
            continue
        field = (names or {}).get(loc[0], loc[0])
        out.append(f"{'.'.join([field, *loc[1:]])}: {msg}")
    return out


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
    internal: bool = False
    """A job the platform submits itself (``langgraph.run``): runnable by name, but left out of listings
    (``/v1/methods``, MCP tools, the CLI, the UI and the entries generated from the registry)."""
    package: str = ""
    """The package under ``methods/`` or ``agents/`` that registered it (``nonlinear_sdr``): its entries' home."""

    @property
    def job(self) -> str:
        """The part after the package prefix (``nonlinear_sdr.fit`` → ``fit``): the entries' command/route name."""
        return self.name.rsplit(".", 1)[-1]

    def validate(self, params: dict[str, Any] | None) -> BaseModel:
        try:
            return self.params_model.model_validate(params or {})
        except ValidationError as exc:
            raise InvalidParams(self.name, exc.errors(include_url=False, include_context=False)) from None

    def json_schema(self) -> dict[str, Any]:
        """The params model's JSON schema (a fresh copy of a cached one: building it costs about a millisecond)."""
        return copy.deepcopy(_json_schema(self.params_model))


@functools.lru_cache(maxsize=1024)
def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema, with the defaults pydantic leaves out: a ``default_factory``'s value (``[]``, ``{}``,
    a list of sites), so every entry (API, UI form, MCP) shows the default the job will use."""
    from pydantic_core import to_jsonable_python

    schema = model.model_json_schema()
    props = schema.get("properties", {})
    for name, info in model.model_fields.items():
        prop = props.get(info.alias or name)
        if prop is None or "default" in prop or info.default_factory is None:
            continue
        try:
            value = info.get_default(call_default_factory=True, validated_data={})
            prop["default"] = to_jsonable_python(value)
        except Exception:  # a factory that needs other fields' values, or a value without a JSON form
            continue
    return schema


class InvalidOptions(InvalidParams):
    """The options of ``paperworks reproduce NAME`` do not validate against its options model."""

    def __init__(self, reproducer: str, errors: list[dict[str, Any]], known: list[str]):
        for e in errors:
            if e.get("type") == "extra_forbidden":
                e["msg"] = f"unknown option; known: {', '.join(known) or '(none)'}"
        super().__init__(reproducer, errors)
        self.args = (str(self).replace("invalid params for", "invalid options for reproduce", 1),)

    def __str__(self) -> str:
        return self.args[0]


class ReproducerOptions(BaseModel):
    """Base of a reproducer's options model.

    Unknown keys are errors (``extra="forbid"``). A subclass with named presets sets
    ``PRESETS = {name: {field: value, ...}}`` and a ``preset`` field; the chosen preset's
    values fill every field the caller did not set.
    """

    model_config = ConfigDict(extra="forbid")
    PRESETS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    @model_validator(mode="before")
    @classmethod
    def _fill_from_preset(cls, data: Any) -> Any:
        if not cls.PRESETS or not isinstance(data, Mapping):
            return data
        field = cls.model_fields.get("preset")
        name = data.get("preset", field.default if field is not None else None)
        if name not in cls.PRESETS:
            raise ValueError(f"unknown preset {name!r}; one of {', '.join(cls.PRESETS)}")
        return {**cls.PRESETS[name], **data}

    def cli_options(self) -> str:
        """The ``-o key=value`` arguments that reproduce these options (fields differing from the defaults)."""
        import json

        base: dict[str, Any] = {}
        try:
            preset = {"preset": self.preset} if self.PRESETS and "preset" in type(self).model_fields else {}
            base = type(self).model_validate(preset).model_dump(mode="json")
        except ValidationError:  # required fields: render everything
            pass
        mine = self.model_dump(mode="json")
        if "preset" in mine and mine["preset"] != type(self).model_fields["preset"].default:
            base.pop("preset", None)
        return "".join(
            f" -o {k}={v if isinstance(v, str) else json.dumps(v, separators=(',', ':'))}"
            for k, v in mine.items()
            if k not in base or base[k] != v
        )


class NoOptions(ReproducerOptions):
    """A reproducer without options."""


ReproduceFn = Callable[[Any, JobContext], Report]


@dataclass(frozen=True)
class ReproducerSpec:
    """A ``paperworks reproduce NAME`` experiment: ``fn(options, progress) -> Report``.

    :meth:`run` validates the options, calls the function and writes the report as
    ``<out_dir>/<name>.md`` with its files in ``<out_dir>/<name>/``.
    """

    name: str
    fn: ReproduceFn
    options_model: type[BaseModel] = NoOptions
    description: str = ""

    def validate(self, options: Mapping[str, Any] | BaseModel | None = None) -> BaseModel:
        if isinstance(options, self.options_model):
            return options
        if isinstance(options, BaseModel):
            options = options.model_dump()
        try:
            return self.options_model.model_validate(dict(options or {}))
        except ValidationError as exc:
            raise InvalidOptions(
                self.name, exc.errors(include_url=False, include_context=False), sorted(self.options_model.model_fields)
            ) from None

    def json_schema(self) -> dict[str, Any]:
        return self.options_model.model_json_schema()

    def run(
        self, out_dir: Path, progress: JobContext | None = None, options: Mapping[str, Any] | BaseModel | None = None
    ) -> Path:
        """Validate ``options``, run the experiment and write ``out_dir/<name>.md`` (+ ``out_dir/<name>/``)."""
        opts = self.validate(options)
        report = self.fn(opts, progress or null_context())
        if not isinstance(report, Report):
            raise TypeError(f"reproducer {self.name!r} returned {type(report).__name__}, not a Report")
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        return report.write_markdown(out_dir / f"{self.name}.md")


_METHODS: dict[str, MethodSpec] = {}
_REPRODUCERS: dict[str, ReproducerSpec] = {}
_PREPARERS: dict[str, Callable[[], str]] = {}
_COMPONENTS: dict[str, dict[str, Any]] = {}
_LOCK = threading.Lock()
_LOADED = False
DISCOVERY_PACKAGES = ("methods", "agents")


def register_method(
    name: str,
    *,
    title: str = "",
    description: str = "",
    queue: Queue = "cpu",
    params: type[BaseModel] | None = None,
    tags: tuple[str, ...] = (),
    internal: bool = False,
) -> Callable[[RunFn], RunFn]:
    """Decorator registering ``run(params, progress) -> Report`` as job type ``name``.

    The params model is taken from ``params=`` or from the first argument's annotation.
    ``internal=True`` marks a job only the platform submits (:attr:`MethodSpec.internal`): :func:`get_method`
    finds it, :func:`list_methods` leaves it out unless asked.
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
        parts = (fn.__module__ or "").split(".")
        spec = MethodSpec(
            name=name,
            title=title or name,
            description=description or doc.split("\n\n")[0],
            params_model=model,
            run=fn,
            queue=queue,
            tags=tags,
            internal=internal,
            package=parts[1] if len(parts) > 2 and parts[0] in DISCOVERY_PACKAGES else "",
        )
        with _LOCK:
            existing = _METHODS.get(name)
            if existing is not None and existing.run.__qualname__ != fn.__qualname__:
                raise ValueError(f"method {name!r} registered twice")
            _METHODS[name] = spec
        return fn

    return deco


def register_reproducer(
    name: str, *, options: type[BaseModel] = NoOptions, description: str = ""
) -> Callable[[ReproduceFn], ReproduceFn]:
    """Decorator registering ``fn(options, progress) -> Report`` as ``paperworks reproduce NAME``.

    ``options`` is a pydantic model (usually a :class:`ReproducerOptions`) that must forbid
    unknown keys; the function receives a validated instance.
    """
    if not (isinstance(options, type) and issubclass(options, BaseModel)):
        raise TypeError(f"reproducer {name}: options must be a pydantic BaseModel")
    if options.model_config.get("extra") != "forbid":
        raise TypeError(f"reproducer {name}: the options model must forbid unknown keys (extra='forbid')")

    def deco(fn: ReproduceFn) -> ReproduceFn:
        with _LOCK:
            _REPRODUCERS[name] = ReproducerSpec(
                name=name,
                fn=fn,
                options_model=options,
                description=description or (inspect.getdoc(fn) or "").split("\n")[0],
            )
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


def register_component(kind: str, name: str, value: Any, *, same: Callable[[Any, Any], bool] | None = None) -> None:
    """Register ``value`` as ``name`` of a plug-in ``kind`` run by a job (``"continual.learner"``: the methods
    ``continual.run`` can run), in this one registry: discovered by :func:`load_all`, restored by
    :func:`registry_snapshot`.

    Registering the same name again replaces the entry when ``same(old, new)`` (a module imported twice);
    otherwise it is an error, as for methods.
    """
    with _LOCK:
        table = _COMPONENTS.setdefault(kind, {})
        old = table.get(name)
        if old is not None and not (same or (lambda a, b: a is b))(old, value):
            raise ValueError(f"{kind} {name!r} registered twice")
        table[name] = value


def get_component(kind: str, name: str) -> Any:
    """The ``kind`` registered as ``name`` (every ``jobs.py`` imported first); :class:`UnknownMethod` if none."""
    with _LOCK:
        hit = _COMPONENTS.get(kind, {}).get(name)
    if hit is None:
        load_all()
        with _LOCK:
            hit = _COMPONENTS.get(kind, {}).get(name)
    if hit is None:
        known = ", ".join(sorted(_COMPONENTS.get(kind, {})))
        raise UnknownMethod(f"unknown {kind} {name!r}; known: {known}")
    return hit


def list_components(kind: str) -> dict[str, Any]:
    """Every ``kind`` registered, by name (every ``jobs.py`` imported first)."""
    load_all()
    with _LOCK:
        return dict(sorted(_COMPONENTS.get(kind, {}).items()))


@contextmanager
def registry_snapshot() -> Iterator[None]:
    """Restore the registered methods, reproducers, preparers and components on exit (tests that register things)."""
    load_all()
    with _LOCK:
        saved = dict(_METHODS), dict(_REPRODUCERS), dict(_PREPARERS)
        components = {kind: dict(table) for kind, table in _COMPONENTS.items()}
    try:
        yield
    finally:
        with _LOCK:
            for live, copy in zip((_METHODS, _REPRODUCERS, _PREPARERS), saved, strict=True):
                live.clear()
                live.update(copy)
            _COMPONENTS.clear()
            _COMPONENTS.update(components)


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


def job_packages() -> list[str]:
    """Every package under ``methods/`` or ``agents/`` with a ``jobs.py``, found without importing any of them."""
    names: set[str] = set()
    for top in DISCOVERY_PACKAGES:
        spec = importlib.util.find_spec(top)
        for root in spec.submodule_search_locations or () if spec else ():
            names.update(p.parent.name for p in Path(root).glob("*/jobs.py"))
    return sorted(names)


def load_package(package: str) -> list[MethodSpec]:
    """Import only ``methods/<package>/jobs.py`` and ``agents/<package>/jobs.py``; their registered methods.

    Cheaper than :func:`load_all` when one method's entries are wanted (``paperworks sdr --help``).
    """
    if not _LOADED:
        for top in DISCOVERY_PACKAGES:
            modname = f"{top}.{package}.jobs"
            if importlib.util.find_spec(f"{top}.{package}") is None:
                continue
            try:
                importlib.import_module(modname)
            except ModuleNotFoundError as exc:
                if exc.name != modname:
                    raise
    with _LOCK:
        return [_METHODS[k] for k in sorted(_METHODS) if _METHODS[k].package == package and not _METHODS[k].internal]


def get_method(name: str) -> MethodSpec:
    load_all()
    try:
        return _METHODS[name]
    except KeyError:
        raise UnknownMethod(f"unknown method {name!r}; known: {', '.join(sorted(_METHODS))}") from None


def list_methods(*, include_internal: bool = False) -> list[MethodSpec]:
    """Every registered method by name, without the internal ones (:attr:`MethodSpec.internal`) unless asked.

    Listings and everything generated from them (``/v1/methods``, MCP tools, CLI commands, API routes, UI
    forms) use the default; :func:`get_method` still finds an internal method by its name.
    """
    load_all()
    return [_METHODS[k] for k in sorted(_METHODS) if include_internal or not _METHODS[k].internal]


def get_reproducer(name: str) -> ReproducerSpec:
    load_all()
    try:
        return _REPRODUCERS[name]
    except KeyError:
        raise UnknownMethod(f"no reproducer {name!r}; known: {', '.join(sorted(_REPRODUCERS))}") from None


def list_reproducers() -> list[ReproducerSpec]:
    load_all()
    return [_REPRODUCERS[k] for k in sorted(_REPRODUCERS)]
