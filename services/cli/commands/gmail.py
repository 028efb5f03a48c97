"""GMAIL on the command line (the ``paperworks gmail`` group of ``methods/gmail``).

* ``paperworks gmail align --strength 1.0 --seed 0`` — stage 1 (f_g aligned to f_r), stage 2 arms, the gap
* ``paperworks gmail pairs --strengths 0.5,1.0 -o pairs.png`` — held-out real/generated pairs as a PNG

``align`` runs in this process with a progress bar, or ``--remote`` through the API (``gmail.align``).
The full experiment (strengths × seeds, spec checks) is ``paperworks reproduce gmail``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from services.cli.jobrun import Amp, Device, device_params, fail, run_job

gmail_app = typer.Typer(
    help="GMAIL: generated images as their own modality, aligned to real ones.", no_args_is_help=True
)


@gmail_app.command("align")
def align(
    strength: Annotated[float, typer.Option(help="Generator artifact strength in [0, 2].")] = 1.0,
    seed: Annotated[int, typer.Option(help="Training seed.")] = 0,
    n_train: Annotated[int, typer.Option(help="Training pairs.")] = 2000,
    n_test: Annotated[int, typer.Option(help="Held-out pairs.")] = 1000,
    caption_steps: Annotated[int, typer.Option(help="Captioner steps per arm (0: skip the captioning demo).")] = 200,
    batch_size: Annotated[int, typer.Option(help="Pairs per step.")] = 256,
    stage1_steps: Annotated[int, typer.Option(help="Stage-1 steps.")] = 200,
    stage2_steps: Annotated[int, typer.Option(help="Stage-2 steps per arm.")] = 100,
    mu: Annotated[float, typer.Option(help="Weight of the stage-1 image–caption CLIP loss.")] = 1.0,
    backbone: Annotated[str, typer.Option(help="Tiny-CLIP preset: default or test.")] = "default",
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Align f_g to f_r at one artifact strength; compare real-only / naive / dual / GMAIL on real images."""
    params = {"artifact_strength": strength, "seed": seed, "n_train": n_train, "n_test": n_test,
              "stage1_steps": stage1_steps, "stage2_steps": stage2_steps, "caption_steps": caption_steps,
              "batch_size": batch_size, "mu": mu, "backbone": backbone}  # fmt: skip
    raise typer.Exit(code=run_job("gmail.align", params | device_params(device, amp), remote=remote))


@gmail_app.command("pairs")
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
    app.add_typer(gmail_app, name="gmail")
