"""Multipart form fields derived from a job's params model.

A route that takes an upload plus a job's fields declares ``fields: Annotated[form_model(Params, ...), Form()]``:
every field (type, default, bounds, enum, description) comes from the method's pydantic params
model, so the form and its OpenAPI schema cannot drift from what the job accepts. Only the
per-field rules travel; the model's cross-field validators run when the job is submitted
(``submit`` → 422 with the validation message).

Form values arrive as text, so two adaptations are made: a ``Literal`` of integers (``order: Literal[1, 2]``)
accepts ``"2"``, and a list field accepts comma-separated text (``nfes=4,10``) as well as repeated fields.
"""

from __future__ import annotations

import copy
import types
import typing
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, create_model


def _int_from_text(v: Any) -> Any:
    if isinstance(v, str) and v.strip().lstrip("+-").isdigit():
        return int(v)
    return v


def _split_commas(v: Any) -> Any:
    items = v if isinstance(v, list) else [v]
    out: list[Any] = []
    for item in items:
        out.extend(p.strip() for p in item.split(",") if p.strip()) if isinstance(item, str) else out.append(item)
    return out


def _is_int_literal(tp: Any) -> bool:
    args = typing.get_args(tp)
    return typing.get_origin(tp) is Literal and bool(args) and all(type(a) is int for a in args)


def _is_list(tp: Any) -> bool:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return any(_is_list(a) for a in typing.get_args(tp) if a is not type(None))
    return typing.get_origin(tp) is list


def form_model(params: type[BaseModel], *, exclude: Iterable[str] = (), name: str | None = None) -> type[BaseModel]:
    """A flat model of ``params``' fields minus ``exclude`` (e.g. the fields an upload replaces), for ``Form()``."""
    skip = set(exclude)
    unknown = skip - set(params.model_fields)
    if unknown:
        raise ValueError(f"{params.__name__} has no fields {sorted(unknown)}")
    fields: dict[str, Any] = {}
    for field_name, info in params.model_fields.items():
        if field_name in skip:
            continue
        tp = info.annotation
        if _is_int_literal(tp):
            tp = Annotated[tp, BeforeValidator(_int_from_text)]
        elif _is_list(tp):
            tp = Annotated[tp, BeforeValidator(_split_commas)]
        fields[field_name] = (tp, copy.copy(info))
    return create_model(name or f"{params.__name__}Form", __doc__=params.__doc__, **fields)
