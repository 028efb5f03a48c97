"""``paperworks``: the command line (typer + rich).

Generic commands live here; a method adds its own in ``services/cli/commands/<pkg>.py``
by exporting ``register(app)``.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import pkgutil
import time
from pathlib import Path
from typing import Annotated, Any

import typer  # noqa: E402
from rich.table import Table  # noqa: E402

from services.cli import commands  # noqa: E402
from services.cli.jobrun import fail, parse_kv, run_batch, run_job  # noqa: E402
from services.cli.progress import console, progress_bar  # noqa: E402

app = typer.Typer(
    name="paperworks",
    no_args_is_help=True,
    add_completion=False,
    help="paperworks: ICML 2025 methods as jobs, reports and agents, offline on a laptop.",
)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(keys_app, name="keys")


# --- database and keys ---------------------------------------------------------
@db_app.command("upgrade")
def db_upgrade(revision: str = typer.Argument("heads")) -> None:
    """Apply migrations (default: every head)."""
    from core.config import get_settings
    from core.db import migrate

    migrate.upgrade(revision=revision)
    console.print(f"database at {revision}: {get_settings().database_url.split('@')[-1]}")


@db_app.command("downgrade")
def db_downgrade(revision: str = typer.Argument(..., help="Target revision, e.g. base or -1.")) -> None:
    """Revert migrations down to REVISION."""
    from core.db import migrate

    migrate.downgrade(revision=revision)
    console.print(f"database at {revision}")


@keys_app.command("create")
def keys_create(
    name: str = typer.Option("cli", help="A label for the key."),
    admin: bool = typer.Option(False, "--admin", help="See and cancel every key's jobs, reports and artifacts."),
) -> None:
    """Create an API key and print it once (only its hash is stored). A key sees only its own jobs unless --admin."""
    from core.db import crud, migrate
    from core.db.session import session_scope

    migrate.upgrade()
    with session_scope() as s:
        row, key = crud.create_api_key(s, name=name, scopes="admin" if admin else "")
    console.print(f"key id {row.id} ({name}{', admin' if admin else ''}); send it as 'Authorization: Bearer <key>':")
    typer.echo(key)


@keys_app.command("revoke")
def keys_revoke(key_id: str) -> None:
    """Revoke a key by id."""
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        ok = crud.revoke_api_key(s, key_id=key_id)
    if not ok:
        raise typer.Exit(code=fail(f"no key {key_id}"))
    console.print(f"revoked {key_id}")


# --- methods and jobs -----------------------------------------------------------
@app.command("methods")
def methods_cmd() -> None:
    """List the registered job types: queue, devices (torch jobs: `-p device=cuda`, `-p amp=bf16`), description."""
    from core.jobs import list_methods

    t = Table("method", "queue", "device", "description")
    for m in list_methods():
        t.add_row(m.name, m.queue, method_devices(m), m.description[:90])
    console.print(t)
    console.print(
        "torch jobs run where `-p device=cpu|auto|cuda` says (default cpu); a cuda job goes to the gpu queue "
        "(docs/GPU.md)"
    )


def method_devices(spec: Any) -> str:
    """``cpu|auto|cuda`` (+ ``bf16`` when it takes ``amp``) for a method whose params have a ``device``, else ``-``."""
    import typing

    fields = spec.params_model.model_fields
    if "device" not in fields:
        return "-"
    devices = "|".join(typing.get_args(fields["device"].annotation)) or "any"
    return devices + (" (amp: bf16)" if "amp" in fields else "")


@app.command("run")
def run_cmd(
    method: Annotated[str | None, typer.Argument(help="A registered method (see `paperworks methods`).")] = None,
    param: Annotated[list[str], typer.Option("--param", "-p", help="key=value (JSON values)")] = [],  # noqa: B006
    remote: Annotated[bool, typer.Option(help="Submit through the API and follow the job.")] = False,
    out: Annotated[
        Path | None, typer.Option(help="Write the report as Markdown here (--batch: results JSONL).")
    ] = None,
    batch: Annotated[
        Path | None,
        typer.Option(
            help='Submit every line of a JSONL file ({"method": ..., "params": {...}, "idempotency_key": ...}) '
            "through POST /v1/jobs:batch and wait for them all; a line without a key gets one from its content, "
            "so resubmitting the file runs nothing twice.",
            exists=True,
            dir_okay=False,
        ),
    ] = None,
    fresh: Annotated[bool, typer.Option(help="--batch: new idempotency keys (run the file's jobs again).")] = False,
    no_wait: Annotated[bool, typer.Option("--no-wait", help="--batch: submit and return.")] = False,
) -> None:
    """Run METHOD in this process with a progress bar (or --remote as a job), or a --batch file of jobs."""
    if batch is not None:
        if method is not None or param:
            raise typer.Exit(code=fail("--batch takes the jobs from the file: no METHOD or --param"))
        raise typer.Exit(code=run_batch(batch, out=out, follow=not no_wait, fresh=fresh))
    if method is None:
        raise typer.Exit(code=fail("give a METHOD (see `paperworks methods`) or --batch FILE.jsonl"))
    raise typer.Exit(code=run_job(method, parse_kv(param), remote=remote, out=out))


@app.command("examples")
def examples_cmd() -> None:
    """One small offline example per method: run one with `paperworks try NAME` (or from the web UI's home page)."""
    from services.examples import examples

    t = Table("name", "method", "what it shows", "~s", title="paperworks try NAME [--remote]")
    for e in examples():
        t.add_row(e.name, e.method, f"{e.title}: {e.about}", str(e.seconds))
    console.print(t)


@app.command("try")
def try_cmd(
    name: Annotated[str, typer.Argument(help="An example name or method (see `paperworks examples`).")],
    remote: Annotated[bool, typer.Option(help="Submit through the API and follow the job.")] = False,
    param: Annotated[list[str], typer.Option("--param", "-p", help="key=value over the example's")] = [],  # noqa: B006
) -> None:
    """Run a method's first example (no data set needed)."""
    from services.examples import get_example

    try:
        e = get_example(name)
    except KeyError as exc:
        raise typer.Exit(code=fail(str(exc.args[0]))) from None
    params = parse_kv(param, base=e.params)
    shown = " ".join(f"-p '{k}={json.dumps(v)}'" for k, v in params.items())
    console.print(f"{e.title}: paperworks run {e.method} {shown}", highlight=False)
    raise typer.Exit(code=run_job(e.method, params, remote=remote, title=e.title))


@app.command("prepare")
def prepare_cmd(
    strict: Annotated[bool, typer.Option(help="Exit 1 when a step fails (make test); else it is a warning.")] = False,
    check: Annotated[
        bool, typer.Option("--check", help="Change nothing: show what each method has and lacks.")
    ] = False,
) -> None:
    """Migrate the database and run every offline set-up step (model conversion, data files).

    A step that cannot run (a system package missing) is a warning naming its fix: the methods
    that need it say so when used, and the others are ready. `paperworks doctor` lists both.
    """
    if check:
        raise typer.Exit(code=_doctor())
    from core.db import migrate
    from core.jobs import list_preparers

    migrate.upgrade()
    failed = 0
    for name, fn in list_preparers().items():
        t0 = time.perf_counter()
        try:
            console.print(f"[green]✓[/green] {name}: {fn()} ({time.perf_counter() - t0:.1f} s)")
        except Exception as exc:  # report every step, decide at the end
            failed += 1
            console.print(f"[yellow]! {name} skipped: {type(exc).__name__}: {exc}[/yellow]")
    if failed:
        console.print(
            f"{failed} optional step(s) skipped; everything else is ready. "
            "`paperworks doctor` shows which methods they affect."
        )
        if strict:
            raise typer.Exit(code=1)


@app.command("doctor")
def doctor_cmd() -> None:
    """What this machine has and lacks (system packages, model, data, servers), and which methods it affects."""
    raise typer.Exit(code=_doctor())


def _doctor() -> int:
    from services.cli.doctor import per_method, run_checks

    results = run_checks()
    t = Table("check", "", "used for", "fix", title="paperworks doctor")
    for r in results:
        t.add_row(
            r.check.name,
            "[green]ok[/green]" if r.ok else "[red]missing[/red]",
            r.check.what,
            "" if r.ok else f"{r.problem}: {r.check.fix}",
        )
    console.print(t)
    m = Table("method", "status")
    for name, missing in per_method(results).items():
        m.add_row(name, "[green]ready[/green]" if not missing else "lacks " + ", ".join(r.check.name for r in missing))
    console.print(m)
    return 1 if any(not r.ok and "*" in r.check.needed_by for r in results) else 0


@app.command("jobs")
def jobs_cmd(
    limit: int = typer.Option(20, min=1, max=500), method: str | None = None, status: str | None = None
) -> None:
    """Recent jobs in the application database."""
    from core.db import crud, migrate
    from core.db.session import session_scope

    migrate.upgrade()
    t = Table("id", "method", "status", "progress", "message", "created")
    with session_scope() as s:
        for j in crud.list_jobs(s, method=method, status=status, limit=limit):
            t.add_row(
                j.id,
                j.method,
                j.status,
                f"{j.progress:.0%}",
                (j.message or "")[:50],
                j.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            )
    console.print(t)


@app.command("reproduce")
def reproduce_cmd(
    name: str,
    out: Annotated[Path, typer.Option(help="Results directory.")] = Path("docs/results"),
    option: Annotated[
        list[str],
        typer.Option(
            "--option", "-o", help="key=value (JSON values), checked against NAME's options model; see --list-options."
        ),
    ] = [],  # noqa: B006
    list_options: Annotated[bool, typer.Option("--list-options", help="Show NAME's options and exit.")] = False,
) -> None:
    """Run NAME's CPU-scale experiment and write OUT/NAME.md (+ OUT/NAME/ files)."""
    from core.jobs import InvalidOptions, get_reproducer
    from core.jobs.context import JobContext
    from core.jobs.registry import UnknownMethod

    try:
        spec = get_reproducer(name)
    except UnknownMethod as exc:
        raise typer.Exit(code=fail(str(exc))) from None
    if list_options:
        t = Table("option", "type", "default", "description", title=f"reproduce {name}: {spec.description}")
        props = spec.json_schema().get("properties", {})
        for field, info in spec.options_model.model_fields.items():
            prop = props.get(field, {})
            kind = (
                prop.get("type")
                or " | ".join(str(x.get("type", x.get("const", "?"))) for x in prop.get("anyOf", []))
                or "?"
            )
            if "enum" in prop:
                kind = " | ".join(map(str, prop["enum"]))
            default = "(required)" if info.is_required() else repr(info.get_default(call_default_factory=True))
            t.add_row(field, kind, default, info.description or "")
        console.print(t)
        return
    try:
        options = spec.validate(parse_kv(option))
    except InvalidOptions as exc:
        raise typer.Exit(code=fail(str(exc))) from None
    t0 = time.perf_counter()
    with progress_bar(f"reproduce {name}") as update:
        path = spec.run(out, JobContext(update), options)
    console.print(f"wrote {path} in {time.perf_counter() - t0:.0f} s")


@app.command("worker")
def worker_cmd(
    queues: str = typer.Option(
        None,
        help="Comma-separated queues: cpu on a CPU machine, gpu on a GPU machine (device=cuda/auto jobs where "
        "PAPERWORKS_GPU_WORKERS=1; docs/GPU.md). Default: PAPERWORKS_WORKER_QUEUES (cpu).",
    ),
    pool: str = typer.Option("solo", help="Celery pool (solo, prefork, threads)."),
) -> None:
    """Start a Celery worker."""
    if queues:
        os.environ["PAPERWORKS_WORKER_QUEUES"] = queues
        from core.config import get_settings

        get_settings.cache_clear()
    from services.worker.main import main as worker_main

    worker_main([f"--pool={pool}"])


@app.command("api")
def api_cmd(host: str = typer.Option(None), port: int = typer.Option(None)) -> None:
    """Serve the HTTP API (uvicorn)."""
    import uvicorn

    from core.config import get_settings

    s = get_settings()
    uvicorn.run(
        "services.api.main:create_app", factory=True, host=host or s.api_host, port=port or s.api_port, log_level="info"
    )


@app.command("ui")
def ui_cmd(port: int = typer.Option(None), host: str = typer.Option(None)) -> None:
    """Serve the Streamlit web app."""
    from services.cli.up import streamlit_command

    cmd = streamlit_command(port, host)
    os.execvp(cmd[0], cmd)


@app.command("up")
def up_cmd(
    no_ui: bool = typer.Option(False, help="Start only the API and a worker."),
    mcp: bool = typer.Option(False, "--mcp", help="Also serve MCP over streamable HTTP (jobs go to the worker)."),
    api_port: int = typer.Option(None),
    ui_port: int = typer.Option(None),
    mcp_port: int = typer.Option(8100, min=1, max=65535, help="Port of the MCP endpoint (with --mcp)."),
    grace: float = typer.Option(3.0, min=0.0, max=60.0, help="Seconds a child may take to stop before it is killed."),
) -> None:
    """Migrate, then start API + one worker + UI (+ MCP with --mcp) on the embedded defaults, restarting any that die
    (Ctrl-C stops all)."""
    from services.cli.up import up

    raise typer.Exit(
        code=up(with_ui=not no_ui, with_mcp=mcp, api_port=api_port, ui_port=ui_port, mcp_port=mcp_port, grace_s=grace)
    )


def _register_plugins() -> None:
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda i: i.name):
        try:
            mod = importlib.import_module(f"services.cli.commands.{info.name}")
            mod.register(app)
        except Exception:  # a broken plug-in must not take the CLI down
            logging.getLogger(__name__).exception("could not load CLI commands %s", info.name)


_register_plugins()


def main() -> None:
    logging.basicConfig(
        level=os.environ.get("PAPERWORKS_LOG_LEVEL", "WARNING"), format="%(levelname)s %(name)s: %(message)s"
    )
    app()


if __name__ == "__main__":
    main()
