"""A rich progress bar as a job-progress sink."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(title: str) -> Iterator:
    """Yields ``update(fraction, message)``."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"),
                  TimeElapsedColumn(), TextColumn("{task.fields[msg]}"), console=console,
                  transient=False) as prog:
        task = prog.add_task(title, total=1.0, msg="")

        def update(fraction: float, message: str = "") -> bool:
            prog.update(task, completed=fraction, msg=(message or "")[:80])
            return False

        yield update
