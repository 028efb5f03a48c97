"""``paperworks mcp``: serve every registered method as an MCP tool (stdio or streamable HTTP).

* ``paperworks mcp`` — stdio, for clients that spawn the server (Claude Desktop, IDEs, agent frameworks);
* ``paperworks mcp --transport http --port 8100`` — streamable HTTP at ``http://HOST:PORT/mcp``, every request
  with an API key (``Authorization: Bearer <key>``; ``paperworks keys create``);
* ``--dispatch queue`` sends the jobs to the Celery workers instead of running them in the server process.
"""

from __future__ import annotations

from typing import Annotated, Literal

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp(
        transport: Annotated[
            Literal["stdio", "http"], typer.Option(help="stdio (spawned by the client) or streamable HTTP.")
        ] = "stdio",
        host: Annotated[str, typer.Option(help="HTTP bind address (keep loopback unless you mean it).")] = "127.0.0.1",
        port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8100,
        dispatch: Annotated[
            Literal["inline", "queue"],
            typer.Option(help="inline: run jobs in this process; queue: send them to the workers."),
        ] = "inline",
    ) -> None:
        """Serve paperworks to MCP clients: methods as tools, reports and artifacts as resources."""
        from core.db import migrate

        migrate.upgrade()
        if transport == "http":
            from services.mcp.transports import serve_http

            typer.echo(f"MCP (streamable HTTP) at http://{host}:{port}/mcp — send an API key", err=True)
            serve_http(host=host, port=port, dispatch=dispatch)
        else:
            from services.mcp.transports import serve_stdio

            serve_stdio(dispatch=dispatch)
