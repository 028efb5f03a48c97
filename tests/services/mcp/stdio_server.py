"""``paperworks mcp`` over stdio with the test script installed (spawned by test_server.py's stdio test)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scripted import install  # noqa: E402

install()

from services.cli.main import main  # noqa: E402

sys.argv = ["paperworks", "mcp", "--transport", "stdio"]
main()
