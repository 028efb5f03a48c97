"""Long-short alignment on the command line (the ``paperworks lsa`` group of ``methods/long_short_alignment``).

* ``paperworks lsa synthetic --task length --pe rope --steps 300`` — MSE by test length (trained on l ≤ 10)
* ``paperworks lsa lm --alphas 0,0.1,1 --variants b1,b2`` — the byte LM with the misalignment regularizer,
  PPL by length (b2: context extended ×2 with RoPE position interpolation)
* ``paperworks lsa smollm2 --samples 8`` — L_misalign of the local SmolLM2-135M on WikiText-2

Jobs run in this process with a progress bar, or ``--remote`` through the API (``lsa.synthetic``/``lsa.lm``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from services.cli.jobrun import Amp, Device, device_params, run_job

lsa_app = typer.Typer(
    help="Long-short alignment: length generalization and the misalignment regularizer.", no_args_is_help=True
)


@lsa_app.command("synthetic")
def synthetic(
    task: Annotated[str, typer.Option(help="mean, length or outrep.")] = "mean",
    pe: Annotated[str, typer.Option(help="nope, rope, sinusoidal or learned.")] = "nope",
    steps: Annotated[int, typer.Option(help="Training steps.")] = 300,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Train the small transformer on l ~ U{1..10} and print MSE at test lengths up to 50."""
    params = {"task": task, "pe": pe, "steps": steps, "seed": seed}
    raise typer.Exit(code=run_job("lsa.synthetic", params | device_params(device, amp), remote=remote))


@lsa_app.command("lm")
def lm(
    alphas: Annotated[str, typer.Option(help="Comma-separated regularizer weights α.")] = "0,0.1,1",
    stage_a_steps: Annotated[int, typer.Option(help="Pretraining steps (α = 0).")] = 200,
    stage_b_steps: Annotated[int, typer.Option(help="Continued-training steps per α.")] = 100,
    variants: Annotated[str, typer.Option(help="Comma-separated stage-B variants: b1, b2.")] = "b1",
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Byte LM on GSM8K+MATH text: L_CE + α·L_misalign per α, perplexity and misalignment by length."""
    try:
        values = [float(a) for a in alphas.split(",") if a.strip()]
    except ValueError:
        raise typer.BadParameter(f"alphas must be numbers separated by commas, got {alphas!r}") from None
    params = {
        "alphas": values,
        "stage_a_steps": stage_a_steps,
        "stage_b_steps": stage_b_steps,
        "variants": [v.strip() for v in variants.split(",") if v.strip()],
        "seed": seed,
    }
    raise typer.Exit(code=run_job("lsa.lm", params | device_params(device, amp), remote=remote))


@lsa_app.command("smollm2")
def smollm2(
    samples: Annotated[int, typer.Option(help="Suffix pairs.")] = 8,
    l_train: Annotated[int, typer.Option(help="l1, l2 drawn from l_train/2 to l_train tokens.")] = 128,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Run through the API.")] = False,
) -> None:
    """Long-short misalignment (SCE, SKL) of the local SmolLM2-135M on WikiText-2, with controls."""
    params = {"n_samples": samples, "l_train": l_train, "seed": seed}
    raise typer.Exit(code=run_job("lsa.smollm2", params | device_params(device, amp), remote=remote))


def register(app: typer.Typer) -> None:
    app.add_typer(lsa_app, name="lsa")
