"""Reusable Streamlit pieces: a job follower, a form generated from a JSON schema, a report viewer,
a markdown renderer that resolves ``artifact:`` images, a jobs table.

``schema_fields`` (the schema → field list step of the form) is a pure function: it needs no
Streamlit runtime, so it is unit-tested and contract-tested against every registered method.
"""

from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import streamlit as st

from ui.client import ApiClient, ApiError

_IMG_LINK = re.compile(r"!\[([^\]]*)\]\(artifact:([^)\s]+)\)")
LIVE = ("queued", "running")


@st.cache_resource
def get_client() -> ApiClient:
    return ApiClient()


def method_schema(client: ApiClient, method: str) -> dict[str, Any] | None:
    """The params JSON schema of ``method`` from ``GET /v1/methods``; shows the error and returns ``None``
    when the API cannot be asked or has no such method."""
    try:
        spec = next((m for m in client.methods() if m["name"] == method), None)
    except ApiError as exc:
        st.error(f"Cannot list methods ({exc.status}): {exc.message}")
        return None
    if spec is None:
        st.error(f"The API has no {method} method.")
    return spec["params_schema"] if spec else None


# --- schema -> fields (pure) -------------------------------------------------------------------

FieldKind = Literal["enum", "boolean", "integer", "number", "string", "list", "json"]
_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
_SCALAR_ITEMS = {"string", "integer", "number"}


class SchemaError(ValueError):
    """A params schema the form cannot be built from (malformed, or — with ``strict`` — a JSON fallback)."""


@dataclass(frozen=True)
class Field:
    """One form input derived from a property of a params JSON schema.

    ``kind`` picks the widget: ``enum`` (a select box over ``enum``), ``boolean``, ``integer`` and
    ``number`` (bounded by ``minimum``/``maximum``; ``exclusive_*`` are enforced by the API),
    ``string``, ``list`` (an array of ``item_kind`` scalars, one per line; a multiselect when its
    items have an ``enum``) and ``json`` — the
    documented fallback for any construct the widgets cannot represent (objects, nested models,
    tuples, unions of several types...): a JSON text area, with ``fallback`` saying why.
    """

    name: str
    label: str
    kind: FieldKind
    default: Any = None
    required: bool = False
    nullable: bool = False
    help: str | None = None
    enum: tuple[Any, ...] | None = None
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    item_kind: Literal["string", "integer", "number"] | None = None
    min_items: int | None = None
    max_items: int | None = None
    max_length: int | None = None
    fallback: str | None = None


def _deref(root: dict[str, Any], prop: dict[str, Any], where: str) -> dict[str, Any]:
    """Inline a local ``$ref`` (``#/$defs/X``) or a single-entry ``allOf`` wrapper; sibling keys win."""
    for _ in range(32):  # a chain of refs, never a cycle
        if "$ref" in prop:
            ref = prop["$ref"]
            if not isinstance(ref, str) or not ref.startswith("#/"):
                raise SchemaError(f"{where}: only local $ref ('#/...') is supported, got {ref!r}")
            target: Any = root
            for part in ref[2:].split("/"):
                if not isinstance(target, dict) or part not in target:
                    raise SchemaError(f"{where}: $ref {ref!r} does not resolve")
                target = target[part]
            if not isinstance(target, dict):
                raise SchemaError(f"{where}: $ref {ref!r} is not a schema")
            prop = {**target, **{k: v for k, v in prop.items() if k != "$ref"}}
        elif isinstance(prop.get("allOf"), list) and len(prop["allOf"]) == 1 and isinstance(prop["allOf"][0], dict):
            prop = {**prop["allOf"][0], **{k: v for k, v in prop.items() if k != "allOf"}}
        else:
            return prop
    raise SchemaError(f"{where}: $ref chain too deep (cyclic?)")


def _num(v: Any, what: str, where: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise SchemaError(f"{where}: {what} must be a number, got {v!r}")
    return v


def _field(root: dict[str, Any], name: str, raw: Any, required: bool) -> Field:
    where = f"property {name!r}"
    if not isinstance(raw, dict):
        raise SchemaError(f"{where}: its schema must be an object, got {type(raw).__name__}")
    prop = _deref(root, raw, where)
    nullable = False
    fallback: str | None = None
    typ = prop.get("type")
    if isinstance(typ, list):  # {"type": ["string", "null"]}
        bad = [t for t in typ if t not in _JSON_TYPES]
        if bad:
            raise SchemaError(f"{where}: unknown JSON type(s) {bad}")
        nullable = "null" in typ
        rest = [t for t in typ if t != "null"]
        if len(rest) == 1:
            prop = {**prop, "type": rest[0]}
        else:
            prop, fallback = {k: v for k, v in prop.items() if k != "type"}, f"a union of types {rest}"
    for combo in ("anyOf", "oneOf"):
        if combo not in prop:
            continue
        opts = prop[combo]
        if not isinstance(opts, list) or not opts or not all(isinstance(o, dict) for o in opts):
            raise SchemaError(f"{where}: {combo} must be a non-empty list of schemas")
        opts = [_deref(root, o, where) for o in opts]
        real = [o for o in opts if o.get("type") != "null"]
        nullable = nullable or len(real) < len(opts)
        siblings = {k: v for k, v in prop.items() if k != combo}
        if not real:
            raise SchemaError(f"{where}: {combo} allows only null")
        if len(real) == 1:
            prop = {**real[0], **siblings}
        else:
            prop, fallback = siblings, f"{combo} of {len(real)} alternatives"
    if "allOf" in prop and fallback is None:
        fallback = "allOf of several schemas"
    typ = prop.get("type")
    if typ is not None and typ not in _JSON_TYPES:
        raise SchemaError(f"{where}: unknown JSON type {typ!r}")
    title = prop.get("title") or raw.get("title")
    # pydantic titles every field ("lam" -> "Lam"): such a title explains nothing, the name is what the CLI and
    # the API take; an explicit title (Field(title=...)) is kept
    label = str(title) if title and title != name.replace("_", " ").title() else name
    help_ = prop.get("description") or raw.get("description")
    has_default = "default" in prop or "default" in raw
    default = prop.get("default", raw.get("default"))
    common: dict[str, Any] = {
        "name": name,
        "label": label,
        "default": default,
        "required": required,
        "nullable": nullable,
        "help": help_,
    }
    if fallback is not None:
        return Field(kind="json", fallback=fallback, **common)
    if "const" in prop:
        return Field(kind="enum", enum=(prop["const"],), **common)
    if "enum" in prop:
        enum = prop["enum"]
        if not isinstance(enum, list) or not enum:
            raise SchemaError(f"{where}: enum must be a non-empty list")
        if has_default and default not in enum and not (default is None and nullable):
            raise SchemaError(f"{where}: default {default!r} is not one of its enum {enum}")
        return Field(kind="enum", enum=tuple(enum), **common)
    if typ == "boolean":
        if has_default and not isinstance(default, bool) and not (default is None and nullable):
            raise SchemaError(f"{where}: boolean default {default!r}")
        return Field(kind="boolean", **common)
    if typ in ("integer", "number"):
        lo, hi = _num(prop.get("minimum"), "minimum", where), _num(prop.get("maximum"), "maximum", where)
        xlo = _num(prop.get("exclusiveMinimum"), "exclusiveMinimum", where)
        xhi = _num(prop.get("exclusiveMaximum"), "exclusiveMaximum", where)
        if lo is not None and hi is not None and lo > hi:
            raise SchemaError(f"{where}: minimum {lo} > maximum {hi}")
        if default is not None:
            _num(default, "default", where)
            if typ == "integer" and not float(default).is_integer():
                raise SchemaError(f"{where}: integer default {default!r}")
            if (
                (lo is not None and default < lo)
                or (hi is not None and default > hi)
                or (xlo is not None and default <= xlo)
                or (xhi is not None and default >= xhi)
            ):
                raise SchemaError(f"{where}: default {default!r} is outside its bounds")
        return Field(kind=typ, minimum=lo, maximum=hi, exclusive_minimum=xlo, exclusive_maximum=xhi, **common)
    if typ == "string":
        return Field(kind="string", max_length=prop.get("maxLength"), **common)
    if typ == "array":
        items = prop.get("items", {})
        if not isinstance(items, dict):
            raise SchemaError(f"{where}: items must be a schema")
        items = _deref(root, items, where + " items")
        ityp = items.get("type")
        sizes = {"min_items": prop.get("minItems"), "max_items": prop.get("maxItems")}
        if "enum" in items and "prefixItems" not in prop:
            choices = items["enum"]
            if not isinstance(choices, list) or not choices:
                raise SchemaError(f"{where}: items enum must be a non-empty list")
            if isinstance(default, list) and any(d not in choices for d in default):
                raise SchemaError(f"{where}: default {default!r} has values outside its items enum {choices}")
            return Field(
                kind="list", item_kind=ityp if ityp in _SCALAR_ITEMS else None, enum=tuple(choices), **sizes, **common
            )
        if "prefixItems" in prop or ityp not in _SCALAR_ITEMS or "anyOf" in items:
            what = "a tuple" if "prefixItems" in prop else f"an array of {ityp or 'untyped'} items"
            return Field(kind="json", fallback=what, **sizes, **common)
        if default is not None and not isinstance(default, list):
            raise SchemaError(f"{where}: array default {default!r}")
        return Field(kind="list", item_kind=ityp, **sizes, **common)
    what = "an object" if typ == "object" else "a value without a type" if typ is None else f"type {typ!r}"
    return Field(kind="json", fallback=what, **common)


def schema_fields(schema: dict[str, Any], *, strict: bool = False) -> list[Field]:
    """The form fields of a pydantic params JSON schema, one per property, in schema order.

    Nothing is dropped: a property no widget represents becomes a ``json`` field (a JSON text
    area, ``Field.fallback`` says why); with ``strict=True`` that raises instead. A malformed
    schema — not an object schema, a property that is not a schema, an unresolvable ``$ref``,
    an empty enum, an unknown type, a default outside its enum or bounds, a required name
    without a property — raises ``SchemaError`` naming the property.
    """
    if not isinstance(schema, dict):
        raise SchemaError(f"a params schema must be a JSON object, got {type(schema).__name__}")
    if schema.get("type", "object") != "object":
        raise SchemaError(f"a params schema must have type 'object', got {schema.get('type')!r}")
    props = schema.get("properties", {})
    if not isinstance(props, dict):
        raise SchemaError("'properties' must be an object")
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise SchemaError("'required' must be a list of property names")
    missing = [r for r in required if r not in props]
    if missing:
        raise SchemaError(f"required properties without a schema: {missing}")
    fields = [_field(schema, name, raw, name in required) for name, raw in props.items()]
    if strict:
        fb = [f"{f.name} ({f.fallback})" for f in fields if f.kind == "json"]
        if fb:
            raise SchemaError("no widget for: " + ", ".join(fb))
    return fields


# --- fields -> Streamlit -----------------------------------------------------------------------


class InputError(ValueError):
    """A value typed into a form that cannot be turned into the field's type."""


def _step(f: Field) -> float:
    ref = next((abs(v) for v in (f.default, f.maximum, f.exclusive_maximum) if isinstance(v, int | float) and v), 1.0)
    return 10.0 ** math.floor(math.log10(ref)) if ref < 1 else 0.1


def field_input(
    f: Field,
    key: str,
    *,
    where: Any = None,
    label: str | None = None,
    help: str | None = None,
    format_func: Callable[[Any], str] | None = None,
) -> Any:
    """Render one field's widget (in ``where``, default the current container); returns its value.

    ``None`` means "leave it to the API's default" (an empty optional input). A text that cannot
    be parsed (a JSON area, a number list) raises ``InputError`` naming the field.
    """
    w = where if where is not None else st
    label = label or (f.label + ("" if f.required or not f.nullable else " (optional)"))
    help_ = help if help is not None else f.help
    wkey = f"{key}-{f.name}"
    if f.kind == "enum":
        opts = list(f.enum or ())
        if f.nullable:
            opts = [None, *[o for o in opts if o is not None]]
        fmt = format_func or str
        return w.selectbox(
            label,
            opts,
            index=opts.index(f.default) if f.default in opts else 0,
            help=help_,
            key=wkey,
            format_func=lambda o: "—" if o is None else fmt(o),
        )
    if f.kind == "boolean":
        return w.checkbox(label, value=bool(f.default), help=help_, key=wkey)
    if f.kind in ("integer", "number"):
        cast = int if f.kind == "integer" else float
        lo = f.minimum if f.minimum is not None else f.exclusive_minimum
        if f.default is not None:
            value: Any = cast(f.default)
        elif f.nullable or not f.required:
            value = None  # empty: the API's default applies
        else:
            value = cast(lo if lo is not None else 0)
        extra: dict[str, Any] = {"step": 1} if f.kind == "integer" else {"step": _step(f), "format": "%g"}
        # no min_value/max_value: the widget would refuse an out-of-range value with a hint shown only on
        # hover; check_value says why, visibly, and the form's button says it is blocked
        out = w.number_input(label, value=value, help=help_, key=wkey, **extra)
        return None if out is None else cast(out)
    if f.kind == "list" and f.enum is not None:
        fmt = format_func or str
        picked = w.multiselect(
            label,
            list(f.enum),
            default=[d for d in (f.default or []) if d in f.enum],
            help=help_,
            key=wkey,
            format_func=fmt,
        )
        return picked if picked or not f.nullable else None
    if f.kind == "list":
        text = w.text_area(label + " — one per line", value="\n".join(map(str, f.default or [])), help=help_, key=wkey)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if f.item_kind == "string":
            return lines if lines or not f.nullable else None
        try:
            vals = [int(x) if f.item_kind == "integer" else float(x) for x in lines]
        except ValueError:
            what = "an integer" if f.item_kind == "integer" else "a number"
            raise InputError(f"{f.label}: every line must be {what}") from None
        return vals if vals or not f.nullable else None
    if f.kind == "string":
        text = w.text_input(label, value=f.default or "", max_chars=f.max_length, help=help_, key=wkey)
        return text if (text or not f.nullable) else None
    text = w.text_area(
        label + " (JSON)", value="" if f.default is None else json.dumps(f.default), help=help_, key=wkey
    )
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{f.label}: not valid JSON ({exc})") from None


# --- where a torch job runs -----------------------------------------------------------------------

DEVICES = ("cpu", "auto", "cuda")
"""The choices of a torch job's ``device`` (``core.device.DeviceName``; the UI reaches ``core`` only over HTTP)."""
AMPS = ("off", "bf16")
"""The choices of its ``amp`` (``core.device.AmpName``)."""
DEVICE_FIELDS = ("device", "amp")
_DEVICE_HELP = (
    "Where the torch work runs: cpu, cuda (a GPU worker; the API refuses it where the deployment declares none) "
    "or auto (a GPU worker when the deployment has one, else the CPU)."
)
_AMP_HELP = "Mixed precision: off (fp32) or bf16 (bfloat16 autocast; meant for CUDA, slow on most CPUs)."


def device_inputs(key: str, *, where: Any = None, schema: dict[str, Any] | None = None) -> dict[str, str]:
    """The one device / mixed-precision input of every torch job's form: two select boxes side by side.

    Returns the params entries that differ from the defaults (``cpu``, ``off``), so a CPU run's
    params stay what they were. ``schema`` (the method's params schema) supplies the help texts
    when it has them. Widget keys are ``{key}-device`` and ``{key}-amp``, as :func:`schema_form`'s.
    """
    props = (schema or {}).get("properties", {})
    w = where if where is not None else st
    left, right = w.columns(2) if where is None else (w, w)
    device = left.selectbox(
        "Device",
        DEVICES,
        index=0,
        key=f"{key}-device",
        help=props.get("device", {}).get("description") or _DEVICE_HELP,
    )
    amp = right.selectbox(
        "Mixed precision",
        AMPS,
        index=0,
        key=f"{key}-amp",
        help=props.get("amp", {}).get("description") or _AMP_HELP,
    )
    out: dict[str, str] = {}
    if device != DEVICES[0]:
        out["device"] = device
    if amp != AMPS[0]:
        out["amp"] = amp
    return out


def _fmt(v: float) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def bounds_text(f: Field) -> str:
    """The allowed range of a number field as words ("1 to 64", "at least 0", "more than 0 and at most 0.01")."""
    lo = (
        f"at least {_fmt(f.minimum)}"
        if f.minimum is not None
        else f"more than {_fmt(f.exclusive_minimum)}"
        if f.exclusive_minimum is not None
        else None
    )
    hi = (
        f"at most {_fmt(f.maximum)}"
        if f.maximum is not None
        else f"less than {_fmt(f.exclusive_maximum)}"
        if f.exclusive_maximum is not None
        else None
    )
    if f.minimum is not None and f.maximum is not None:
        return f"{_fmt(f.minimum)} to {_fmt(f.maximum)}"
    return " and ".join(p for p in (lo, hi) if p)


def check_value(f: Field, value: Any) -> str | None:
    """Why ``value`` (as a widget returned it) breaks ``f``'s schema, as one sentence naming the field; ``None``
    when it fits. Cross-field rules are the API's: its answer is shown by :func:`show_api_error`."""
    name = f.label
    if value is None:
        return f"{name}: required." if f.required and not f.nullable and f.default is None else None
    if f.kind in ("integer", "number") and isinstance(value, int | float):
        too_low = (f.minimum is not None and value < f.minimum) or (
            f.exclusive_minimum is not None and value <= f.exclusive_minimum
        )
        too_high = (f.maximum is not None and value > f.maximum) or (
            f.exclusive_maximum is not None and value >= f.exclusive_maximum
        )
        if too_low or too_high:
            return f"{name}: must be {bounds_text(f)} (got {_fmt(value)})."
    if f.kind == "list" and isinstance(value, list):
        if f.min_items is not None and len(value) < f.min_items:
            return f"{name}: needs at least {f.min_items} value(s) (got {len(value)})."
        if f.max_items is not None and len(value) > f.max_items:
            return f"{name}: takes at most {f.max_items} value(s) (got {len(value)})."
    if f.kind == "string" and isinstance(value, str) and f.max_length is not None and len(value) > f.max_length:
        return f"{name}: at most {f.max_length} characters (got {len(value)})."
    return None


def error_lines(exc: ApiError, labels: Mapping[str, str] | None = None) -> list[str]:
    """An API error as readable lines: one ``field: message`` per invalid field (``labels`` maps field names to
    what the form calls them), else the error's message. Never a raw dict."""
    labels = labels or {}
    lines = []
    for e in exc.errors:
        loc = [str(x) for x in e.get("loc") or [] if str(x) not in ("body", "params", "query", "form")]
        msg = str(e.get("msg") or "invalid").removeprefix("Value error, ").removeprefix("Assertion failed, ")
        if loc:
            head = labels.get(loc[0], loc[0])
            where = ".".join([head, *loc[1:]])
            lines.append(f"{where}: {msg}")
        else:
            lines.append(msg)
    if lines:
        return list(dict.fromkeys(lines))
    msg = exc.message
    if msg.startswith("invalid params for "):  # the registry's sentence: "invalid params for M: a: x; b: y"
        _, _, rest = msg.partition(": ")
        return [part.strip() for part in rest.split("; ") if part.strip()]
    return [msg]


def show_api_error(
    exc: ApiError, *, schema: dict[str, Any] | None = None, labels: Mapping[str, str] | None = None, what: str = ""
) -> None:
    """Show an API error as one readable sentence per field (labels from ``schema``'s fields, then ``labels``)."""
    names: dict[str, str] = {}
    if schema is not None:
        try:
            names = {f.name: f.label for f in schema_fields(schema)}
        except SchemaError:
            names = {}
    names.update(labels or {})
    lines = error_lines(exc, names)
    head = {
        422: "Not submitted: the API refused these values",
        404: "Not found",
        409: "Conflict",
        413: "Too large",
        415: "Not a readable file",
        503: "The job queue is unavailable",
    }.get(exc.status, f"The API answered {exc.status}")
    head = f"{what}: {head}" if what else head
    if len(lines) == 1:
        st.error(f"{head}. {lines[0]}")
    else:
        st.error(head + ":\n" + "\n".join(f"- {ln}" for ln in lines))


def model_notice(client: ApiClient, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Before the click: when a job of ``method`` with ``params`` will first train a model, say which and for how
    long (``POST /v1/readiness``). Returns the API's answer (``None`` when it cannot be asked)."""
    ask = getattr(client, "readiness", None)
    if ask is None:
        return None
    try:
        ready = ask(method, dict(params or {}))
    except ApiError:
        return None
    if not ready.get("ready", True) and ready.get("notice"):
        st.info(ready["notice"], icon=":material/hourglass_top:")
    return ready


@dataclass
class FormValues:
    """What :func:`schema_inputs` read: the params to submit (empty optional inputs left out) and the
    sentences of the values the schema refuses (the button must stay blocked while there are any)."""

    params: dict[str, Any]
    errors: list[str]


def schema_inputs(
    schema: dict[str, Any],
    key: str,
    *,
    only: list[str] | None = None,
    more: bool = False,
    labels: Mapping[str, str] | None = None,
    helps: Mapping[str, str] | None = None,
    format_funcs: Mapping[str, Callable[[Any], str]] | None = None,
    columns: int = 1,
    fixed: Mapping[str, Any] | None = None,
    device: bool = True,
) -> FormValues:
    """The inputs of ``schema_fields(schema)`` (or the fields named in ``only``, in that order; with
    ``more=True`` every other field too, in an expander), without a button: see :func:`schema_form`.

    Labels are the fields' titles (or names), each with its description and range visible below it
    (``labels``/``helps`` override). ``fixed`` params (chosen elsewhere on the page, or not for the user
    to set) get no input and are added to the params. A value the schema refuses is said under its input.
    A torch job's ``device`` and ``amp`` come last, as :func:`device_inputs` (``device=False``: none)."""
    fields = schema_fields(schema)
    fixed = dict(fixed or {})
    torch_job = set(DEVICE_FIELDS) <= {f.name for f in fields}
    extra: list[Field] = []
    if only is not None:
        by_name = {f.name: f for f in fields}
        unknown = [n for n in only if n not in by_name]
        if unknown:
            raise SchemaError(f"the form asks for fields the schema lacks: {unknown}")
        extra = [f for f in fields if more and f.name not in only]
        fields = [by_name[n] for n in only]
    skip = set(fixed) | (set(DEVICE_FIELDS) if torch_job else set())
    fields = [f for f in fields if f.name not in skip]
    extra = [f for f in extra if f.name not in skip]
    labels, helps, format_funcs = labels or {}, helps or {}, format_funcs or {}
    values: dict[str, Any] = {}
    errors: list[str] = []

    def draw(group: list[Field], ncols: int) -> None:
        cols = st.columns(ncols) if ncols > 1 else None
        for i, f in enumerate(group):
            if f.name in labels:
                f = replace(f, label=labels[f.name])
            where = cols[i % ncols] if cols else st
            about = helps.get(f.name) or f.help
            rng = bounds_text(f) if f.kind in ("integer", "number") else ""
            try:
                value = field_input(f, key, where=where, help=about, format_func=format_funcs.get(f.name))
            except InputError as exc:
                problem: str | None = str(exc)
            else:
                problem = check_value(f, value)
                values[f.name] = value
            caption = " · ".join(p for p in (about, f"range: {rng}" if rng else "") if p)
            if caption:
                where.caption(caption)
            if problem:
                where.error(problem)
                errors.append(problem)

    draw(fields, columns)
    if extra:
        with st.expander(f"More options ({len(extra)})"):
            draw(extra, max(columns, 2))
    if torch_job and device:
        values.update(device_inputs(key, schema=schema))
    kept = {k: v for k, v in {**values, **fixed}.items() if v is not None}  # a None: the API's default applies
    return FormValues(kept, errors)


def submit_button(label: str, key: str, errors: list[str], *, primary: bool = True, where: Any = None) -> bool:
    """A button that is disabled while ``errors`` (the form's refused values) exist, saying so beside it;
    ``True`` when it was clicked on a valid form."""
    w = where if where is not None else st
    clicked = w.button(label, type="primary" if primary else "secondary", key=key, disabled=bool(errors))
    if errors:
        w.caption(
            f"“{label}” is blocked until {'this is' if len(errors) == 1 else 'these are'} fixed: " + " ".join(errors)
        )
    return bool(clicked) and not errors


def schema_form(
    schema: dict[str, Any],
    key: str,
    *,
    only: list[str] | None = None,
    more: bool = False,
    labels: Mapping[str, str] | None = None,
    helps: Mapping[str, str] | None = None,
    format_funcs: Mapping[str, Callable[[Any], str]] | None = None,
    columns: int = 1,
    submit_label: str = "Submit job",
    fixed: Mapping[str, Any] | None = None,
    client: ApiClient | None = None,
    method: str | None = None,
) -> dict[str, Any] | None:
    """The inputs of :func:`schema_inputs` and a submit button; returns the params when the button is
    clicked, else ``None``.

    Only the button submits: the inputs are not an ``st.form`` (where Enter in a number field submits),
    so Enter just sets the value. A value the schema refuses (out of range, unparsable, too many items) is
    said under its input, and the button is disabled with the reason beside it. With ``client`` and
    ``method``, a job that will first train a model says so above the button (:func:`model_notice`)."""
    form = schema_inputs(
        schema,
        key,
        only=only,
        more=more,
        labels=labels,
        helps=helps,
        format_funcs=format_funcs,
        columns=columns,
        fixed=fixed,
    )
    if client is not None and method is not None and not form.errors:
        model_notice(client, method, form.params)
    return form.params if submit_button(submit_label, f"{key}-submit", form.errors) else None


def submit_job(
    client: ApiClient,
    method: str,
    params: dict[str, Any],
    *,
    path: str | None = None,
    schema: dict[str, Any] | None = None,
    labels: Mapping[str, str] | None = None,
) -> str | None:
    """Submit a job (``POST /v1/jobs`` with a fresh idempotency key, or JSON to a method's ``path``); returns
    its id, or ``None`` after showing the API's refusal one sentence per field."""
    import uuid

    try:
        if path is None:
            job = client.submit(method, params, idempotency_key=uuid.uuid4().hex)
        else:
            job = client.post(path, json=params)
    except ApiError as exc:
        show_api_error(exc, schema=schema, labels=labels)
        return None
    return job["id"]


# --- following jobs ----------------------------------------------------------------------------


def follow_job(
    client: ApiClient,
    job_ids: str | Mapping[str, str],
    *,
    label: str | None = None,
    cancel: str | None = None,
    log: bool | Callable[[str], bool] = False,
    interval: float = 2.0,
) -> Any:
    """Follow one job (``job_ids`` an id) or several (a ``{name: id}`` mapping) until they end.

    While a job is queued or running this shows its progress bar with status and message, the
    log of its past messages (``log=True``, or a predicate choosing which messages to keep) and
    a ``cancel`` button (its label; none when ``None``), refreshing every ``interval`` seconds
    in a fragment that reruns the page as soon as a followed job ends. A job that failed or was
    cancelled shows its message (and its traceback in an expander).

    Returns the final job dict of a single id once it has ended (``None`` while it runs or when
    it cannot be read); for a mapping, ``{name: job}`` of the jobs that have ended so far.
    Callers render their results for ``job["status"] == "succeeded"``.
    """
    single = isinstance(job_ids, str)
    ids: dict[str, str] = {"": job_ids} if single else dict(job_ids)
    jobs: dict[str, dict[str, Any]] = {}
    for name, job_id in ids.items():
        try:
            jobs[name] = client.job(job_id)
        except ApiError as exc:
            st.error(f"Cannot read job {job_id}: {exc.message}")
            return None if single else {}
    live = {name: ids[name] for name, job in jobs.items() if job["status"] in LIVE}
    if live:
        _follow_live(client, live, label=label, cancel=cancel, log=log, interval=interval)
    done = {name: job for name, job in jobs.items() if job["status"] not in LIVE}
    for name, job in done.items():
        if job["status"] != "succeeded":
            prefix = " ".join(p for p in (label, name) if p)
            st.error(f"{prefix + ' job' if prefix else 'Job'} {job['status']}: {job.get('message') or ''}")
            if job.get("error"):
                with st.expander("Traceback"):
                    st.code(job["error"], language=None)
    if single:
        return done.get("")
    return done


def _log_lines(job: dict[str, Any], keep: bool | Callable[[str], bool]) -> list[str]:
    lines: list[str] = st.session_state.setdefault(f"follow-log-{job['id']}", [])
    msg = job.get("message") or ""
    if msg and (keep is True or (callable(keep) and keep(msg))) and (not lines or lines[-1] != msg):
        lines.append(msg)
    return lines


def _follow_live(
    client: ApiClient,
    ids: dict[str, str],
    *,
    label: str | None,
    cancel: str | None,
    log: bool | Callable[[str], bool],
    interval: float,
) -> None:
    """The live part: with a client that streams (``client.events``, the API's Server-Sent Events) the
    progress is pushed and redrawn as it changes, and the end reruns the page at once; otherwise (and to
    reconnect) it is re-read every ``interval`` seconds."""
    stream = getattr(client, "events", None)

    def show(job: dict[str, Any], name: str, bar, lines) -> None:
        prefix = " · ".join(p for p in (label, name) if p)
        msg = job.get("message") or ""
        text = (f"{prefix}: " if prefix else "") + job["status"] + (f" — {msg}" if msg else "")
        bar.progress(min(1.0, max(0.0, float(job.get("progress") or 0.0))), text=text)
        if log:
            with lines.container():
                for line in _log_lines(job, log):
                    st.caption(f"✓ {line}")

    def body() -> None:
        slots: dict[str, tuple[str, Any, Any]] = {}
        for name, job_id in ids.items():
            try:
                job = client.job(job_id)
            except ApiError as exc:
                st.error(f"Cannot read job {job_id}: {exc.message}")
                continue
            if job["status"] not in LIVE:
                st.rerun()  # the whole page: the caller renders the ended job
            bar, lines = st.empty(), st.empty()
            show(job, name, bar, lines)
            slots[name] = (job_id, bar, lines)
            if cancel and st.button(cancel, key=f"follow-cancel-{job_id}"):
                try:
                    client.cancel(job_id)
                except ApiError as exc:
                    st.error(f"Cannot cancel job {job_id}: {exc.message}")
        if stream is None:
            return
        for name, (job_id, bar, lines) in slots.items():  # pushed: redraw on every event
            try:
                for job in stream(job_id, timeout=STREAM_S):
                    show(job, name, bar, lines)
                    if job["status"] not in LIVE:
                        st.rerun()
            except ApiError as exc:
                st.warning(f"Live updates of job {job_id} stopped: {exc.message}")
                return

    # re-run every `interval` even when streaming: another fragment's timer (the jobs table) interrupts a
    # running one, and a stream that ends without the job's end must reconnect
    st.fragment(run_every=interval)(body)()


STREAM_S = 5.0
"""How long one live stream lasts at most (bounds how late a click is noticed)."""


# --- reports -----------------------------------------------------------------------------------


MAX_TILES = 8
"""Metric tiles a report view shows; further metrics go in one table."""
BLANK = "—"
"""How a missing value (``None``/NaN: a cell not measured, e.g. a task not learnt yet) is shown."""


def metric_text(v: Any) -> str:
    """A metric's value as a tile shows it: 4 significant digits, ``—`` for a missing one."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return BLANK
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def matrix_frame(matrix: Any, index: list[str], columns: list[str], digits: int = 1):
    """A matrix (lists or an array, ``None``/NaN where a cell has no value) as a DataFrame of text with ``—``
    in the empty cells (a plain float frame shows them as "None")."""
    import pandas as pd

    rows = [
        [BLANK if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.{digits}f}" for v in row]
        for row in matrix
    ]
    return pd.DataFrame(rows, index=index, columns=columns)


def render_report(client: ApiClient, job_id: str) -> None:
    """Title, summary, metrics, sections with inline images, tables and the remaining artifacts."""
    try:
        rep = client.report(job_id)
    except ApiError as exc:
        st.info(f"No report yet: {exc.message}")
        return
    body = rep["body"]
    by_name = {a["name"]: a for a in body.get("artifacts", [])}
    st.subheader(body.get("title", rep["title"]))
    if body.get("summary"):
        st.markdown(body["summary"])
    metrics = body.get("metrics") or {}
    if metrics:
        # a few tiles (the report's headline metrics come first), the rest as one table
        tiles = list(metrics.items())[:MAX_TILES]
        cols = st.columns(min(4, len(tiles)))
        for i, (k, v) in enumerate(tiles):
            cols[i % len(cols)].metric(k, metric_text(v))
        rest = list(metrics.items())[MAX_TILES:]
        if rest:
            import pandas as pd

            with st.expander(f"All {len(metrics)} metrics"):
                st.table(
                    pd.DataFrame([{"metric": k, "value": metric_text(v)} for k, v in metrics.items()]).set_index(
                        "metric"
                    )
                )
    shown: set[str] = set()
    for sec in body.get("sections", []):
        st.markdown(f"#### {sec['title']}")
        markdown_with_images(client, sec["markdown"], by_name, shown=shown)
    for t in body.get("tables", []):
        st.markdown(f"**{t['title']}**")
        import pandas as pd

        df = pd.DataFrame([[BLANK if v is None else v for v in row] for row in t["rows"]], columns=t["columns"])
        if len(df) <= 60:  # small tables as real HTML (searchable, copyable)
            st.table(df.set_index(df.columns[0]) if len(df.columns) > 1 else df)
        else:
            st.dataframe(df, hide_index=True, width="stretch")
        if t.get("note"):
            st.caption(t["note"])
    for a in body.get("artifacts", []):
        if a["name"] in shown or not a.get("id"):
            continue
        data = client.artifact(a["id"])
        if a["kind"] in ("image", "plot"):
            st.image(io.BytesIO(data), caption=a.get("caption") or a["name"])
        else:
            st.download_button(
                f"Download {a['name']}",
                data=data,
                file_name=a["name"],
                mime=a.get("mime"),
                key=f"dl-{job_id}-{a['name']}",
            )
    with st.expander("Report as Markdown"):
        st.code(rep["markdown"], language="markdown")


def markdown_with_images(
    client: ApiClient,
    text: str,
    artifacts: Mapping[str, dict[str, Any]],
    *,
    shown: set[str] | None = None,
    image_width: int | None = None,
) -> None:
    """Render report markdown, turning each ``![caption](artifact:NAME)`` into the stored image.

    ``artifacts`` maps artifact names to the report's artifact refs (with their stored ``id``);
    the names drawn are added to ``shown``. A reference to an artifact that was not stored shows
    a note instead of a broken image.
    """
    pos = 0
    for m in _IMG_LINK.finditer(text):
        if text[pos : m.start()].strip():
            st.markdown(text[pos : m.start()])
        name = m.group(2)
        ref = artifacts.get(name)
        if ref and ref.get("id"):
            st.image(
                io.BytesIO(client.artifact(ref["id"])),
                caption=m.group(1) or ref.get("name") or name,
                width=image_width if image_width is not None else "content",
            )
            if shown is not None:
                shown.add(name)
        else:
            st.caption(f"(image `{name}` is not stored)")
        pos = m.end()
    if text[pos:].strip():
        st.markdown(text[pos:])


def jobs_table(client: ApiClient, method: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """A table of recent jobs with progress; returns the jobs."""
    try:
        jobs = client.jobs(limit=limit, method=method)
    except ApiError as exc:
        st.error(f"Cannot list jobs: {exc.message}")
        return []
    if not jobs:
        st.caption("No jobs yet.")
        return []
    import pandas as pd

    df = pd.DataFrame(
        [
            {
                "status": j["status"],
                "method": j["method"],
                "progress": j["progress"],
                "message": (j["message"] or "")[:80],
                "id": j["id"],
                "created": j["created_at"][:19].replace("T", " "),
            }
            for j in jobs
        ]
    )
    st.dataframe(
        df,
        hide_index=True,
        width="stretch",
        column_config={"progress": st.column_config.ProgressColumn("progress", min_value=0, max_value=1)},
    )
    return jobs
