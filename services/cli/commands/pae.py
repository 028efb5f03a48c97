"""PAE on the command line.

* ``paperworks sites serve [--port 8765] [--seed 0]`` — serve the local websites (shop, recipes, dictionary,
  news, map) in the foreground;
* ``paperworks pae run [--preset small] [-o key=value ...]`` — a ``pae.train`` job in this process with a
  progress bar (``--remote`` queues it for the workers instead), then the per-site test table;
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

from services.cli.jobrun import Amp, Device, JobResult, device_params, parse_kv, run_job
from services.cli.progress import console

sites_app = typer.Typer(help="The self-hosted websites PAE practises on.", no_args_is_help=True)
pae_app = typer.Typer(help="PAE: proposer-agent-evaluator web-agent training.", no_args_is_help=True)


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


def _params(preset: str | None, pairs: list[str]) -> dict[str, Any]:
    from agents.pae.config import PRESETS

    if preset is not None and preset not in PRESETS:
        raise typer.BadParameter(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return parse_kv(pairs, PRESETS[preset] if preset else None)


def _show(result: JobResult) -> None:
    """The per-site test success table."""
    report = result.report
    t = Table(*report.tables[0].columns, title=f"{report.title}: {report.summary}")
    for row in report.tables[0].rows:
        t.add_row(*(f"{v:.2f}" if isinstance(v, float) else str(v) for v in row))
    console.print(t)


@pae_app.command("run")
def run(
    preset: Annotated[str | None, typer.Option(help="small or issue (see agents/pae/config.py).")] = None,
    option: Annotated[list[str], typer.Option("--option", "-o", help="RunConfig field key=value (JSON).")] = [],  # noqa: B006
    device: Device = "cpu",
    amp: Amp = "off",
    remote: Annotated[bool, typer.Option(help="Queue the job for the workers instead.")] = False,
    out: Annotated[Path | None, typer.Option(help="Write the report as Markdown here.")] = None,
) -> None:
    """Train with PAE and print the test success per site before/after."""
    raise typer.Exit(
        code=run_job(
            "pae.train", _params(preset, option) | device_params(device, amp), remote=remote, out=out, show=_show
        )
    )


@pae_app.command("runs")
def runs(limit: int = 20) -> None:
    """Recent PAE runs."""
    from agents.pae import store
    from core.db import migrate

    migrate.upgrade()
    t = Table("id", "name", "status", "iteration", "created")
    for r in store.list_runs(limit=limit):
        t.add_row(r["id"], r["name"], r["status"], str(r["iteration"]), r["created_at"][:19])
    console.print(t)


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


@pae_app.command("episode")
def episode(
    task: Annotated[str, typer.Argument(help="The task, in words.")],
    site: Annotated[str, typer.Option(help="Start site.")] = "shop",
    model: Annotated[str | None, typer.Option(help="Gateway model (default: the local SmolLM2).")] = None,
    max_steps: Annotated[int, typer.Option(min=1, max=30)] = 10,
    screenshots: Annotated[Path, typer.Option(help="Folder for the step screenshots.")] = Path("pae-episode"),
    threads: Annotated[int, typer.Option(min=0, help="torch threads (0 = default).")] = 1,
) -> None:
    """Play one task on the local sites and print every step."""
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
    set_threads(threads)
    policy = LLMPolicy(PolicyConfig(model=model or local_model_string(None), temperature=0.0))
    t = SiteTask(id="cli", site=site, question=task, start_path=f"/{site}/", proposer="user")
    with SiteServer() as srv, BrowserEnv(srv.base_url, EnvConfig(max_steps=max_steps)) as env:
        traj = run_episode(env, policy, t, screenshots / "step")
    for s in traj.steps:
        console.print(
            f"[bold]{s.idx}[/bold] {s.url}\n  thought: {s.thought}\n  action: {s.action}"
            + (f"\n  [yellow]{s.message}[/yellow]" if s.message else "")
        )
    console.print(f"answer: {traj.answer!r} ({traj.length} steps; screenshots in {screenshots})")


@pae_app.command("judge-probe")
def judge_probe_cmd(
    model: Annotated[list[str], typer.Option("--model", "-m", help="Judge model(s); default the configured one.")] = [],  # noqa: B006
    tasks_per_site: Annotated[int, typer.Option(min=1, max=20)] = 2,
    max_tokens: Annotated[int, typer.Option(min=16, max=1000, help="Judge reply budget.")] = 256,
    same_template: Annotated[
        bool, typer.Option(help="Also judge each task with another same-template task's answer (a wrong value).")
    ] = True,
) -> None:
    """Agreement and Cohen's kappa of the LLM judge with the oracle, before training on it (scripted trajectories)."""
    from agents.pae.judge_probe import probe
    from core.config import get_settings

    rows = probe(
        model or [get_settings().llm_model],
        sites=["shop", "recipes", "dictionary", "map"],
        tasks_per_site=tasks_per_site,
        max_tokens=max_tokens,
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


@pae_app.command("proposer-probe")
def proposer_probe_cmd(
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Proposer model; default the configured one.")
    ] = None,
    site: Annotated[
        list[str], typer.Option("--site", help="Site(s) to propose for; default the four training sites.")
    ] = [],  # noqa: B006
    requests: Annotated[int, typer.Option(min=1, max=20, help="Requests per site and decoding.")] = 1,
    tasks: Annotated[int, typer.Option(min=1, max=20, help="Tasks asked for per request.")] = 5,
    max_tokens: Annotated[int, typer.Option(min=32, max=4096, help="Proposer reply budget.")] = 512,
    seed: int = 0,
    decoding: Annotated[
        list[str], typer.Option(help="'free' and/or 'schema' (default both): free text, or under the task JSON schema.")
    ] = [],  # noqa: B006
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the rows and summary here.")] = None,
) -> None:
    """Format-error rate of the LLM proposer's free-text replies against decoding under the task JSON schema."""
    from agents.pae.proposer_probe import probe, summarise
    from core.config import get_settings

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
            max_tokens=max_tokens,
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
    app.add_typer(pae_app, name="pae")
