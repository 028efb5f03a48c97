"""paperworks as an MCP server: every registered method is a tool, reports and artifacts are resources.

``paperworks mcp`` serves it over stdio (for IDEs and desktop agents that spawn it) or
streamable HTTP (``--transport http``, behind the same API keys as the HTTP API). A tool call
records a job through :mod:`core.jobs.lifecycle`, reports its progress as MCP progress
notifications, and an MCP cancellation cancels the job.
"""

from services.mcp.server import build_server

__all__ = ["build_server"]
