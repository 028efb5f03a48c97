"""The CLI's one ``--device``/``--amp`` pair.

* every generated command of a torch job (a method not in ``tests.test_devices.NO_TORCH``) takes
  ``--device`` and ``--amp`` (from ``DeviceParams``: the same choices and defaults everywhere) and
  passes them on only when given (``jobrun.device_params`` does the same for hand-written code);
* ``paperworks methods`` shows which methods take a device;
* a cuda job refused by the API (no GPU worker declared) prints the API's sentence, exit 2;
  run here without CUDA it fails at once, saying so, exit 1.
"""

from __future__ import annotations

import contextlib
import io
import re
import typing

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from services.cli import jobrun


def _torch_free() -> set[str]:
    from tests.test_devices import NO_TORCH

    return NO_TORCH


def test_every_torch_job_command_takes_the_shared_device_and_amp_options():
    from core.device import AmpName, DeviceName
    from core.jobs import list_methods
    from services.cli.entries import group_of

    torch_jobs = [
        m for m in list_methods() if m.name not in _torch_free() and "device" in m.params_model.model_fields
    ]  # which torch jobs take DeviceParams is tests/test_devices.py's business
    assert len(torch_jobs) >= 15
    for spec in torch_jobs:
        name, cmd = group_of(spec.package).command_for(spec.name)
        opts = {p.name: p for p in cmd.params}
        where = f"paperworks ... {name} ({spec.name})"
        assert "device" in opts and "amp" in opts, f"{where}: no --device/--amp"
        assert opts["device"].opts == ["--device"] and opts["amp"].opts == ["--amp"], where
        assert set(opts["device"].type_descriptor.choices) == set(typing.get_args(DeviceName)), where
        assert set(opts["amp"].type_descriptor.choices) == set(typing.get_args(AmpName)), where
        assert opts["device"].default == "cpu" and opts["amp"].default == "off", where


def test_device_params_keeps_cpu_runs_unchanged():
    assert jobrun.device_params() == {}
    assert jobrun.device_params("cpu", "off") == {}
    assert jobrun.device_params("cuda", "off") == {"device": "cuda"}
    assert jobrun.device_params("auto", "bf16") == {"device": "auto", "amp": "bf16"}
    with pytest.raises(typer.BadParameter, match="--device"):
        jobrun.device_params("tpu")
    with pytest.raises(typer.BadParameter, match="--amp"):
        jobrun.device_params("cpu", "fp16")


def test_a_command_passes_device_and_amp_to_its_job(monkeypatch):
    from services.cli import entries
    from services.cli.main import app

    seen: list[dict] = []
    monkeypatch.setattr(entries, "run_job", lambda method, params, **kw: seen.append(params) or 0)
    runner = CliRunner()
    assert runner.invoke(app, ["lsa", "synthetic", "--steps", "3"]).exit_code == 0
    r = runner.invoke(app, ["lsa", "synthetic", "--steps", "3", "--device", "cuda", "--amp", "bf16"])
    assert r.exit_code == 0, r.output
    assert "device" not in seen[0] and "amp" not in seen[0]
    assert seen[1]["device"] == "cuda" and seen[1]["amp"] == "bf16" and seen[1]["steps"] == 3
    bad = runner.invoke(app, ["lsa", "synthetic", "--device", "tpu"])
    assert bad.exit_code == 2 and len(seen) == 2
    help_text = re.sub(r"\s+", " ", runner.invoke(app, ["lsa", "synthetic", "--help"]).output)
    assert "--device" in help_text and "--amp" in help_text


# --- the generic commands -----------------------------------------------------------------------


@pytest.fixture
def torch_method():
    from pydantic import Field

    from core.device import DeviceParams, device_provenance, resolve_device
    from core.jobs import Report, register_method, registry_snapshot

    class Params(DeviceParams):
        x: int = Field(0, ge=0)

    def run(params: Params, progress) -> Report:
        dev = resolve_device(params.device)
        report = Report(title="cli device test", summary=str(dev))
        report.metrics.update(device_provenance(dev, params.amp))
        return report

    with registry_snapshot():
        register_method("test_cli.torch_job", title="t", queue="cpu", params=Params)(run)
        yield "test_cli.torch_job"


def test_methods_lists_the_devices_a_method_takes(torch_method, monkeypatch):
    from services.cli import main

    r = CliRunner().invoke(main.app, ["methods"])
    assert r.exit_code == 0
    rows = {line.split()[1]: line for line in r.stdout.splitlines() if line.startswith("│")}
    assert "cpu|auto|cuda" in rows[torch_method]
    assert "cpu|auto|cuda" not in rows["diag.sleep"]


@pytest.fixture
def out_buf(monkeypatch) -> io.StringIO:
    buf = io.StringIO()
    monkeypatch.setattr(jobrun, "console", Console(file=buf, force_terminal=False, width=400))
    from services.cli import progress

    monkeypatch.setattr(progress, "console", Console(file=io.StringIO(), force_terminal=False))
    return buf


def test_cuda_refused_remotely_prints_the_sentence(torch_method, out_buf, api_client, monkeypatch, settings):
    from core.jobs.routing import NO_GPU_WORKER
    from services.api import deps

    sent: list = []
    monkeypatch.setattr(deps, "enqueue", sent.append)
    monkeypatch.setattr(jobrun, "api_client", lambda: contextlib.nullcontext(api_client))
    monkeypatch.setattr(settings, "gpu_workers", False)
    assert jobrun.run_job(torch_method, {"device": "cuda"}, remote=True) == jobrun.EXIT_BAD_INPUT
    assert "error 422" in out_buf.getvalue() and NO_GPU_WORKER in out_buf.getvalue() and sent == []


def test_cuda_here_without_cuda_fails_at_once_saying_so(torch_method, out_buf, monkeypatch):
    import core.device

    monkeypatch.setattr(core.device, "cuda_available", lambda: False)
    assert jobrun.run_job(torch_method, {"device": "cuda"}) == jobrun.EXIT_FAILED
    text = out_buf.getvalue()
    assert "failed" in text and "this worker has no CUDA" in text
    assert jobrun.run_job(torch_method, {"device": "auto"}) == jobrun.EXIT_OK
