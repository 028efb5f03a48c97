"""Sufficient dimension reduction on the command line: the ``paperworks sdr`` group of ``methods/nonlinear_sdr``.

The commands are generated from the params models (:mod:`services.cli.entries`):

* ``paperworks sdr fit TABLE.csv --response y --method kernel [--plot plot.png]`` — an uploaded CSV;
* ``paperworks sdr fit --dataset wine --n-components 2`` or ``paperworks sdr dataset wine`` — a dataset
  bundled with scikit-learn;
* ``paperworks sdr simulate --model M1 --seeds 0,1`` — replications of a simulation setting.

What a schema cannot say is here: the CSV (read and checked locally, stored, named by its SHA-256;
``--remote`` uploads it to ``POST /v1/sdr/fit``), the sufficient plot written to ``--plot``, and
the printed eigenvalues and directions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from services.cli.entries import MethodCommands, Output, Upload
from services.cli.jobrun import JobResult
from services.cli.listing import stdout_console

sdr = MethodCommands("nonlinear_sdr", name="sdr", help="Sufficient dimension reduction by principal SVM ensembles.")


def store_csv(path: Path, params: dict[str, Any]) -> str:
    """Check TABLE like the API does (a text CSV with the response column, numeric predictors) and store it."""
    from core.artifacts import get_artifact_store
    from core.config import get_settings
    from methods.nonlinear_sdr.fit import read_csv
    from services.api.uploads import text_or_error

    limit = get_settings().max_upload_bytes
    if path.stat().st_size > limit:
        raise ValueError(f"{path} is larger than {limit} bytes")
    data = path.read_bytes()
    text_or_error(data, path.name, "a CSV table")
    if not params.get("response"):
        raise ValueError("a CSV needs --response, the name of its response column")
    table = read_csv(data, params["response"])
    from methods.nonlinear_sdr.jobs import check_components

    check_components(params.get("n_components", 0), len(table.features), f"the columns of {path.name}")
    return get_artifact_store().put_bytes(data, name=path.name).sha256


def _show(result: JobResult) -> None:
    rep = result.report
    out = stdout_console()
    out.print(f"[bold]{rep.title}[/bold]\n{rep.summary}")
    for table in rep.tables:
        out.print(table.to_markdown())


PLOT = Output("--plot", "sufficient_plot.png", "Write the 2-D sufficient plot (PNG) here.")
sdr.entry(
    "nonlinear_sdr.fit",
    names=("fit",),
    uploads=(
        Upload(
            "csv_sha256",
            "TABLE",
            "A CSV with a header row: the --response column and numeric predictors (instead of --dataset).",
            store_csv,
            api=("/v1/sdr/fit", "table"),
        ),
    ),
    outputs=(PLOT,),
    show=_show,
)
sdr.entry(
    "nonlinear_sdr.fit",
    names=("dataset",),
    arguments=("dataset",),
    hide=("csv_sha256", "response"),
    outputs=(PLOT,),
    show=_show,
    help="Reduce a dataset bundled with scikit-learn (the same job as `fit --dataset NAME`).",
)


def register(app) -> None:
    sdr.register(app)
