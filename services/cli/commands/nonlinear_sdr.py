"""Sufficient dimension reduction on the command line (the ``paperworks sdr`` group of ``methods/nonlinear_sdr``).

* ``paperworks sdr fit TABLE.csv --response y --method kernel [--plot plot.png]`` — a CSV, in this process;
* ``paperworks sdr dataset wine --method neural [--remote]`` — a dataset bundled with scikit-learn.

Both run the ``nonlinear_sdr.fit`` job (``paperworks run nonlinear_sdr.fit -p ...`` is the generic form) and
print the eigenvalues, the directions and the k-NN score against PCA. An uploaded CSV on a remote
deployment goes through ``POST /v1/sdr/fit``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from services.cli.jobrun import Amp, Device, JobResult, device_params, run_job
from services.cli.progress import console

sdr_app = typer.Typer(help="Sufficient dimension reduction by principal SVM ensembles.", no_args_is_help=True)

Method = Annotated[str, typer.Option(help="linear, kernel, neural (principal machines) or sir, save, dr, phd.")]
Components = Annotated[str, typer.Option(help="d, or auto (BIC).")]
Loss = Annotated[str, typer.Option(help="hinge, logistic, squared_hinge, least_squares or ensemble.")]
Plot = Annotated[Path | None, typer.Option(help="Write the 2-D sufficient plot (PNG) here.")]


def _params(method: str, n_components: str, loss: str, lam: float, evaluate: bool) -> dict:
    return {
        "method": method,
        "n_components": int(n_components) if n_components.isdigit() else 0,
        "loss": loss,
        "lam": lam,
        "evaluate": evaluate,
    }


def _show(plot: Path | None):
    def show(result: JobResult) -> None:
        rep = result.report
        console.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
        for table in rep.tables:
            console.print(table.to_markdown())
        if plot is not None:
            plot.write_bytes(result.artifact_bytes("sufficient_plot.png"))
            console.print(f"sufficient plot written to {plot}")

    return show


@sdr_app.command("fit")
def fit(
    table: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV with a header row.")],
    response: Annotated[str, typer.Option(help="The response column.")],
    method: Method = "kernel",
    n_components: Components = "auto",
    loss: Loss = "hinge",
    lam: Annotated[float, typer.Option(help="λ of wᵀw + (λ/n) Σ L.")] = 1.0,
    evaluate: Annotated[bool, typer.Option(help="5-fold k-NN score against PCA.")] = True,
    plot: Plot = None,
    device: Device = "cpu",
    amp: Amp = "off",
) -> None:
    """Reduce TABLE: the sufficient predictors of RESPONSE given the other (numeric) columns."""
    from core.artifacts import get_artifact_store
    from core.config import get_settings
    from methods.nonlinear_sdr.fit import read_csv

    if table.stat().st_size > get_settings().max_upload_bytes:
        raise typer.BadParameter(f"{table} is larger than {get_settings().max_upload_bytes} bytes")
    data = table.read_bytes()
    try:
        read_csv(data, response)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    sha = get_artifact_store().put_bytes(data, name=table.name).sha256
    params = {
        "csv_sha256": sha,
        "response": response,
        "dataset": None,
        **_params(method, n_components, loss, lam, evaluate),
    }
    raise typer.Exit(code=run_job("nonlinear_sdr.fit", params | device_params(device, amp), show=_show(plot)))


@sdr_app.command("dataset")
def dataset(
    name: Annotated[str, typer.Argument(help="diabetes, breast_cancer, wine, iris or digits.")],
    method: Method = "kernel",
    n_components: Components = "auto",
    loss: Loss = "hinge",
    lam: Annotated[float, typer.Option(help="λ of wᵀw + (λ/n) Σ L.")] = 1.0,
    evaluate: Annotated[bool, typer.Option(help="5-fold k-NN score against PCA.")] = True,
    plot: Plot = None,
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Submit through the API instead.")] = False,
) -> None:
    """Reduce a dataset bundled with scikit-learn."""
    params = {"dataset": name, **_params(method, n_components, loss, lam, evaluate)}
    raise typer.Exit(
        code=run_job("nonlinear_sdr.fit", params | device_params(device, amp), remote=remote, show=_show(plot))
    )


def register(app: typer.Typer) -> None:
    app.add_typer(sdr_app, name="sdr")
