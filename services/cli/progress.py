"""A progress sink for CLI jobs: a rich bar on a terminal, plain timestamped lines otherwise."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextlib.contextmanager
def progress_bar(title: str) -> Iterator:
    """Yields ``update(fraction, message)``.

    When stderr is not a terminal (logs, CI, ``nohup``) a live bar would print nothing
    until the end, so each new message, or every 5 % of progress, becomes one line.
    """
    if not console.is_terminal:
        t0, last = time.monotonic(), {"pct": -100.0, "msg": None}

        def log_update(fraction: float, message: str = "") -> bool:
            pct = 100.0 * max(0.0, min(1.0, float(fraction)))
            if message != last["msg"] or pct >= last["pct"] + 5.0:
                last.update(pct=pct, msg=message)
                elapsed = time.monotonic() - t0
                console.print(
                    f"{title}: {pct:5.1f}% {elapsed:7.0f}s {(message or '')[:100]}", highlight=False, soft_wrap=True
                )
            return False

        yield log_update
        return
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.percentage:>5.1f}%"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[msg]}"),
        console=console,
        transient=False,
    ) as prog:
        task = prog.add_task(title, total=1.0, msg="")

        def update(fraction: float, message: str = "") -> bool:
            prog.update(task, completed=fraction, msg=(message or "")[:80])
            return False

        yield update
