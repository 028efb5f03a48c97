"""The LangGraph graphs the API serves in the Agent Protocol shape, listed once: in ``langgraph.json``.

``langgraph.json`` (LangGraph's own deployment file, also read by ``langgraph dev``) maps a graph id to
``./path/to/module.py:attribute``. Serving another graph (Clinical GoT) is one line there. Each graph
runs with its own store from :func:`core.checkpoint.checkpointer` (``checkpointer("defame")``...),
attached to the module's compiled graph with ``Pregel.copy``.

A run's ``context`` may set only the context schema's ``config`` field (a typed, validated run
configuration such as :class:`agents.defame.config.DefameConfig`): stores, callbacks and service
settings stay on the server.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import json
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

log = logging.getLogger(__name__)

LANGGRAPH_JSON = Path(__file__).resolve().parents[2] / "langgraph.json"
_ASSISTANTS = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")  # uuid5 namespace of the assistant ids
CONTEXT_FIELD = "config"


class UnknownGraph(LookupError):
    """No graph or assistant by that id."""


@dataclass(frozen=True)
class GraphSpec:
    """One served graph: ``graph_id`` and the ``module:attribute`` holding its compiled graph."""

    graph_id: str
    module: str
    attribute: str

    @property
    def assistant_id(self) -> str:
        """The graph's default assistant (a stable uuid5 of the graph id)."""
        return str(uuid.uuid5(_ASSISTANTS, self.graph_id))


def _module_name(path: str) -> str:
    rel = Path(path.removeprefix("./")).with_suffix("")
    return ".".join(rel.parts)


@functools.lru_cache(maxsize=4)
def graph_specs(path: Path = LANGGRAPH_JSON) -> dict[str, GraphSpec]:
    """The graphs of ``langgraph.json`` (``{}`` with a warning when the file is missing)."""
    if not path.exists():
        log.warning("no %s: the Agent Protocol routes serve no graphs", path)
        return {}
    graphs = json.loads(path.read_text()).get("graphs") or {}
    specs = {}
    for graph_id, target in graphs.items():
        file, _, attribute = str(target).rpartition(":")
        module = _module_name(file) if file.endswith(".py") else file
        specs[graph_id] = GraphSpec(graph_id, module, attribute or "graph")
    return specs


def resolve(assistant_or_graph_id: str) -> GraphSpec:
    """The graph behind an assistant id or a graph id (LangGraph clients use either)."""
    for spec in graph_specs().values():
        if assistant_or_graph_id in (spec.graph_id, spec.assistant_id):
            return spec
    raise UnknownGraph(f"no assistant or graph {assistant_or_graph_id!r}; graphs: {', '.join(graph_specs())}")


def load(spec: GraphSpec) -> Any:
    """The module's compiled graph (imported on first use)."""
    return getattr(importlib.import_module(spec.module), spec.attribute)


def with_checkpointer(spec: GraphSpec, saver: Any) -> Any:
    """The compiled graph writing its checkpoints to ``saver``."""
    return load(spec).copy(update={"checkpointer": saver})


def nodes(spec: GraphSpec) -> list[str]:
    return [n for n in load(spec).nodes if not n.startswith("__")]


def context_for(spec: GraphSpec, context: dict[str, Any] | None) -> Any:
    """The run context from a client's JSON: only ``config`` may be set, validated by its declared type.

    Raises ``ValueError`` (a 422) for other keys, or for a graph without a context schema.
    """
    if not context:
        return None
    schema = getattr(load(spec).builder, "context_schema", None)
    if schema is None:
        raise ValueError(f"graph {spec.graph_id} takes no context")
    extra = sorted(set(context) - {CONTEXT_FIELD})
    if extra:
        raise ValueError(f"context may only set {CONTEXT_FIELD!r} (got {', '.join(extra)})")
    if dataclasses.is_dataclass(schema):
        fields = {f.name: f for f in dataclasses.fields(schema)}
        if CONTEXT_FIELD not in fields:
            raise ValueError(f"graph {spec.graph_id}'s context has no {CONTEXT_FIELD!r}")
        hints = _hints(schema)
        value = TypeAdapter(hints[CONTEXT_FIELD]).validate_python(context[CONTEXT_FIELD])
        return schema(**{CONTEXT_FIELD: value})
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate({CONTEXT_FIELD: context[CONTEXT_FIELD]})
    raise ValueError(f"graph {spec.graph_id}'s context schema {schema!r} is not a dataclass or pydantic model")


def _hints(schema: type) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(schema)


def context_jsonschema(spec: GraphSpec) -> dict[str, Any] | None:
    """The JSON schema of what a run's ``context`` may hold: ``{"config": <the config type's schema>}``."""
    schema = getattr(load(spec).builder, "context_schema", None)
    if schema is None:
        return None
    if dataclasses.is_dataclass(schema):
        hint = _hints(schema).get(CONTEXT_FIELD)
    else:
        field = getattr(schema, "model_fields", {}).get(CONTEXT_FIELD)
        hint = field.annotation if field is not None else None
    if hint is None:
        return None
    return {
        "type": "object",
        "properties": {CONTEXT_FIELD: TypeAdapter(hint).json_schema()},
        "additionalProperties": False,
    }


def schemas(spec: GraphSpec) -> dict[str, Any]:
    """Input, output, state and context JSON schemas (``GET /assistants/{id}/schemas``); ``None`` where
    pydantic cannot render the graph's state type (``typing.TypedDict`` on Python 3.11)."""
    graph = load(spec)
    out: dict[str, Any] = {"graph_id": spec.graph_id}
    for key, fn in (
        ("input_schema", graph.get_input_jsonschema),
        ("output_schema", graph.get_output_jsonschema),
        ("state_schema", graph.get_output_jsonschema),
        ("context_schema", lambda: context_jsonschema(spec)),
    ):
        try:
            out[key] = fn()
        except Exception as exc:
            out[key] = None
            log.debug("no %s for %s: %s", key, spec.graph_id, exc)
    out["config_schema"] = None
    return out


# --- JSON ------------------------------------------------------------------------------------------


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.asdict(obj)
    if isinstance(obj, set | frozenset | tuple):
        return list(obj)
    if hasattr(obj, "isoformat"):
        return obj.isoformat()
    return str(obj)


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values (pydantic models, dataclasses such as ``Interrupt``, tuples, dates)."""
    return json.loads(json.dumps(obj, default=_default))


def snapshot_json(thread_id: str, snap: Any) -> dict[str, Any]:
    """A LangGraph ``StateSnapshot`` as the Agent Protocol's ``ThreadState``."""

    def checkpoint(cfg: dict | None) -> dict | None:
        if not cfg:
            return None
        c = cfg.get("configurable") or {}
        return {
            "thread_id": thread_id,
            "checkpoint_ns": c.get("checkpoint_ns", ""),
            "checkpoint_id": c.get("checkpoint_id"),
        }

    tasks = [
        {
            "id": t.id,
            "name": t.name,
            "error": str(t.error) if t.error else None,
            "interrupts": jsonable(list(t.interrupts)),
            "checkpoint": None,
            "state": None,
            "result": jsonable(getattr(t, "result", None)),
        }
        for t in snap.tasks
    ]
    return {
        "values": jsonable(snap.values),
        "next": list(snap.next),
        "checkpoint": checkpoint(snap.config) or {"thread_id": thread_id, "checkpoint_ns": "", "checkpoint_id": None},
        "metadata": jsonable(snap.metadata or {}),
        "created_at": snap.created_at,
        "parent_checkpoint": checkpoint(snap.parent_config),
        "tasks": tasks,
        "interrupts": jsonable(list(getattr(snap, "interrupts", ()) or ())),
    }
