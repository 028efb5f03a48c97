"""Fixtures for the selective-scan kernel tests.

``triton_scan`` calls the Triton kernel's forward: compiled on CUDA when a GPU is present,
otherwise under ``TRITON_INTERPRET=1`` in one child process per test session (see
``interp_server.py``; the same arrangement as the any4 kernel tests).
"""

from __future__ import annotations

import io
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import torch

SERVER = Path(__file__).with_name("interp_server.py")


class KernelError(RuntimeError):
    """The kernel wrapper raised (message carries the original type and text)."""


class InterpreterProcess:
    """A child process running the kernel in the Triton interpreter."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __call__(self, *args, **kwargs) -> tuple[torch.Tensor, torch.Tensor]:
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


def _on_cuda(fn: Callable[..., tuple[torch.Tensor, torch.Tensor]]) -> Callable[..., tuple[torch.Tensor, torch.Tensor]]:
    def call(*args, **kwargs):
        def move(v):
            return v.cuda() if isinstance(v, torch.Tensor) else v

        try:
            y, h = fn(*[move(a) for a in args], **{k: move(v) for k, v in kwargs.items()})
        except (ValueError, TypeError) as exc:
            raise KernelError(f"{type(exc).__name__}: {exc}") from exc
        return y.cpu(), h.cpu()

    return call


@pytest.fixture(autouse=True)
def _one_thread():
    """Small tensors: one torch thread (two were much slower on the busy 2-core machine)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture(scope="session")
def triton_scan() -> Iterator[Callable[..., tuple[torch.Tensor, torch.Tensor]]]:
    """``triton_scan(u, delta, A, B, C, D, z, bias, softplus, out=...)`` → (y, h_last) on the CPU."""
    if torch.cuda.is_available():
        from kernels.selective_scan.kernel import selective_scan_triton_forward

        yield _on_cuda(selective_scan_triton_forward)
        return
    proc = InterpreterProcess()
    try:
        yield proc
    finally:
        proc.close()
