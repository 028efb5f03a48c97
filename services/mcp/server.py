"""The MCP server, generated from the method registry (no tool is written by hand).

Every method in :func:`core.jobs.list_methods` is a tool named like the method
(``llm.complete``, ``defame.check``, ``rf.edit``, ...) whose input schema is the JSON schema of
its params model. Calling a tool records and runs a job (:mod:`services.mcp.jobs`); the result
is the job's report as Markdown, resource links to the report and its artifacts, and a
structured summary (job id, status, metrics). Reports, artifacts and job states are resources
(:mod:`services.mcp.resources`).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

from core.jobs import InvalidParams, UnknownMethod, get_method, list_methods, load_all
from core.ownership import NotOwned
from core.ownership import check as check_owned
from services.mcp import resources
from services.mcp.jobs import Dispatch, JobState, follow, submit

log = logging.getLogger(__name__)

RESOURCE_NOT_FOUND = -32002
STATE_KEY = "paperworks_api_key"
"""Where the HTTP transport's auth middleware leaves the caller (ASGI ``scope["state"]``): ``(key id, admin)``."""

INSTRUCTIONS = (
    "paperworks runs ICML 2025 methods as jobs. Each tool is one method; its arguments are the method's "
    "parameters. A call waits for the job, reports progress, and returns the report (Markdown) with links "
    "to its artifacts (paperworks://artifacts/<id>). Cancelling the call cancels the job."
)


def tool_list() -> list[types.Tool]:
    """One tool per registered method, with the params model's JSON schema as its input schema."""
    return [
        types.Tool(
            name=spec.name,
            title=spec.title,
            description=spec.description or spec.title,
            input_schema=spec.json_schema(),
            meta={"paperworks/queue": spec.queue},
        )
        for spec in list_methods()
    ]


def _caller(ctx: Any) -> tuple[str, bool] | None:
    """``(API key id, admin)`` of an HTTP caller; ``None`` over stdio (whoever spawned us owns the database)."""
    scope = getattr(getattr(ctx, "request", None), "scope", None) or {}
    return (scope.get("state") or {}).get(STATE_KEY)


def _owner(ctx: Any, default: str) -> str:
    """Who a new job belongs to: the caller's key, or ``default`` over stdio."""
    caller = _caller(ctx)
    return caller[0] if caller else default


def _viewer(ctx: Any) -> str | None:
    """Whose jobs the caller may read: its own (an HTTP key), everyone's (an admin key, stdio)."""
    caller = _caller(ctx)
    return None if caller is None or caller[1] else caller[0]


def _error(text: str, **structured: Any) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured or None, is_error=True
    )


def tool_result(state: JobState) -> types.CallToolResult:
    """The finished job as a tool result: report Markdown, resource links, structured summary."""
    if state.status != "succeeded":
        why = state.message or state.status
        return _error(f"job {state.id} {state.status}: {why}", job_id=state.id, status=state.status, error=why)
    report = resources.load_report(state.id)
    if report is None:
        return _error(f"job {state.id} succeeded but stored no report", job_id=state.id, status=state.status)
    uri = resources.report_uri(state.id)
    links: list[types.ContentBlock] = [
        types.ResourceLink(type="resource_link", uri=uri, name="report", mime_type="text/markdown")
    ]
    artifacts = []
    for ref in report.artifacts:
        if ref.id:
            a_uri = resources.artifact_uri(ref.id)
            artifacts.append({"name": ref.name, "uri": a_uri, "mime": ref.mime, "kind": ref.kind})
            links.append(types.ResourceLink(type="resource_link", uri=a_uri, name=ref.name, mime_type=ref.mime))
    structured = {
        "job_id": state.id,
        "status": state.status,
        "title": report.title,
        "summary": report.summary,
        "metrics": report.metrics,
        "report": uri,
        "artifacts": artifacts,
    }
    text = types.TextContent(type="text", text=resources.report_markdown(report))
    return types.CallToolResult(content=[text, *links], structured_content=structured)


def build_server(*, dispatch: Dispatch = "inline", owner: str = "mcp", poll_s: float = 0.2) -> Server:
    """The MCP server over the registry.

    Args:
        dispatch: ``inline`` runs each job in this process (like ``paperworks run``); ``queue`` sends it to
            the Celery workers and follows it in the database.
        owner: the job owner recorded for calls without an API key (stdio).
        poll_s: how often a running job's row is read for progress.
    """
    load_all()

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_list())

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        caller = _caller(ctx)

        def checked_submit() -> str:
            if get_method(params.name).internal:  # not a tool (tool_list leaves it out): refused like an unknown one
                raise UnknownMethod(f"unknown tool {params.name!r}")
            if caller is not None:  # an HTTP key names only its own stored objects (stdio: the operator)
                check_owned(params.name, params.arguments, owner=caller[0], admin=caller[1])
            return submit(params.name, params.arguments, owner=_owner(ctx, owner), dispatch=dispatch)

        try:
            job_id = await anyio.to_thread.run_sync(checked_submit)
        except (UnknownMethod, NotOwned) as exc:
            return _error(str(exc))
        except InvalidParams as exc:
            return _error(
                str(exc),
                errors=[{"loc": list(map(str, e.get("loc", ()))), "msg": str(e.get("msg"))} for e in exc.errors],
            )
        sent = {"last": -1.0}

        async def report(fraction: float, message: str) -> None:
            if fraction > sent["last"]:  # MCP: progress must increase from one notification to the next
                sent["last"] = fraction
                await ctx.session.report_progress(fraction, 1.0, message or None)

        state = await follow(job_id, dispatch=dispatch, report=report, poll_s=poll_s)
        return tool_result(state)

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        rows = await anyio.to_thread.run_sync(lambda: resources.recent_reports(owner=_viewer(ctx)))
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=resources.report_uri(job_id),
                    name=f"{method} report {job_id}",
                    description=summary[:300] or None,
                    mime_type="text/markdown",
                )
                for job_id, method, summary in rows
            ]
        )

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(name=name, uri_template=tpl, mime_type=mime, description=desc)
                for name, tpl, mime, desc in resources.TEMPLATES
            ]
        )

    async def read_resource(ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        try:
            c = await anyio.to_thread.run_sync(lambda: resources.read(str(params.uri), owner=_viewer(ctx)))
        except resources.ResourceNotFound as exc:
            raise MCPError(RESOURCE_NOT_FOUND, str(exc)) from None
        if c.text is not None:
            contents: list[Any] = [types.TextResourceContents(uri=c.uri, mime_type=c.mime, text=c.text)]
        else:
            contents = [types.BlobResourceContents(uri=c.uri, mime_type=c.mime, blob=c.blob or "")]
        return types.ReadResourceResult(contents=contents)

    return Server(
        "paperworks",
        version="0.1.0",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )
