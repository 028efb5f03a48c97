"""GMAIL on the command line: the ``paperworks gmail`` group of ``methods/gmail``.

* ``paperworks gmail align --strength 1.0 --seed 0`` — stage 1 (f_g aligned to f_r), stage 2 arms, the gap
  (the ``gmail.align`` job; options generated from ``AlignParams``, ``--strength`` is ``--artifact-strength``);
* ``paperworks gmail pairs --strengths 0.5,1.0 -o pairs.png`` — a preview: held-out real/generated pairs as a PNG.

The full experiment (strengths × seeds, spec checks) is ``paperworks reproduce gmail``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from services.cli.entries import MethodCommands
from services.cli.jobrun import fail

gmail = MethodCommands("gmail", help="GMAIL: generated images as their own modality, aligned to real ones.")
gmail.entry("gmail.align", aliases={"artifact_strength": ("--strength",)})


@gmail.command("pairs")
def pairs(
    out: Annotated[Path, typer.Option("--out", "-o", help="PNG file to write.")] = Path("gmail_pairs.png"),
    strengths: Annotated[str, typer.Option(help="Comma-separated strengths in [0, 2].")] = "0.5,1.0",
    start: Annotated[int, typer.Option(help="First held-out pair.")] = 0,
    count: Annotated[int, typer.Option(help="Pairs (1-16).")] = 8,
) -> None:
    """Write held-out pairs as a PNG: the real render on top, the generated image at each strength below."""
    from methods.gmail.data import pairs_png

    try:
        values = tuple(float(s) for s in strengths.split(",") if s.strip())
    except ValueError:
        raise typer.Exit(code=fail(f"strengths must be numbers separated by commas, got {strengths!r}")) from None
    if not values or any(not 0 <= s <= 2 for s in values) or not 1 <= count <= 16 or start < 0:
        raise typer.Exit(code=fail("strengths must lie in [0, 2], count in 1..16 and start >= 0"))
    out.write_bytes(pairs_png("test", start, count, values))
    typer.echo(f"wrote {out}")


def register(app: typer.Typer) -> None:
    gmail.register(app)
