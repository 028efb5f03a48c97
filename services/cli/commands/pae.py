"""PAE on the command line.

* ``paperworks sites serve [--port 8765] [--seed 0]`` — serve the local websites (shop, recipes, dictionary,
  news, map) in the foreground;
* ``paperworks pae run [--preset small] [--iterations 2 ...]`` (= ``pae train``) — the ``pae.train`` job, its options
  generated from ``TrainParams`` (``--preset`` fills them from ``agents/pae/config.py``'s presets, and the options
  given win), in this process with a progress bar (``--remote`` queues it for the workers), then the per-site
  test table; ``pae evaluate`` and ``pae rollouts`` are the sub-jobs, generated the same way;
* ``paperworks pae runs`` / ``paperworks pae show RUN_ID`` — stored runs and their per-iteration history;
* ``paperworks pae compare RUN_ID ...`` — arms side by side, seeds pooled, with 95% intervals;
* ``paperworks pae episode --site shop "What is the price of the Smart Kettle?"`` — one episode, printed step by
  step (thought, action, URL), screenshots in a folder.
* ``paperworks pae judge-probe [-m MODEL]`` — the LLM judge's agreement and Cohen's kappa with the oracle on
  scripted trajectories, before training on it;
* ``paperworks pae proposer-probe [-m MODEL] [--requests 2]`` — the LLM proposer's valid tasks and free-text
  format-error rate against decoding under the task JSON schema.

``paperworks reproduce pae`` regenerates ``docs/results/pae.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from services.cli.entries import Extra, MethodCommands
from services.cli.jobrun import JobResult, parse_kv
from services.cli.listing import Json, print_rows
from services.cli.progress import console

sites_app = typer.Typer(help="The self-hosted websites PAE practises on.", no_args_is_help=True)
pae = MethodCommands("pae", help="PAE: proposer-agent-evaluator web-agent training.")
TRAIN_PARAMS = "agents.pae.jobs:TrainParams"  # the probes and the episode take their budgets from pae.train's params
pae_app = pae.app


@sites_app.command("serve")
def serve(
    port: Annotated[int, typer.Option(min=1024, max=65535)] = 8765,
    seed: int = 0,
    host: Annotated[str, typer.Option(help="Bind address (keep loopback unless you mean it).")] = "127.0.0.1",
) -> None:
    """Serve every site under http://HOST:PORT/<site>/ (Ctrl-C stops)."""
    from agents.pae.sites import SITE_NAMES
    from agents.pae.sites.server import serve_forever

    console.print("sites: " + ", ".join(f"http://{host}:{port}/{n}/" for n in SITE_NAMES))
    serve_forever(seed=seed, host=host, port=port)


def _with_preset(params: dict[str, Any], preset: str) -> dict[str, Any]:
    """A named RunConfig preset under the options given on the command line (which win)."""
    from agents.pae.config import PRESETS

    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return {**PRESETS[preset], **params}


def _with_pairs(params: dict[str, Any], pairs: list[str]) -> dict[str, Any]:
    """``-o key=value`` pairs (JSON values) over the preset and the options: how runs were started before
    the options were generated (docs/results/pae.md quotes such commands)."""
    return {**params, **parse_kv(pairs)}


def _show(result: JobResult) -> None:
    """The per-site test success table."""
    report = result.report
    table = report.tables[0]
    print_rows(
        table.columns,
        [[f"{v:.2f}" if isinstance(v, float) else v for v in row] for row in table.rows],
        title=f"{report.title}: {report.summary}",
    )


pae.entry(
    "pae.train",
    names=("train", "run"),
    help="Train with PAE and print the test success per site before/after (also `paperworks pae run`).",
    extras=(
        Extra(
            "preset",
            Annotated[str | None, typer.Option(help="small or issue (see agents/pae/config.py).")],
            None,
            _with_preset,
        ),
        Extra(
            "option",
            Annotated[
                list[str] | None,
                typer.Option(
                    "--option", "-o", help="A TrainParams field as key=value (JSON values); wins over --preset."
                ),
            ],
            None,
            _with_pairs,
        ),
    ),
    show=_show,
)


@pae_app.command("runs")
def runs(limit: int = 20, as_json: Json = False) -> None:
    """Recent PAE runs."""
    from agents.pae import store
    from core.db import migrate

    migrate.upgrade()
    rows = [
        [r["id"], r["name"], r["status"], r["iteration"], r["created_at"][:19]] for r in store.list_runs(limit=limit)
    ]
    print_rows(["id", "name", "status", "iteration", "created"], rows, as_json=as_json)


@pae_app.command("show")
def show(run_id: str) -> None:
    """The per-iteration history of a run."""
    from agents.pae import store

    r = store.get_run(run_id=run_id)
    if r is None:
        console.print(f"[red]no run {run_id}[/red]")
        raise typer.Exit(code=1)
    for h in r["metrics"].get("history", []):
        console.print(json.dumps(h, default=str)[:300])


@pae_app.command("compare")
def compare_cmd(
    run_ids: Annotated[list[str], typer.Argument(help="Run ids (any arms, any seeds).")],
    out: Annotated[Path | None, typer.Option(help="Also write the tables as Markdown here.")] = None,
    n_boot: Annotated[int, typer.Option(min=100, max=100_000, help="Bootstrap resamples.")] = 2000,
) -> None:
    """Held-out success before/after per reward arm, seeds pooled, with 95% intervals (and arm vs arm)."""
    from agents.pae.compare import compare, load_pairs, markdown
    from core.db import migrate

    migrate.upgrade()
    try:
        result = compare(load_pairs(run_ids), n_boot=n_boot)
    except ValueError as e:
        console.print(f"[red]{e}[/red]")
        raise typer.Exit(code=1) from e
    text = markdown(result)
    typer.echo(text)  # unwrapped: the tables stay valid Markdown in a narrow terminal
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n")
        console.print(f"written to {out}")


@pae.command(
    "episode",
    model=TRAIN_PARAMS,
    fields=("policy_model", "max_steps", "torch_threads"),
    aliases={"policy_model": ("--model",), "torch_threads": ("--threads",)},
)
def episode(
    task: Annotated[str, typer.Argument(help="The task, in words.")],
    site: Annotated[str, typer.Option(help="Start site.")] = "shop",
    screenshots: Annotated[Path, typer.Option(help="Folder for the step screenshots.")] = Path("pae-episode"),
    *,
    policy_model: str | None,
    max_steps: int,
    torch_threads: int,
) -> None:
    """Play one task on the local sites and print every step (the policy, step cap and threads of `pae train`)."""
    from agents.pae.env import BrowserEnv, EnvConfig
    from agents.pae.jobs import set_threads
    from agents.pae.policy import LLMPolicy, PolicyConfig, local_model_string
    from agents.pae.rollout import run_episode
    from agents.pae.sites import SITE_NAMES
    from agents.pae.sites.base import SiteTask
    from agents.pae.sites.server import SiteServer

    if site not in SITE_NAMES:
        raise typer.BadParameter(f"unknown site {site!r}; known: {', '.join(SITE_NAMES)}")
    if not 3 <= len(task) <= 500:
        raise typer.BadParameter("the task must be 3..500 characters")
    set_threads(torch_threads)
    policy = LLMPolicy(PolicyConfig(model=policy_model or local_model_string(None), temperature=0.0))
    t = SiteTask(id="cli", site=site, question=task, start_path=f"/{site}/", proposer="user")
    with SiteServer() as srv, BrowserEnv(srv.base_url, EnvConfig(max_steps=max_steps)) as env:
        traj = run_episode(env, policy, t, screenshots / "step")
    for s in traj.steps:
        console.print(
            f"[bold]{s.idx}[/bold] {s.url}\n  thought: {s.thought}\n  action: {s.action}"
            + (f"\n  [yellow]{s.message}[/yellow]" if s.message else "")
        )
    console.print(f"answer: {traj.answer!r} ({traj.length} steps; screenshots in {screenshots})")


@pae.command(
    "judge-probe", model=TRAIN_PARAMS, fields=("judge_max_tokens",), aliases={"judge_max_tokens": ("--max-tokens",)}
)
def judge_probe_cmd(
    model: Annotated[list[str], typer.Option("--model", "-m", help="Judge model(s); default the configured one.")] = [],  # noqa: B006
    tasks_per_site: Annotated[int, typer.Option(min=1, max=20)] = 2,
    same_template: Annotated[
        bool, typer.Option(help="Also judge each task with another same-template task's answer (a wrong value).")
    ] = True,
    *,
    judge_max_tokens: int,
) -> None:
    """Agreement and Cohen's kappa of the LLM judge with the oracle, before training on it (scripted trajectories);
    the judge's reply budget is `pae train`'s."""
    from agents.pae.judge_probe import probe
    from core.config import get_settings

    rows = probe(
        model or [get_settings().llm_model],
        sites=["shop", "recipes", "dictionary", "map"],
        tasks_per_site=tasks_per_site,
        max_tokens=judge_max_tokens,
        same_template=same_template,
    )
    for r in rows:
        console.print(
            f"{r['model']}: {r['n']} cases, agreement {r['agreement']:.3f}, kappa {r['kappa']:.3f}, "
            f"precision {r['precision']:.3f}, recall {r['recall']:.3f}, unparsable {r['unparsable']}, {r['seconds']} s "
            f"(prompt v{r['prompt_version']}, {'check lines constrained' if r['checked'] else 'free text'})"
        )
        console.print(
            "  SUCCESS rate by answer: "
            + ", ".join(f"{k} {v:.2f} (n={r['cases_by_kind'][k]})" for k, v in r["success_rate_by_kind"].items())
        )


@pae.command(
    "proposer-probe",
    model=TRAIN_PARAMS,
    fields=("proposer_model", "proposer_max_tokens", "seed"),
    aliases={"proposer_model": ("--model", "-m"), "proposer_max_tokens": ("--max-tokens",)},
)
def proposer_probe_cmd(
    site: Annotated[
        list[str], typer.Option("--site", help="Site(s) to propose for; default the four training sites.")
    ] = [],  # noqa: B006
    requests: Annotated[int, typer.Option(min=1, max=20, help="Requests per site and decoding.")] = 1,
    tasks: Annotated[int, typer.Option(min=1, max=20, help="Tasks asked for per request.")] = 5,
    decoding: Annotated[
        list[str], typer.Option(help="'free' and/or 'schema' (default both): free text, or under the task JSON schema.")
    ] = [],  # noqa: B006
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the rows and summary here.")] = None,
    *,
    proposer_model: str | None,
    proposer_max_tokens: int,
    seed: int,
) -> None:
    """Format-error rate of the LLM proposer's free-text replies against decoding under the task JSON schema
    (the proposer model, reply budget and seed of `pae train`)."""
    from agents.pae.proposer_probe import probe, summarise
    from core.config import get_settings

    model = proposer_model
    name = model or get_settings().llm_model

    def show(r: dict[str, Any]) -> None:
        errs = f", {r['format_errors']}/{r['lines']} lines malformed" if r["decoding"] == "free text" else ""
        console.print(
            f"{r['site']} · {r['decoding']} · request {r['request']}: {r['valid']}/{r['asked']} valid{errs} ({r['seconds']} s)"
        )

    try:
        rows = probe(
            model,
            site or ["shop", "recipes", "dictionary", "map"],
            requests=requests,
            tasks=tasks,
            max_tokens=proposer_max_tokens,
            seed=seed,
            decodings=[{"free": "free text", "schema": "JSON schema"}.get(d, d) for d in decoding]
            or ["free text", "JSON schema"],
            on_reply=show,
        )
    except ValueError as exc:
        console.print(f"[red]{exc}[/red]")
        raise typer.Exit(code=2) from None
    summary = summarise(rows)
    t = Table(
        "decoding", "replies", "valid tasks / asked [95% CI]", "malformed task lines [95% CI]", "seconds", title=name
    )
    for s in summary:
        lo, hi = s["valid_ci"]
        valid = f"{s['valid']}/{s['asked']} = {s['valid_rate']:.0%} [{lo:.0%}, {hi:.0%}]"
        if s["decoding"] == "free text" and s["lines"]:
            elo, ehi = s["format_error_ci"]
            errs = f"{s['format_errors']}/{s['lines']} = {s['format_error_rate']:.0%} [{elo:.0%}, {ehi:.0%}]"
        elif s["decoding"] == "free text":
            errs = "no task lines"
        else:
            errs = "0 (by construction)"
        t.add_row(s["decoding"], str(s["replies"]), valid, errs, str(s["seconds"]))
    console.print(t)
    if json_out is not None:
        json_out.write_text(json.dumps({"model": name, "rows": rows, "summary": summary}, indent=1))
        console.print(f"wrote {json_out}")


def register(app: typer.Typer) -> None:
    app.add_typer(sites_app, name="sites")
    pae.register(app)
