"""Runs one Triton kernel wrapper under the Triton interpreter in a child process.

Usage: ``python interp_server.py MODULE:FUNCTION`` (e.g. ``paperworks_kernels.any4_gemm.kernel:any4_gemm``).
Started by ``tests/kernels/conftest.py`` on machines without CUDA. ``TRITON_INTERPRET=1`` must be
set before Triton is imported, and setting it in the pytest process would leak into every other
test, so the kernel runs here instead. Protocol on stdin/stdout: 8-byte little-endian length, then
a ``torch.save`` payload; requests are ``{"args": [...], "kwargs": {...}}``, replies
``{"ok": True, "out": <the function's result>}`` or ``{"ok": False, "error": "Type: message"}``.
"""

import importlib
import io
import os
import struct
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

_reply = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)  # anything printed goes to stderr, the reply channel stays clean

import torch  # noqa: E402

_module, _name = sys.argv[1].split(":")
kernel = getattr(importlib.import_module(_module), _name)


def _read() -> dict | None:
    head = sys.stdin.buffer.read(8)
    if len(head) < 8:
        return None
    (n,) = struct.unpack("<Q", head)
    return torch.load(io.BytesIO(sys.stdin.buffer.read(n)))


def _write(obj: dict) -> None:
    buf = io.BytesIO()
    torch.save(obj, buf)
    data = buf.getvalue()
    _reply.write(struct.pack("<Q", len(data)) + data)
    _reply.flush()


while (req := _read()) is not None:
    try:
        _write({"ok": True, "out": kernel(*req["args"], **req["kwargs"])})
    except Exception as exc:  # reported to the test, which decides
        _write({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
