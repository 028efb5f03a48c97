"""Selective-scan benchmark: the sequential reference, the chunked PyTorch scan and the Triton kernel.

CPU (always): Mamba-1 shapes b = 1, d = 32, N = 8 (FourierMamba-Tiny's level-1 width) for
L ∈ {64, 256, 1024, 4096}; forward tokens/s of the sequential fp32 reference, the chunked
version and the Triton kernel under ``TRITON_INTERPRET=1`` (the interpreter is a correctness
tool: its numbers say how slow it is, not how fast the kernel is; L ≤ 1024 only), plus
forward+backward tokens/s of the two PyTorch versions (what training uses). Every timed output
is checked against the reference first (max-abs error in the table).

GPU (only when CUDA is present): b = 8, d = 256, N = 16 for L ∈ {1024, 4096, 16384}; the
compiled Triton kernel against the chunked PyTorch scan on the GPU (and the reference at the
smallest L), tokens/s from CUDA-event timing.

    python bench/selective_scan.py [--out docs/bench/selective_scan.md] [--threads N]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")  # before Triton is imported

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from paperworks_kernels.selective_scan import selective_scan_chunked, selective_scan_reference  # noqa: E402

CPU_L = (64, 256, 1024, 4096)
INTERP_MAX_L = 1024
GPU_L = (1024, 4096, 16384)


def operands(b: int, d: int, L: int, n: int, device: str = "cpu", grad: bool = False) -> dict:
    g = torch.Generator().manual_seed(L)
    ops = {
        "u": torch.randn(b, d, L, generator=g),
        "delta": torch.randn(b, d, L, generator=g) * 0.5,
        "A": -torch.exp(torch.rand(d, n, generator=g) * 2),
        "B": torch.randn(b, n, L, generator=g),
        "C": torch.randn(b, n, L, generator=g),
        "D": torch.randn(d, generator=g),
        "z": torch.randn(b, d, L, generator=g),
        "delta_bias": torch.randn(d, generator=g) * 0.5,
    }
    return {k: v.to(device).requires_grad_(grad and v.is_floating_point()) for k, v in ops.items()}


def best_seconds(fn, repeats: int, sync=lambda: None) -> float:
    fn()  # warm-up (compilation, caches)
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        sync()
        best = min(best, time.perf_counter() - t)
    return best


def cpu_rows() -> list[list]:
    from paperworks_kernels.selective_scan.kernel import selective_scan_triton_forward

    rows = []
    b, d, n = 1, 32, 8
    for L in CPU_L:
        ops = operands(b, d, L, n)
        ref = selective_scan_reference(**ops, delta_softplus=True)
        fns = {
            "reference": lambda o=ops: selective_scan_reference(**o, delta_softplus=True),
            "chunked": lambda o=ops: selective_scan_chunked(**o, delta_softplus=True),
        }
        if L <= INTERP_MAX_L:
            fns["triton (interpreter)"] = lambda o=ops: selective_scan_triton_forward(**o, delta_softplus=True)[0]
        for name, fn in fns.items():
            err = float((fn() - ref).abs().max())
            sec = best_seconds(fn, 3 if L <= 1024 else 2)
            rows.append([L, name, "forward", b * L / sec, err])
        for name, impl in (("reference", selective_scan_reference), ("chunked", selective_scan_chunked)):
            gops = operands(b, d, L, n, grad=True)

            def step(o=gops, f=impl):
                f(**o, delta_softplus=True).square().sum().backward()

            sec = best_seconds(step, 2)
            rows.append([L, name, "forward+backward", b * L / sec, ""])
    return rows


def gpu_rows() -> list[list]:
    from paperworks_kernels.selective_scan.kernel import selective_scan_triton_forward

    rows = []
    b, d, n = 8, 256, 16
    sync = torch.cuda.synchronize
    for L in GPU_L:
        ops = operands(b, d, L, n, device="cuda")
        chunked = selective_scan_chunked(**ops, delta_softplus=True)
        fns = {
            "triton": lambda o=ops: selective_scan_triton_forward(**o, delta_softplus=True)[0],
            "chunked (torch, GPU)": lambda o=ops: selective_scan_chunked(**o, delta_softplus=True),
        }
        if L == GPU_L[0]:
            fns["reference (torch loop, GPU)"] = lambda o=ops: selective_scan_reference(**o, delta_softplus=True)
        for name, fn in fns.items():
            err = float((fn() - chunked).abs().max())
            sec = best_seconds(fn, 10, sync)
            rows.append([L, name, b * L / sec, err])
    return rows


def table(columns: list[str], rows: list[list]) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:,.0f}" if v >= 100 else f"{v:.2g}"
        return str(v)

    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(fmt(v) for v in r) + " |" for r in rows]
    return "\n".join(out)


def main(out: Path, threads: int) -> None:
    if threads:
        torch.set_num_threads(threads)
    lines = [
        "# Selective scan benchmark",
        "",
        f"Generated by `python bench/selective_scan.py` on {platform.machine()} {platform.system()}, "
        f"torch {torch.__version__}, {torch.get_num_threads()} thread(s), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. "
        "The CPU is shared with other jobs: the numbers are best-of-N wall times, comparable within a table only.",
        "",
        "## CPU (b = 1, d = 32, N = 8, fp32, with D, z, Δ bias and softplus)",
        "",
        "Tokens/s = b·L / best wall time. `max |err|` is against the sequential reference.",
        "",
        table(["L", "implementation", "pass", "tokens/s", "max abs err vs reference"], cpu_rows()),
        "",
        "The Triton row runs the real kernel in Triton's interpreter (NumPy, one program at a time); it "
        "checks correctness on CPU and says nothing about GPU speed.",
        "",
        "## GPU",
        "",
    ]
    if torch.cuda.is_available():
        lines += [
            f"{torch.cuda.get_device_name()}; b = 8, d = 256, N = 16, fp32; tokens/s by best of 10 synchronised runs; "
            "`max abs err` against the chunked scan.",
            "",
            table(["L", "implementation", "tokens/s", "max abs err"], gpu_rows()),
        ]
    else:
        lines += ["No GPU on the machine that generated this file: the GPU table is left for a machine with one."]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(out.read_text())


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "selective_scan.md")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    main(args.out, args.threads)
