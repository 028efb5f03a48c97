"""The MCP server over stdio with the test script installed (spawned by test_server.py's stdio test).

It calls what ``paperworks mcp`` calls once the database is migrated (the test session migrated it);
``test_cli.py`` checks the command's wiring.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted import install  # noqa: E402

install()

from services.mcp.transports import serve_stdio  # noqa: E402

serve_stdio()
