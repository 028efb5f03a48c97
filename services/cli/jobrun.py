"""Running a job from the command line, in one place.

* :func:`parse_kv` — the one ``key=value`` parser of every ``--param``/``-p``/``--option``/``-o``;
* :data:`Device`, :data:`Amp` and :func:`device_params` — a ``--device``/``--amp`` pair for code that builds a
  torch job's params by hand (the generated job commands of :mod:`services.cli.entries` take them from the
  params model's ``DeviceParams``; ``paperworks run METHOD -p device=cuda`` needs nothing either);
* :func:`run_job` — run a registered job in this process (``run_inline``) or, with ``remote``,
  submit it through the HTTP API and follow it; either way with the progress bar of
  :mod:`services.cli.progress`, a status line, and the report: printed as rich Markdown, or
  written to ``out``, or handed to a command's own ``show`` (tables, images).

The report (Markdown, a command's tables, ``as_json``) goes to stdout; the progress bar, status
lines and errors go to stderr, so ``paperworks ... > report.md`` keeps only the result. Invalid
params are printed one sentence per field (here and from the API's 422 body alike).

Exit codes (what :func:`run_job` returns): ``0`` succeeded, ``1`` the job failed or was
cancelled, ``2`` bad input (unknown method, invalid params, or the API refused the job).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, get_args

import typer

from core.device import AMP_HELP, DEVICE_HELP, AmpName, DeviceName
from services.cli.progress import console, progress_bar

if TYPE_CHECKING:
    import httpx

    from core.jobs.report import Report

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def parse_kv(pairs: Iterable[str], base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``key=value`` pairs over ``base``; values are JSON when they parse (numbers, booleans, lists), else strings.

    Raises ``typer.BadParameter`` (exit 2) on a pair without ``=`` or with an empty key.
    """
    out: dict[str, Any] = dict(base or {})
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise typer.BadParameter(f"expected key=value, got {pair!r}")
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


Device = Annotated[DeviceName, typer.Option("--device", help=DEVICE_HELP)]
"""``device: Device = "cpu"`` in a command's signature: where the job's torch work runs (cpu, auto, cuda)."""
Amp = Annotated[AmpName, typer.Option("--amp", help=AMP_HELP)]
"""``amp: Amp = "off"`` in a command's signature: the job's mixed precision (off, bf16)."""


def device_params(device: str = "cpu", amp: str = "off") -> dict[str, str]:
    """The ``device``/``amp`` entries of a torch job's params from :data:`Device` and :data:`Amp` options.

    Only values other than the defaults (``cpu``, ``off``) are included, so a command's params —
    and the cached results keyed on them — are unchanged for a CPU run. Usage::

        def train(..., device: Device = "cpu", amp: Amp = "off", remote: bool = False) -> None:
            params = {"steps": steps, **device_params(device, amp)}
            raise typer.Exit(code=run_job("x.train", params, remote=remote))

    ``cuda`` in this process needs CUDA here (else the job fails at once, saying so); with
    ``--remote`` it needs a deployment with a GPU worker (else the API refuses it: 422).
    """
    if device not in get_args(DeviceName):
        raise typer.BadParameter(f"--device must be one of {', '.join(get_args(DeviceName))}, got {device!r}")
    if amp not in get_args(AmpName):
        raise typer.BadParameter(f"--amp must be one of {', '.join(get_args(AmpName))}, got {amp!r}")
    out = {}
    if device != "cpu":
        out["device"] = device
    if amp != "off":
        out["amp"] = amp
    return out


def fail(message: str, code: int = EXIT_BAD_INPUT) -> int:
    """Print ``error: message`` and return ``code`` (for ``raise typer.Exit(code=fail(...))``)."""
    console.print(f"[red]error:[/red] {message}")
    return code


@dataclass
class JobResult:
    """A succeeded job as a command's ``show`` sees it, wherever it ran."""

    job_id: str
    report: Report
    markdown: str
    _read_artifact: Callable[[str], bytes]

    def artifact_bytes(self, name: str) -> bytes:
        """The bytes of the report's artifact ``name`` (from the local store, or ``GET /v1/artifacts/{id}``)."""
        ref = self.report.artifact(name)
        if ref is None or ref.id is None:
            raise LookupError(f"job {self.job_id}'s report has no stored artifact {name!r}")
        return self._read_artifact(ref.id)


Show = Callable[[JobResult], None]


def run_job(
    method: str,
    params: dict[str, Any],
    *,
    remote: bool = False,
    out: Path | None = None,
    show: Show | None = None,
    title: str | None = None,
    poll_s: float = 0.5,
    as_json: bool = False,
    files: Mapping[str, list[Path]] | None = None,
    upload_path: str | None = None,
) -> int:
    """Run job ``method`` with ``params`` and present its report; returns the exit code (0, 1 or 2).

    ``out``: write the report's Markdown there (instead of printing it, unless ``show`` is given).
    ``show``: print the result the command's way; the Markdown is then printed only if asked for via ``out``.
    ``as_json``: also print the report (its JSON body) on stdout.
    ``files`` (``--remote`` only): ``{form field: [paths]}`` sent as multipart to ``upload_path`` (the API route
    that stores them for the key and submits the job) instead of ``POST /v1/jobs``.
    """
    if files and not remote:
        raise ValueError("files are uploaded only with remote=True; store them locally first")
    if remote:
        return _run_remote(
            method, params, out=out, show=show, title=title or method, poll_s=poll_s, as_json=as_json,
            files=files, upload_path=upload_path,
        )  # fmt: skip
    return _run_here(method, params, out=out, show=show, title=title or method, poll_s=poll_s, as_json=as_json)


def _present(result: JobResult, out: Path | None, show: Show | None, as_json: bool = False) -> None:
    if as_json:
        typer.echo(json.dumps(result.report.model_dump(mode="json"), indent=1, default=str))
    if show is not None:
        show(result)
    elif out is None and not as_json:
        from rich.markdown import Markdown

        from services.cli.listing import stdout_console

        stdout_console().print(Markdown(result.markdown))
    if out is not None:
        out.write_text(result.markdown, encoding="utf-8")
        console.print(f"report written to {out}")


def _status_line(job_id: str, status: str, detail: str | None) -> None:
    colour = "bold" if status == "succeeded" else "bold red"
    console.print(f"job {job_id}: [{colour}]{status}[/{colour}]" + (f" — {detail}" if detail else ""))


# --- in this process -------------------------------------------------------------
def _run_here(
    method: str,
    params: dict[str, Any],
    *,
    out: Path | None,
    show: Show | None,
    title: str,
    poll_s: float,
    as_json: bool = False,
) -> int:
    from core.db import migrate
    from core.jobs.lifecycle import run_inline
    from core.jobs.registry import InvalidParams, UnknownMethod

    migrate.upgrade()
    try:
        with progress_bar(title) as update:
            job_id, outcome = run_inline(method, params, sink=update)
    except UnknownMethod as exc:
        return fail(str(exc))
    except InvalidParams as exc:
        return fail_invalid(exc.method, exc.errors)
    _status_line(job_id, outcome.status, outcome.error)
    if outcome.status != "succeeded":
        return EXIT_FAILED
    report = _local_report(job_id)
    if report is None:
        return fail(f"job {job_id} succeeded but stored no report", EXIT_FAILED)
    _present(
        JobResult(job_id, report, report.to_markdown(lambda ref: f"artifact:{ref.id}"), _local_artifact),
        out,
        show,
        as_json,
    )
    return EXIT_OK


def _local_report(job_id: str) -> Report | None:
    from core.db import crud
    from core.db.session import session_scope
    from core.jobs.report import Report

    with session_scope() as s:
        row = crud.get_report_for_job(s, job_id=job_id)
        return Report.model_validate(row.body) if row is not None else None


def _local_artifact(artifact_id: str) -> bytes:
    from core.artifacts import get_artifact_store
    from core.db import crud
    from core.db.session import session_scope

    with session_scope() as s:
        row = crud.get_artifact(s, artifact_id=artifact_id)
        if row is None:
            raise LookupError(f"no artifact {artifact_id}")
        sha = row.sha256
    return get_artifact_store().read(sha)


# --- through the API -----------------------------------------------------------
def api_client() -> httpx.Client:
    """An HTTP client of ``settings.api_url`` authenticated with ``PAPERWORKS_API_KEY``."""
    import httpx

    from core.config import get_settings

    s = get_settings()
    if s.api_key is None:
        raise SystemExit("set PAPERWORKS_API_KEY (create one with `paperworks keys create`)")
    return httpx.Client(
        base_url=str(s.api_url), timeout=30.0, headers={"Authorization": f"Bearer {s.api_key.get_secret_value()}"}
    )


def fail_invalid(method: str, errors: list[dict[str, Any]], names: Mapping[str, str] | None = None) -> int:
    """Print invalid params as one sentence per field (``field: what is wrong``); returns exit code 2."""
    from core.jobs.registry import error_sentences

    console.print(f"[red]error:[/red] invalid {method} parameters:")
    for sentence in error_sentences(errors, names):
        console.print(f"  {sentence}", markup=False, highlight=False)
    return EXIT_BAD_INPUT


def describe_error(detail: Any) -> str:
    """An API error body's ``detail`` as text: one sentence per field for invalid input, else its message."""
    from core.jobs.registry import error_sentences

    errors = detail.get("errors") if isinstance(detail, dict) else None
    if isinstance(errors, list) and errors and all(isinstance(e, dict) for e in errors):
        return "\n  ".join(["invalid input:", *error_sentences(errors)])
    if isinstance(detail, dict):  # {"message": ...} without field errors
        return str(detail.get("message") or detail)
    return str(detail)


def _detail(r: httpx.Response) -> str:
    """The error of an API response as text (:func:`describe_error` of its body)."""
    try:
        body = r.json()
    except ValueError:
        return r.text[:500]
    if isinstance(body, dict) and isinstance(body.get("detail"), dict):
        return describe_error(body["detail"])
    if isinstance(body, dict) and isinstance(body.get("errors"), list):  # a request the API could not parse
        return describe_error(body)
    return describe_error(body.get("detail") if isinstance(body, dict) else body)


def _post_job(
    c: httpx.Client,
    method: str,
    params: dict[str, Any],
    files: Mapping[str, list[Path]] | None,
    upload_path: str | None,
) -> httpx.Response:
    """``POST /v1/jobs``, or with files the multipart upload route (params as form fields, lists repeated)."""
    key = uuid.uuid4().hex
    if not files:
        return c.post("/v1/jobs", json={"method": method, "params": params, "idempotency_key": key})
    if upload_path is None:
        raise ValueError(f"{method}: no API route takes these files")
    data: dict[str, Any] = {}
    for k, v in params.items():
        if v is None:
            continue
        if isinstance(v, list | tuple):
            data[k] = [x if isinstance(x, str) else json.dumps(x) for x in v]
        elif isinstance(v, dict):
            data[k] = json.dumps(v)
        elif isinstance(v, bool):
            data[k] = "true" if v else "false"
        else:
            data[k] = str(v)
    parts = [(form, (p.name, p.read_bytes())) for form, paths in files.items() for p in paths]
    return c.post(upload_path, data=data, files=parts, headers={"Idempotency-Key": key})


def _run_remote(
    method: str,
    params: dict[str, Any],
    *,
    out: Path | None,
    show: Show | None,
    title: str,
    poll_s: float,
    as_json: bool = False,
    files: Mapping[str, list[Path]] | None = None,
    upload_path: str | None = None,
) -> int:
    from core.jobs.report import Report

    with api_client() as c:
        r = _post_job(c, method, params, files, upload_path)
        if r.status_code >= 400:
            console.print(f"[red]error {r.status_code}:[/red] {_detail(r)}", highlight=False)
            return EXIT_BAD_INPUT
        job = r.json()
        with progress_bar(f"{title} ({job['id'][:8]})") as update:
            job = follow_remote(c, job, update, poll_s=poll_s)
        _status_line(job["id"], job["status"], job.get("message") or job.get("error"))
        if job["status"] != "succeeded":
            return EXIT_FAILED
        r = c.get(f"/v1/jobs/{job['id']}/report")
        if r.status_code >= 400:
            return fail(f"job {job['id']} succeeded but its report is unavailable: {_detail(r)}", EXIT_FAILED)
        rep = r.json()

        def read(artifact_id: str) -> bytes:
            a = c.get(f"/v1/artifacts/{artifact_id}")
            a.raise_for_status()
            return a.content

        _present(JobResult(job["id"], Report.model_validate(rep["body"]), rep["markdown"], read), out, show, as_json)
    return EXIT_OK


# --- following a remote job: Server-Sent Events, long-poll as the fallback ---------------------
LIVE = ("queued", "running")


def iter_sse(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(event, data)`` pairs from the lines of a ``text/event-stream`` (comments and ids skipped)."""
    event, data = "message", []
    for line in lines:
        if not line:
            if data:
                yield event, "\n".join(data)
            event, data = "message", []
        elif line.startswith(":"):
            continue
        else:
            key, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if key == "event":
                event = value
            elif key == "data":
                data.append(value)
    if data:
        yield event, "\n".join(data)


def follow_remote(
    c: httpx.Client, job: dict[str, Any], update: Callable[[float, str], Any], *, poll_s: float = 0.5
) -> dict[str, Any]:
    """Follow ``job`` until it ends: the SSE stream ``/v1/jobs/{id}/events`` (pushed progress), or
    ``GET /v1/jobs/{id}?wait=`` long-polls when the stream is unavailable. Returns the final job."""
    import httpx

    job_id = job["id"]
    try:
        with c.stream("GET", f"/v1/jobs/{job_id}/events", timeout=httpx.Timeout(30.0, read=None)) as r:
            if r.status_code == 200:
                for event, data in iter_sse(r.iter_lines()):
                    if event in ("progress", "end", "timeout"):
                        job = json.loads(data)
                        update(job.get("progress", 0.0), job.get("message") or job.get("status", ""))
                    if event == "end" or job.get("status") not in LIVE:
                        return job
    except (httpx.HTTPError, ValueError):  # the stream broke: fall back to long-polling
        pass
    while job["status"] in LIVE:
        r = c.get(f"/v1/jobs/{job_id}", params={"wait": 30}, timeout=60)
        if r.status_code == 422:  # a server without long-poll
            time.sleep(poll_s)
            r = c.get(f"/v1/jobs/{job_id}")
        r.raise_for_status()
        job = r.json()
        update(job["progress"], job["message"] or job["status"])
    return job


# --- batches -------------------------------------------------------------------------------
BATCH_CHUNK = 1000


def read_batch(path: Path, *, fresh: bool = False) -> list[dict[str, Any]]:
    """The jobs of a JSON Lines file: one ``{"method", "params", "idempotency_key"?}`` object per line.

    A line without a key gets one derived from the file's line and content, so submitting the same
    file again returns the same jobs instead of running them twice (``fresh``: new keys).
    """
    import hashlib

    items = []
    salt = uuid.uuid4().hex if fresh else ""
    from services.api.uploads import text_or_error

    try:
        text = text_or_error(path.read_bytes(), path.name, "a JSON Lines file")
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise typer.BadParameter(f"{path}:{n}: not JSON: {exc}") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("method"), str):
            raise typer.BadParameter(f'{path}:{n}: expected {{"method": ..., "params": {{...}}}}')
        unknown = set(obj) - {"method", "params", "idempotency_key"}
        if unknown:
            raise typer.BadParameter(f"{path}:{n}: unknown keys {sorted(unknown)}")
        digest = hashlib.sha256(f"{salt}{n}:{line.strip()}".encode()).hexdigest()[:32]
        items.append(
            {
                "method": obj["method"],
                "params": obj.get("params") or {},
                "idempotency_key": obj.get("idempotency_key") or f"batch-{digest}",
            }
        )
    if not items:
        raise typer.BadParameter(f"{path}: no jobs")
    return items


def run_batch(path: Path, *, out: Path | None = None, follow: bool = True, fresh: bool = False) -> int:
    """Submit a JSONL file through ``POST /v1/jobs:batch`` (chunks of 1 000) and wait for every job.

    Prints a line per rejected item and a summary; ``out`` receives one JSON line per item (its
    job's final state, or the error). Exit code: 0 all succeeded, 1 some failed, 2 some rejected.
    """
    items = read_batch(path, fresh=fresh)
    results: list[dict[str, Any]] = []
    with api_client() as c:
        for i in range(0, len(items), BATCH_CHUNK):
            r = c.post("/v1/jobs:batch", json={"jobs": items[i : i + BATCH_CHUNK]}, timeout=300)
            if r.status_code >= 400:
                console.print(f"[red]error {r.status_code}:[/red] {_detail(r)}", highlight=False)
                return EXIT_BAD_INPUT
            for item in r.json()["items"]:
                item["index"] += i
                results.append(item)
        rejected = [it for it in results if it["status"] >= 400]
        for it in rejected:
            console.print(
                f"[red]line item {it['index'] + 1} rejected ({it['status']}):[/red] {describe_error(it['error'])}",
                highlight=False,
            )
        created = sum(it["status"] == 201 for it in results)
        console.print(
            f"{len(results)} items: {created} submitted, {len(results) - created - len(rejected)} already "
            f"submitted earlier (same idempotency key), {len(rejected)} rejected"
        )
        jobs = {it["job"]["id"]: it["job"] for it in results if it.get("job")}
        if follow and jobs:
            with progress_bar(f"batch {path.name}") as update:
                done = 0
                for job_id in list(jobs):
                    job = jobs[job_id]
                    while job["status"] in LIVE:
                        r = c.get(f"/v1/jobs/{job_id}", params={"wait": 30}, timeout=60)
                        r.raise_for_status()
                        job = r.json()
                    jobs[job_id] = job
                    done += 1
                    update(done / len(jobs), f"{done}/{len(jobs)} ended")
        counts: dict[str, int] = {}
        for job in jobs.values():
            counts[job["status"]] = counts.get(job["status"], 0) + 1
        console.print("jobs: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    if out is not None:
        with out.open("w", encoding="utf-8") as fh:
            for it in results:
                job = jobs.get(it["job"]["id"]) if it.get("job") else None
                fh.write(json.dumps({"index": it["index"], "status": it["status"], "job": job, "error": it["error"]}))
                fh.write("\n")
        console.print(f"results written to {out}")
    if rejected:
        return EXIT_BAD_INPUT
    return EXIT_OK if not follow or all(j["status"] == "succeeded" for j in jobs.values()) else EXIT_FAILED
