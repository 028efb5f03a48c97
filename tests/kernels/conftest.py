"""Shared fixtures for the Triton kernel tests.

``kernel_runner("module:function")`` gives a callable that runs a kernel wrapper: compiled on
CUDA when a GPU is present (inputs moved there, outputs brought back to the CPU), otherwise under
``TRITON_INTERPRET=1`` in one child process per kernel and test session (``interp_server.py``; the
variable must be set before Triton is imported, so it is never set in the pytest process itself).
A wrapper that raises surfaces as :class:`KernelError` (a RuntimeError carrying the original type
and message).
"""

from __future__ import annotations

import importlib
import io
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

SERVER = Path(__file__).with_name("interp_server.py")


class KernelError(RuntimeError):
    """The kernel wrapper raised (message carries the original type and text)."""


class InterpreterProcess:
    """A child process running one kernel wrapper in the Triton interpreter."""

    def __init__(self, target: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(SERVER), target], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )

    def __call__(self, *args, **kwargs) -> Any:
        buf = io.BytesIO()
        torch.save({"args": list(args), "kwargs": kwargs}, buf)
        data = buf.getvalue()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
        self.proc.stdin.flush()
        head = self.proc.stdout.read(8)
        if len(head) < 8:
            raise RuntimeError(f"interpreter process died (rc={self.proc.poll()})")
        (n,) = struct.unpack("<Q", head)
        reply = torch.load(io.BytesIO(self.proc.stdout.read(n)))
        if not reply["ok"]:
            raise KernelError(reply["error"])
        return reply["out"]

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _to(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple | list):
        return type(value)(_to(v, device) for v in value)
    return value


def _on_cuda(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args, **kwargs):
        try:
            out = fn(*_to(list(args), "cuda"), **{k: _to(v, "cuda") for k, v in kwargs.items()})
        except (ValueError, TypeError) as exc:
            raise KernelError(f"{type(exc).__name__}: {exc}") from exc
        return _to(out, "cpu")

    return call


@pytest.fixture(scope="session")
def kernel_runner() -> Iterator[Callable[[str], Callable[..., Any]]]:
    """``kernel_runner("pkg.module:function")`` → a callable returning the kernel's output on the CPU."""
    procs: dict[str, InterpreterProcess] = {}

    def get(target: str) -> Callable[..., Any]:
        if torch.cuda.is_available():
            module, name = target.split(":")
            return _on_cuda(getattr(importlib.import_module(module), name))
        if target not in procs:
            procs[target] = InterpreterProcess(target)
        return procs[target]

    yield get
    for p in procs.values():
        p.close()


@pytest.fixture(scope="session")
def interpreted() -> bool:
    """True when the kernels run in the Triton interpreter (no CUDA)."""
    return not torch.cuda.is_available()


@pytest.fixture(scope="session")
def cpu_kernels():
    """The compiled CPU kernel library; tests that need it skip (with the reason) on a machine without a compiler."""
    from paperworks_kernels.cpu import library, status

    lib = library()
    if lib is None:
        pytest.skip(f"fused CPU kernels unavailable: {status().detail}")
    return lib
