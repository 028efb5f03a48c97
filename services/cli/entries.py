"""``paperworks <method> <job> --field value``: job commands generated from the params models.

Every registered job gets a command; its options are the params model's fields — name
(``n_components`` → ``--n-components``), type, default, range (``ge``/``le`` → ``[0<=x<=50]``),
choices (``Literal``), help (the field's description) — so a field is declared once, in
``methods/<pkg>/jobs.py``, and the CLI cannot drift from the API and the UI. Values follow the
field's type:

* ``bool`` → ``--x/--no-x``; numbers → ranged options; ``Literal`` → choices; optional fields
  default to the model's default (``None`` included);
* lists and tuples → repeated options (``--arm seq --arm sefe``), comma-separated values for numbers and
  choices (``--seeds 0,1,2``), or one JSON list (``--alphas '[0, 0.1]'``);
* dicts → repeated ``key=value`` (JSON values) or one JSON object; nested models → JSON.

Only the options given on the command line are sent (the model fills the rest), the params are
validated by the model before anything runs — an error is one sentence per field, naming the
option (``--n-components: d = 40 is larger than the 13 features of wine``), exit code 2 — and the
job runs in this process with a progress bar, or with ``--remote`` through the API
(:func:`services.cli.jobrun.run_job`). ``--out`` writes the report as Markdown (``--report`` where
a command's ``--out`` writes an image), ``--json`` prints the report as JSON on stdout.

Commands are grouped per package (``paperworks nonlinear-sdr fit``); a module
``services/cli/commands/<pkg>.py`` may give the group its user-facing name (``sdr``) and say, per
job, what a schema cannot: positional arguments, old option names kept working, files to upload
(:class:`Upload`), artifacts to save (:class:`Output`), a way to show the result, or a hand-written
parameter (:class:`Extra`). Groups are built lazily: ``paperworks --help`` imports no method,
``paperworks sdr --help`` imports only ``methods/nonlinear_sdr/jobs.py``.
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from typer.core import TyperGroup

from services.cli.jobrun import EXIT_BAD_INPUT, JobResult, fail, parse_kv, run_job

if typing.TYPE_CHECKING:
    from core.jobs.registry import MethodSpec

GENERIC_OPTIONS = ("remote", "out", "report", "json")


# --- what a schema cannot say --------------------------------------------------------------------
@dataclass(frozen=True)
class Upload:
    """A local file that fills a params field: the command reads and checks it, the job gets a reference.

    ``param`` is ``"IMAGE"`` (an optional positional argument, shown upper-case) or ``"--image"``
    (an option; ``multiple`` for a list field). ``store(path, params)`` validates the file and returns
    the field's value (an artifact SHA-256, a stored path); it raises ``ValueError`` with a sentence
    for a file that is not what it should be. ``api`` is ``(path, form field)`` of the API route that
    takes the same file as multipart, used by ``--remote``.
    """

    field: str
    param: str
    help: str
    store: Callable[[Path, dict[str, Any]], Any]
    aliases: tuple[str, ...] = ()
    multiple: bool = False
    api: tuple[str, str] | None = None

    @property
    def positional(self) -> bool:
        return not self.param.startswith("-")

    @property
    def dest(self) -> str:
        return "upload_" + self.field


@dataclass(frozen=True)
class Output:
    """``--out FILE`` (``option``) writes the report's artifact ``artifact`` (an image) there.

    ``write(result, path)`` replaces the default (the artifact's bytes) for anything else, e.g. a folder
    with a document and its images (``folder=True``).
    """

    option: str
    artifact: str
    help: str
    write: Callable[[JobResult, Path], None] | None = None
    folder: bool = False

    @property
    def dest(self) -> str:
        return "output_" + self.option.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Extra:
    """A hand-written parameter no field describes (``--preset`` filling several fields at once).

    ``annotation`` is ``Annotated[type, typer.Option(...)]``; ``apply(params, value)`` returns the params
    with the value applied (it is called only when the option was given).
    """

    name: str
    annotation: Any
    default: Any
    apply: Callable[[dict[str, Any], Any], dict[str, Any]]


Show = Callable[[JobResult], None]


@dataclass(frozen=True)
class Entry:
    """How one job's generated command differs from the default (everything here is optional).

    ``names``: the command's names (first shown, others hidden aliases; default the job's name);
    ``arguments``: fields taken as positional arguments, in order; ``aliases``: more option names per
    field (the names people used before, ``{"n_items": ("--items",)}``); ``hide``: fields not offered;
    ``fixed``: values the command always sends; ``before(params)``: runs before the job (a warning);
    ``title(params)``: the progress bar's title.
    """

    method: str
    names: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    hide: tuple[str, ...] = ()
    fixed: Mapping[str, Any] = field(default_factory=dict)
    uploads: tuple[Upload, ...] = ()
    outputs: tuple[Output, ...] = ()
    extras: tuple[Extra, ...] = ()
    show: Show | None = None
    before: Callable[[dict[str, Any]], None] | None = None
    title: Callable[[dict[str, Any]], str] | None = None
    help: str | None = None


# --- fields -> options -------------------------------------------------------------------------------
def _strip_none(tp: Any) -> tuple[Any, bool]:
    """``(T, True)`` for ``T | None``; ``(tp, False)`` otherwise."""
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) < len(typing.get_args(tp)) and len(args) == 1:
            return args[0], True
    return tp, False


def _unannotated(tp: Any) -> Any:
    while typing.get_origin(tp) is Annotated:
        tp = typing.get_args(tp)[0]
    return tp


def bounds(info: FieldInfo) -> dict[str, Any]:
    """``{"ge"|"gt"|"le"|"lt": value}`` of a field's numeric constraints."""
    out: dict[str, Any] = {}
    for m in info.metadata:
        for k in ("ge", "gt", "le", "lt"):
            v = getattr(m, k, None)
            if v is not None:
                out[k] = v
    return out


def kind(info: FieldInfo) -> str:
    """How a field becomes an option: ``bool``, ``int``, ``float``, ``choice``, ``str``, ``list``, ``dict`` or ``json``."""
    tp, _ = _strip_none(_unannotated(info.annotation))
    origin = typing.get_origin(tp)
    if tp is bool:
        return "bool"
    if tp in (int, float):
        return tp.__name__
    if origin is Literal:
        return "choice"
    if tp is str:
        return "str"
    if origin in (list, tuple, set, frozenset, Sequence):
        item = _item_type(tp)
        return "list" if item is not None else "json"
    if origin in (dict, Mapping) or tp is dict:
        return "dict"
    return "json"


def _item_type(tp: Any) -> Any:
    """The scalar item type of a list/tuple annotation (``str``, ``int``, ``float``, a ``Literal``), else ``None``."""
    args = [a for a in typing.get_args(tp) if a is not Ellipsis]
    if typing.get_origin(tp) is tuple and len(args) > 1 and len(set(args)) > 1:
        return None  # a fixed-shape tuple
    if not args:
        return None
    item, _ = _strip_none(_unannotated(args[0]))
    if item in (str, int, float, bool) or typing.get_origin(item) is Literal:
        return item
    return None


def choices(info: FieldInfo) -> tuple[Any, ...] | None:
    """The allowed values of a ``Literal`` field, or of a list field's ``Literal`` items."""
    tp, _ = _strip_none(_unannotated(info.annotation))
    if typing.get_origin(tp) is Literal:
        return typing.get_args(tp)
    item = _item_type(tp) if typing.get_origin(tp) in (list, tuple, set, frozenset) else None
    if item is not None and typing.get_origin(item) is Literal:
        return typing.get_args(item)
    return None


def option_name(name: str) -> str:
    return "--" + name.replace("_", "-")


def _help(info: FieldInfo) -> str:
    text = (info.description or "").strip()
    b = bounds(info)
    extra = []
    if "gt" in b:
        extra.append(f"> {b['gt']}")
    if "lt" in b:
        extra.append(f"< {b['lt']}")
    k = kind(info)
    if k == "list":
        item = _item_type(_strip_none(_unannotated(info.annotation))[0])
        many = "repeat it or separate by commas" if item is not str else "repeat it"
        extra.append(f"a list: {many}, or give one JSON list")
    elif k == "dict":
        extra.append("key=value (repeat it) or one JSON object")
    elif k == "json":
        extra.append("JSON")
    return text + (f" ({'; '.join(extra)})" if extra else "")


def _default(info: FieldInfo) -> Any:
    if info.is_required():
        return ...
    value = info.get_default(call_default_factory=True)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return value


def field_parameter(name: str, info: FieldInfo, *, positional: bool, aliases: Sequence[str] = ()) -> inspect.Parameter:
    """The typer parameter of one params field (see the module docstring for the mapping)."""
    k = kind(info)
    tp, optional = _strip_none(_unannotated(info.annotation))
    default = _default(info)
    help_ = _help(info)
    b = bounds(info)
    decls = [option_name(name), *aliases]
    if k == "bool":
        decls = [f"{option_name(name)}/--no-{name.replace('_', '-')}", *aliases]
        ann: Any = bool
        opts: dict[str, Any] = {}
    elif k in ("int", "float"):
        ann = tp
        opts = {"min": b.get("ge", b.get("gt")), "max": b.get("le", b.get("lt"))}
    elif k == "choice":
        ann = tp
        opts = {}
    elif k == "list":
        ann = list[str]
        opts = {}
        c = choices(info)
        if c:
            opts["metavar"] = "|".join(map(str, c))
        if default is not ...:
            default = [str(v) if not isinstance(v, str) else v for v in (default or [])] or None
    elif k == "dict":
        ann = list[str]
        opts = {"metavar": "KEY=VALUE"}
        default = None if default is not ... and not default else default
        if isinstance(default, dict):
            help_ += f" [default: {json.dumps(default)}]"
            default = None
    else:
        ann = str
        opts = {"metavar": "TEXT" if k == "str" else "JSON"}
        if default is not ... and default is not None and not isinstance(default, str):
            default = json.dumps(default, default=str)
    if optional or (default is None and k not in ("list", "dict")):
        ann = ann | None
    if k in ("list", "dict"):
        ann = ann | None
    if positional:
        param_info = typer.Argument(help=help_, show_default=default not in (None, ...), **opts)
    else:
        param_info = typer.Option(*decls, help=help_, show_default=default not in (None, ...), **opts)
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[ann, param_info], default=default
    )


def field_value(info: FieldInfo, raw: Any) -> Any:
    """The params value of what typer collected for a field (lists split, JSON parsed)."""
    k = kind(info)
    if raw is None:
        return None
    if k == "list":
        items = list(raw)
        if len(items) == 1 and items[0].lstrip().startswith("["):
            return _json(items[0])
        item = _item_type(_strip_none(_unannotated(info.annotation))[0])
        if item is not str:
            items = [p.strip() for s in items for p in s.split(",") if p.strip()]
        if item is str or (
            typing.get_origin(item) is Literal and all(isinstance(a, str) for a in typing.get_args(item))
        ):
            return items
        return [_scalar(s) for s in items]
    if k == "dict":
        items = list(raw)
        if len(items) == 1 and items[0].lstrip().startswith("{"):
            return _json(items[0])
        return parse_kv(items)
    if k == "json":
        text = str(raw).strip()
        return _json(text) if text[:1] in '[{"' or text in ("null", "true", "false") else raw
    return raw


def _scalar(s: str) -> Any:
    try:
        return json.loads(s)
    except json.JSONDecodeError:
        return s


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON ({exc.msg} at character {exc.pos}): {text[:80]!r}") from None


# --- building one command ---------------------------------------------------------------------------
def offered_fields(spec: MethodSpec, entry: Entry | None) -> dict[str, FieldInfo]:
    """The params fields a generated command offers as options or arguments (uploads and fixed ones aside)."""
    e = entry or Entry(spec.name)
    skip = set(e.hide) | set(e.fixed) | {u.field for u in e.uploads}
    return {n: f for n, f in spec.params_model.model_fields.items() if n not in skip}


def generic_names(entry: Entry | None) -> dict[str, str]:
    """``{"remote": "--remote", "out": "--out" | "--report", "json": "--json"}`` for a command."""
    taken = {o.option for o in (entry.outputs if entry else ())}
    return {"remote": "--remote", "out": "--report" if "--out" in taken else "--out", "json": "--json"}


def param_names(spec: MethodSpec, entry: Entry | None) -> dict[str, str]:
    """How the command calls each field in messages: ``--n-components``, or ``CLAIM`` for an argument."""
    e = entry or Entry(spec.name)
    out = {}
    for name in spec.params_model.model_fields:
        if name in e.arguments:
            out[name] = name.upper()
        else:
            out[name] = option_name(name)
    for u in e.uploads:
        out[u.field] = u.param
    return out


def build_command(spec: MethodSpec, entry: Entry | None = None, name: str | None = None):
    """The click command of ``spec`` (via typer): every offered field as an option, the entry's extras, the generic ones."""
    e = entry or Entry(spec.name)
    fields = offered_fields(spec, e)
    unknown = (set(e.arguments) | set(e.aliases) | set(e.hide) | set(e.fixed)) - set(spec.params_model.model_fields)
    unknown |= {u.field for u in e.uploads} - set(spec.params_model.model_fields)
    if unknown:
        raise ValueError(f"{spec.name}: the CLI entry names fields the params model lacks: {sorted(unknown)}")
    generic = generic_names(e)
    clash = set(fields) & set(GENERIC_OPTIONS)
    if clash:
        raise ValueError(f"{spec.name}: fields {sorted(clash)} clash with the generic options")
    params: list[inspect.Parameter] = [
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context)
    ]
    for u in e.uploads:  # positional uploads first (IMAGE, TABLE), then the positional fields in order
        if u.positional:
            params.append(_upload_parameter(u))
    for arg in e.arguments:
        params.append(field_parameter(arg, fields[arg], positional=True))
    for fname, info in fields.items():
        if fname not in e.arguments:
            params.append(field_parameter(fname, info, positional=False, aliases=e.aliases.get(fname, ())))
    for u in e.uploads:
        if not u.positional:
            params.append(_upload_parameter(u))
    for o in e.outputs:
        params.append(
            inspect.Parameter(
                o.dest,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[
                    Path | None, typer.Option(o.option, help=o.help, dir_okay=o.folder, file_okay=not o.folder)
                ],
                default=None,
            )
        )
    for x in e.extras:
        params.append(
            inspect.Parameter(x.name, inspect.Parameter.KEYWORD_ONLY, annotation=x.annotation, default=x.default)
        )
    params += [
        inspect.Parameter(
            "remote",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[
                bool, typer.Option(generic["remote"], help="Submit through the API and follow the job.")
            ],
            default=False,
        ),
        inspect.Parameter(
            "report_out",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[
                Path | None, typer.Option(generic["out"], help="Write the report as Markdown here.", dir_okay=False)
            ],
            default=None,
        ),
        inspect.Parameter(
            "as_json",
            inspect.Parameter.KEYWORD_ONLY,
            annotation=Annotated[bool, typer.Option(generic["json"], help="Print the report as JSON on stdout.")],
            default=False,
        ),
    ]

    def callback(ctx: typer.Context, **values: Any) -> None:
        raise typer.Exit(code=_run(spec, e, fields, ctx, values))

    callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    doc = e.help or (spec.description or spec.title)
    callback.__doc__ = f"{doc}\n\nThe `{spec.name}` job; options from its params model ({spec.params_model.__name__})."
    t = typer.Typer(add_completion=False)
    t.command(name or (e.names[0] if e.names else spec.job.replace("_", "-")))(callback)
    cmd = typer.main.get_command(t)
    cmd.paperworks_method = spec.name  # type: ignore[attr-defined]
    return cmd


def _upload_parameter(u: Upload) -> inspect.Parameter:
    path_t: Any = list[Path] if u.multiple else Path
    if u.positional:
        info = typer.Argument(help=u.help, exists=True, dir_okay=False, metavar=u.param, show_default=False)
    else:
        info = typer.Option(u.param, *u.aliases, help=u.help, exists=True, dir_okay=False, show_default=False)
    return inspect.Parameter(
        u.dest, inspect.Parameter.KEYWORD_ONLY, annotation=Annotated[path_t | None, info], default=None
    )


def _given(ctx: typer.Context, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def collect_params(
    spec: MethodSpec, e: Entry, fields: Mapping[str, FieldInfo], ctx: typer.Context, values: Mapping[str, Any]
) -> dict[str, Any]:
    """The params of one invocation: the fields given on the command line, fixed ones, then the extras applied."""
    params: dict[str, Any] = dict(e.fixed)
    for fname, info in fields.items():
        if _given(ctx, fname) or (fname in e.arguments and values.get(fname) is not None):
            params[fname] = field_value(info, values[fname])
    for x in e.extras:
        if _given(ctx, x.name):
            params = x.apply(params, values[x.name])
    return params


def _run(
    spec: MethodSpec, e: Entry, fields: Mapping[str, FieldInfo], ctx: typer.Context, values: dict[str, Any]
) -> int:
    from core.jobs.registry import InvalidParams

    names = param_names(spec, e)
    try:
        params = collect_params(spec, e, fields, ctx, values)
    except (typer.BadParameter, KeyError, ValueError) as exc:
        return fail(str(exc.args[0] if isinstance(exc, KeyError) and exc.args else exc))
    files: dict[str, list[Path]] = {}
    for u in e.uploads:
        got = values.get(u.dest)
        if got:
            files[u.field] = list(got) if u.multiple else [got]
    try:  # everything the model can check before a file is stored or a job created
        spec.validate(params)
    except InvalidParams as exc:
        if _without_upload_errors(exc, files):
            return _invalid(exc, names, files)
    remote_files: dict[str, tuple[str, list[Path]]] = {}
    for u in e.uploads:
        if u.field not in files:
            continue
        if values.get("remote") and u.api is not None:
            remote_files[u.field] = (u.api[1], files[u.field])
            continue
        try:
            stored = [u.store(p, params) for p in files[u.field]]
        except ValueError as exc:
            return fail(f"{u.param}: {exc}")
        params[u.field] = stored if u.multiple else stored[0]
    if not remote_files:
        try:
            spec.validate(params)
        except InvalidParams as exc:
            return _invalid(exc, names, {})
    if e.before is not None:
        e.before(params)
    outputs = {o: values.get(o.dest) for o in e.outputs}

    def show(result: JobResult) -> None:
        if e.show is not None:
            e.show(result)
        elif not any(outputs.values()) and values.get("report_out") is None and not values.get("as_json"):
            from rich.markdown import Markdown

            from services.cli.progress import console

            console.print(Markdown(result.markdown))
        for o, path in outputs.items():
            if path is None:
                continue
            if o.write is not None:
                o.write(result, path)
            else:
                path.write_bytes(result.artifact_bytes(o.artifact))
            from services.cli.progress import console

            console.print(f"{o.artifact} written to {path}")

    upload_path = next((u.api[0] for u in e.uploads if u.field in remote_files and u.api), None)
    return run_job(
        spec.name,
        params,
        remote=bool(values.get("remote")),
        out=values.get("report_out"),
        show=show,
        title=e.title(params) if e.title else spec.name,
        as_json=bool(values.get("as_json")),
        files={form: paths for form, paths in remote_files.values()} or None,
        upload_path=upload_path,
    )


def _without_upload_errors(exc: Any, files: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The errors not caused by an upload still missing its reference (the file is given, not stored yet).

    A cross-field rule (no field in ``loc``) may be about that reference (``give exactly one image``): it is
    checked again once the file is stored.
    """
    pending = set(files)
    out = []
    for err in exc.errors:
        loc = [str(x) for x in err.get("loc", ())]
        if loc and loc[0] in pending:
            continue
        if not loc and pending:  # a cross-field rule may be about the missing reference: checked again after storing
            continue
        out.append(err)
    return out


def _invalid(exc: Any, names: Mapping[str, str], files: Mapping[str, Any]) -> int:
    """Print one sentence per error, naming the options as typed (``--n-components: ...``); exit code 2."""
    from core.jobs.registry import error_sentences
    from services.cli.progress import console

    errors = _without_upload_errors(exc, files) if files else exc.errors

    console.print(f"[red]error:[/red] invalid {exc.method} parameters:")
    for sentence in error_sentences(errors, names):
        console.print(f"  {sentence}", markup=False, highlight=False)
    return EXIT_BAD_INPUT


# --- groups --------------------------------------------------------------------------------------------
class MethodCommands:
    """The command group of one package: generated job commands plus hand-written ones.

    ``services/cli/commands/<pkg>.py`` creates one (``MethodCommands("nonlinear_sdr", name="sdr")``),
    declares its :class:`Entry` objects with :meth:`entry`, adds hand-written commands with
    :meth:`command`, and registers it with :meth:`register`. A package without such a module gets a
    plain one (every job with the defaults) from the root group.
    """

    def __init__(self, package: str, *, name: str | None = None, help: str | None = None, aliases: Sequence[str] = ()):
        self.package = package
        self.name = name or package.replace("_", "-")
        self.aliases = tuple(a for a in (*aliases, package.replace("_", "-")) if a != self.name)
        self.entries: list[Entry] = []
        self.top_level: dict[str, Entry] = {}
        self.lazy: dict[str, tuple[Callable, str, tuple[str, ...], dict[str, Any]]] = {}
        group_cls = type(f"{package.title().replace('_', '')}Group", (JobGroup,), {"commands_of": self})
        self.app = typer.Typer(
            cls=group_cls,
            help=help or f"The jobs of {package} (each `paperworks {self.name} JOB --help` lists its options).",
            no_args_is_help=True,
            add_completion=False,
        )
        GROUPS[package] = self

    def entry(self, method: str, **kw: Any) -> Entry:
        """Declare how ``method``'s command differs from the default (see :class:`Entry`)."""
        e = Entry(method, **kw)
        self.entries = [x for x in self.entries if not (x.method == method and x.names == e.names)] + [e]
        return e

    def top(self, name: str, entry: Entry) -> None:
        """Also serve ``entry`` as ``paperworks NAME`` (``paperworks factcheck``)."""
        self.top_level[name] = entry
        TOP_LEVEL[name] = (self, entry)

    def command(
        self,
        name: str,
        *,
        model: str | None = None,
        fields: Sequence[str] = (),
        aliases: Mapping[str, tuple[str, ...]] | None = None,
        **kw: Any,
    ) -> Callable:
        """A hand-written command of the group (listings, previews): ``@group.command("pools")``.

        With ``model="pkg.module:Params"`` and ``fields``, the command also takes those fields of that params
        model as options (name, type, default, range and help read from the model, which is imported only
        when the command is used; ``aliases`` adds option names per field) and receives them as keyword
        arguments named like the fields.
        """
        if model is None:
            return self.app.command(name, **kw)

        def deco(fn: Callable) -> Callable:
            self.lazy[name] = (fn, model, tuple(fields), {"aliases": dict(aliases or {}), **kw})
            return fn

        return deco

    def register(self, app: typer.Typer) -> None:
        app.add_typer(self.app, name=self.name)
        for alias in self.aliases:
            app.add_typer(self.app, name=alias, hidden=True)

    # the generated part
    def methods(self) -> list[MethodSpec]:
        from core.jobs.registry import load_package

        return load_package(self.package)

    def job_commands(self) -> dict[str, tuple[MethodSpec, Entry | None]]:
        """``{command name: (spec, entry)}`` of every job of the package (the entries' names, else the job's)."""
        out: dict[str, tuple[MethodSpec, Entry | None]] = {}
        specs = {s.name: s for s in self.methods()}
        for e in self.entries:
            if e.method in specs:
                for n in e.names or (specs[e.method].job.replace("_", "-"),):
                    out[n] = (specs[e.method], e)
        named = {spec.name for spec, _ in out.values()}
        for spec in specs.values():
            if spec.name not in named:
                out[spec.job.replace("_", "-")] = (spec, None)
        return out

    def command_for(self, method: str) -> tuple[str, Any] | None:
        """``(name, click command)`` of ``method``'s primary command here: its first entry's, else the default one."""
        for n, (spec, e) in self.job_commands().items():
            if spec.name == method and (e is None or not e.names or e.names[0] == n):
                return n, build_command(spec, e, n)
        return None


GROUPS: dict[str, MethodCommands] = {}
TOP_LEVEL: dict[str, tuple[MethodCommands, Entry]] = {}


LazyCommands = dict[str, tuple[Callable, str, tuple[str, ...], dict[str, Any]]]


def _build_lazy(lazy: LazyCommands, cmd_name: str) -> Any:
    fn, model, fields, kw = lazy[cmd_name]
    kw = dict(kw)
    aliases = kw.pop("aliases", {})
    t = typer.Typer(add_completion=False)
    t.command(cmd_name, **kw)(with_model_options(fn, _import(model), fields, aliases))
    return typer.main.get_command(t)


class LazyGroup(TyperGroup):
    """A group whose hand-written commands may take options from a params model imported on first use."""

    lazy: LazyCommands = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self.lazy))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is None and cmd_name in self.lazy:
            return _build_lazy(self.lazy, cmd_name)
        return cmd


def lazy_typer(**kw: Any) -> typer.Typer:
    """A ``typer.Typer`` group that accepts :func:`lazy_command` (listings and helpers reading a params model)."""
    cls = type("LazyGroupOf", (LazyGroup,), {"lazy": {}})
    return typer.Typer(cls=cls, **kw)


def lazy_command(
    app: typer.Typer,
    name: str,
    fn: Callable,
    model: str,
    fields: Sequence[str],
    aliases: Mapping[str, tuple[str, ...]] | None = None,
) -> None:
    """Add ``fn`` to a :func:`lazy_typer` group as ``name``, with ``fields`` of ``model`` as options
    (see :meth:`MethodCommands.command`)."""
    app.info.cls.lazy[name] = (fn, model, tuple(fields), {"aliases": dict(aliases or {}), "help": fn.__doc__})


class JobGroup(TyperGroup):
    """A package's group: hand-written commands, then a command per registered job (built on demand)."""

    commands_of: MethodCommands

    def list_commands(self, ctx: Any) -> list[str]:
        hand = super().list_commands(ctx)
        jobs = self.commands_of.job_commands()
        primary = [n for n, (spec, e) in jobs.items() if e is None or not e.names or e.names[0] == n]
        return sorted(set(hand) | set(primary) | set(self.commands_of.lazy))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            return cmd
        if cmd_name in self.commands_of.lazy:
            return _build_lazy(self.commands_of.lazy, cmd_name)
        found = self.commands_of.job_commands().get(cmd_name)
        if found is None:
            return None
        spec, e = found
        cmd = build_command(spec, e, cmd_name)
        if e is not None and e.names and e.names[0] != cmd_name:
            cmd.hidden = True
        return cmd


class RootGroup(TyperGroup):
    """``paperworks``: its typer commands, a group per package with jobs (lazily), top-level job commands."""

    def _lazy(self) -> dict[str, str]:
        """``{group name: package}`` of the job packages whose group no commands module registered."""
        from core.jobs.registry import job_packages

        known = set(TyperGroup.list_commands(self, None))
        out = {}
        for pkg in job_packages():
            name = GROUPS[pkg].name if pkg in GROUPS else pkg.replace("_", "-")
            if name not in known:
                out[name] = pkg
        return out

    def list_commands(self, ctx: Any) -> list[str]:
        hand = super().list_commands(ctx)
        return sorted(set(hand) | set(self._lazy()) | set(TOP_LEVEL))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        if cmd is not None:
            return cmd
        if cmd_name in TOP_LEVEL:
            group, e = TOP_LEVEL[cmd_name]
            spec = next((s for s in group.methods() if s.name == e.method), None)
            return None if spec is None else build_command(spec, e, cmd_name)
        pkg = self._lazy().get(cmd_name) or _package_of_prefix(cmd_name)
        if pkg is None:
            return None
        group = GROUPS.get(pkg) or MethodCommands(pkg)
        cmd = typer.main.get_command(_with_callback(group))
        cmd.name = cmd_name
        return cmd


def _import(path: str) -> type[BaseModel]:
    import importlib

    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def with_model_options(
    fn: Callable, model: type[BaseModel], fields: Sequence[str], aliases: Mapping[str, tuple[str, ...]] | None = None
) -> Callable:
    """``fn`` with ``fields`` of ``model`` added as options (from the model); they arrive as keyword arguments.

    Only the fields given on the command line are passed on top of the model's defaults, and the values are
    validated by the model (one sentence per field, exit code 2), so a listing or preview takes the same
    values, with the same defaults and limits, as the job it belongs to.
    """
    from pydantic import create_model

    from core.jobs.registry import error_sentences

    own = [
        p
        for p in inspect.signature(fn, eval_str=True).parameters.values()
        if p.kind is not inspect.Parameter.VAR_KEYWORD and p.name not in fields
    ]
    infos = {f: model.model_fields[f] for f in fields}
    part = create_model(f"{model.__name__}Part", **{f: (info.annotation, info) for f, info in infos.items()})
    extra = [
        field_parameter(f, info, positional=False, aliases=(aliases or {}).get(f, ())) for f, info in infos.items()
    ]
    ctx_param = inspect.Parameter("_ctx", inspect.Parameter.KEYWORD_ONLY, annotation=typer.Context)

    def wrapper(_ctx: typer.Context, **values: Any) -> Any:
        given = {f: field_value(infos[f], values.pop(f)) for f in list(infos) if _given(_ctx, f)}
        for f in infos:
            values.pop(f, None)
        try:
            checked = part.model_validate(given)
        except Exception as exc:  # pydantic.ValidationError
            errors = exc.errors(include_url=False) if hasattr(exc, "errors") else [{"loc": (), "msg": str(exc)}]
            for sentence in error_sentences([e for e in errors if not e.get("loc") or e["loc"][0] in infos]):
                fail(sentence)
            raise typer.Exit(code=EXIT_BAD_INPUT) from None
        return fn(**values, **{f: getattr(checked, f) for f in infos})

    params = [*own, *extra, ctx_param]
    params.sort(key=lambda p: p.kind)
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__doc__ = fn.__doc__
    wrapper.__name__ = fn.__name__
    return wrapper


def _with_callback(group: MethodCommands) -> typer.Typer:
    """A typer with no registered command needs a callback to become a group."""
    if not group.app.registered_commands and group.app.registered_callback is None:

        @group.app.callback()
        def _group() -> None:
            pass

    return group.app


def _package_of_prefix(prefix: str) -> str | None:
    """The package registering methods named ``<prefix>.*`` (``diag`` → ``diagnostics``), importing every method."""
    from core.jobs.registry import list_methods

    for spec in list_methods():
        if spec.name.split(".")[0] == prefix.replace("-", "_"):
            return spec.package
    return None


def group_of(package: str) -> MethodCommands:
    """The package's group (declared by its commands module, or the default one)."""
    return GROUPS.get(package) or MethodCommands(package)


def command_line(spec: MethodSpec) -> str:
    """``paperworks sdr fit``: how people run ``spec`` from the CLI."""
    group = GROUPS.get(spec.package)
    name = group.name if group else spec.package.replace("_", "-")
    jobs = group.job_commands() if group else {spec.job.replace("_", "-"): (spec, None)}
    for n, (s, e) in jobs.items():
        if s.name == spec.name and (e is None or not e.names or e.names[0] == n):
            return f"paperworks {name} {n}"
    return f"paperworks {name} {spec.job.replace('_', '-')}"
