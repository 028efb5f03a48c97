"""Where a result was computed: one provenance dict and the one line every report prints from it.

A results report says on what it ran, in the same words everywhere::

    from core.provenance import provenance, provenance_line

    report.metrics["provenance"] = provenance(dev, params.amp, threads=params.threads)
    report.add_section("Setup", f"- {provenance_line(dev, params.amp, threads=params.threads)}")

gives ``Machine: x86_64 Linux, 2 CPUs shared with other jobs (1-min load average 3.1), Python 3.11.9,
torch 2.13.0 with 2 thread(s), commit 1a2b3c4; device cpu, float32.`` The device part comes from
:func:`core.device.device_provenance` (device, compute dtype, GPU name) when a device is given.

torch is not imported here: its version is read from the installed distribution, and its thread count
only when the process already uses torch (or when ``threads`` is given).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import platform
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@functools.cache
def git_commit() -> str | None:
    """The short commit of the checkout this code runs from (``None`` outside a git checkout)."""
    if not (REPO / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _torch_version() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def provenance(device: Any = None, amp: str = "off", *, threads: int | None = None) -> dict[str, Any]:
    """The machine, software and (with ``device``) accelerator a result was computed on.

    Keys: ``machine``, ``system``, ``processor``, ``cpus``, ``load_1min``, ``python``, ``torch``,
    ``torch_threads`` (``threads`` if given, else torch's current count when torch is loaded, else
    ``None``), ``commit``; with ``device`` also :func:`core.device.device_provenance`'s ``device``,
    ``dtype`` and (on CUDA) ``gpu``.
    """
    torch = sys.modules.get("torch")
    if threads is None and torch is not None:
        threads = int(torch.get_num_threads())
    try:
        load = round(os.getloadavg()[0], 1)
    except OSError:  # pragma: no cover - no load average on this platform
        load = None
    out: dict[str, Any] = {
        "machine": platform.machine(),
        "system": platform.system(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "load_1min": load,
        "python": platform.python_version(),
        "torch": _torch_version(),
        "torch_threads": threads,
        "commit": git_commit(),
    }
    if device is not None:
        from core.device import device_provenance

        out.update(device_provenance(device, amp))
    return out


def format_provenance(info: Mapping[str, Any]) -> str:
    """The one provenance line of a :func:`provenance` dict (keys it lacks are left out)."""
    machine = " ".join(str(info[k]) for k in ("machine", "system") if info.get(k))
    parts = [f"Machine: {machine or 'unknown'}"]
    if info.get("cpus"):
        cpus = f"{info['cpus']} CPUs shared with other jobs"
        if info.get("load_1min") is not None:
            cpus += f" (1-min load average {info['load_1min']:.1f})"
        parts.append(cpus)
    if info.get("python"):
        parts.append(f"Python {info['python']}")
    if info.get("torch"):
        threads = info.get("torch_threads")
        parts.append(f"torch {info['torch']}" + (f" with {threads} thread(s)" if threads else ""))
    if info.get("commit"):
        parts.append(f"commit {info['commit']}")
    line = ", ".join(parts)
    if info.get("device"):
        where = f"{info['device']} ({info['gpu']})" if info.get("gpu") else str(info["device"])
        line += f"; device {where}" + (f", {info['dtype']}" if info.get("dtype") else "")
    return line + "."


def provenance_line(device: Any = None, amp: str = "off", *, threads: int | None = None) -> str:
    """:func:`format_provenance` of :func:`provenance` now."""
    return format_provenance(provenance(device, amp, threads=threads))


__all__ = ["format_provenance", "git_commit", "provenance", "provenance_line"]
