"""M3-JEPA on the command line (the ``paperworks m3jepa`` group of ``methods/m3_jepa``).

* ``paperworks m3jepa train --variant mlp --seed 1`` — one variant: test R@1/5/10, zero-shot, expert usage
* ``paperworks m3jepa study --seeds 3`` — every variant × seed with the §7 checks (``reproduce m3_jepa`` writes the doc)
* ``paperworks m3jepa retrieve "a bold seven leaning to the left" -k 8`` — the nearest test digits

Jobs run in this process with a progress bar, or ``--remote`` through the API.
"""

from __future__ import annotations

from typing import Annotated

import typer

from services.cli.jobrun import Amp, Device, device_params, run_job

m3_app = typer.Typer(
    help="M3-JEPA: MoE predictor + alternating gradient descent, digits ↔ captions.", no_args_is_help=True
)


@m3_app.command("train")
def train(
    variant: Annotated[
        str,
        typer.Option(
            help="m3_jepa, m3_jepa_sampled, mlp, k1, k6, no_cl, no_reg, summed, clip_linear, random_captions."
        ),
    ] = "m3_jepa",
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    epochs: Annotated[int, typer.Option(help="Training epochs.")] = 50,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Train one variant and print its test retrieval and zero-shot accuracy."""
    raise typer.Exit(
        code=run_job(
            "m3_jepa.train",
            {"variant": variant, "seed": seed, "epochs": epochs} | device_params(device, amp),
            remote=remote,
        )
    )


@m3_app.command("study")
def study(
    variants: Annotated[str, typer.Option(help="Comma-separated variants (default: all).")] = "",
    seeds: Annotated[int, typer.Option(help="Seeds per variant.")] = 3,
    epochs: Annotated[int, typer.Option(help="Training epochs per run.")] = 50,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Every variant × seed: retrieval mean ± std, ablation directions and the §7 checks."""
    params: dict = {"seeds": seeds, "epochs": epochs}
    names = [v.strip() for v in variants.split(",") if v.strip()]
    if names:
        params["variants"] = names
    raise typer.Exit(code=run_job("m3_jepa.study", params | device_params(device, amp), remote=remote))


@m3_app.command("retrieve")
def retrieve(
    caption: Annotated[str, typer.Argument(help="The caption to search with.")],
    k: Annotated[int, typer.Option("-k", help="How many digits.")] = 8,
    variant: Annotated[str, typer.Option(help="Which trained model.")] = "m3_jepa",
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Nearest test digits to a caption (text → image through the trained predictor)."""
    raise typer.Exit(
        code=run_job(
            "m3_jepa.retrieve",
            {"caption": caption, "k": k, "variant": variant} | device_params(device, amp),
            remote=remote,
        )
    )


def register(app: typer.Typer) -> None:
    app.add_typer(m3_app, name="m3jepa")
