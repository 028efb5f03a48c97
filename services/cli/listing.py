"""Listing commands print their rows on stdout: a table for people, ``--json`` for programs.

``paperworks methods | grep sefe`` finds the SEFE rows because tables go to stdout (progress bars,
status lines and errors go to stderr, :data:`services.cli.progress.console`). A table cell is never
cut: rich wraps long text at word boundaries, and when stdout is not a terminal the table is as
wide as its content (a pipe, a file), so each row stays on one line for ``grep``.

Usage in a command::

    def domains(as_json: Json = False) -> None:
        print_rows(["step", "domain"], rows, as_json=as_json)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

Json = Annotated[bool, typer.Option("--json", help="Print the rows as JSON (a list of objects) instead of a table.")]
"""``as_json: Json = False`` in a listing command's signature: the one ``--json`` flag of every listing."""


def stdout_console() -> Console:
    """A console on stdout; unbounded width when stdout is not a terminal (no wrapping inside a pipe)."""
    if sys.stdout.isatty():
        return Console(highlight=False)
    return Console(width=100_000, highlight=False, soft_wrap=True)


def _plain(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | type(None) | list | dict) else str(value)


def print_rows(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    as_json: bool = False,
    title: str | None = None,
    keys: Sequence[str] | None = None,
) -> None:
    """Print ``rows`` on stdout: a rich table, or with ``as_json`` a JSON list of ``{key: value}`` objects.

    ``keys`` names the JSON keys (default: the column titles); values keep their types in JSON and
    are shown with ``str`` in the table.
    """
    rows = [list(r) for r in rows]
    if as_json:
        names = list(keys or columns)
        typer.echo(json.dumps([dict(zip(names, map(_plain, r), strict=True)) for r in rows], indent=1, default=str))
        return
    console = stdout_console()
    table = Table(*columns, title=title)
    for r in rows:
        table.add_row(*("" if v is None else str(v) for v in r))
    console.print(table)


def print_json(value: Any) -> None:
    """Print any JSON-able value on stdout (``--json`` of a non-table listing)."""
    typer.echo(json.dumps(value, indent=1, default=str))
