"""Fixtures for the any4 GEMM kernel tests.

``gemm`` calls the Triton kernel: compiled on CUDA when a GPU is present, otherwise
under ``TRITON_INTERPRET=1`` in one child process per test session (the variable must
be set before Triton is imported, so it is never set in the pytest process itself and
cannot leak into unrelated tests).
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

    def __call__(self, *args, **kwargs) -> torch.Tensor:
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


def _on_cuda(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    def call(*args, **kwargs):
        def move(v):
            return v.cuda() if isinstance(v, torch.Tensor) else v

        try:
            return fn(*[move(a) for a in args], **{k: move(v) for k, v in kwargs.items()}).cpu()
        except (ValueError, TypeError) as exc:
            raise KernelError(f"{type(exc).__name__}: {exc}") from exc

    return call


@pytest.fixture(scope="session")
def gemm() -> Iterator[Callable[..., torch.Tensor]]:
    """``gemm(x, packed, lut, scales_and_zeros, g, **kw)`` → the kernel's output on the CPU."""
    if torch.cuda.is_available():
        from kernels.any4_gemm.kernel import any4_gemm

        yield _on_cuda(any4_gemm)
        return
    proc = InterpreterProcess()
    try:
        yield proc
    finally:
        proc.close()


@pytest.fixture(scope="session")
def interpreted() -> bool:
    """True when the kernel runs in the Triton interpreter (no CUDA)."""
    return not torch.cuda.is_available()
