"""any4 benchmark: the quantized linear layer against dense layers, measured in one run.

CPU (always): decode shapes M = 1, K = N ∈ {576, 1536, 2048}; a dense fp32
``nn.Linear`` against ``QuantLinear`` (any4, g = 64) in its two CPU modes —
``cached`` (dequantize once, fp32 GEMV) and ``dequant`` (dequantize on every call,
packed weights only in memory) — plus the one-off dequantization. Times: minimum over
interleaved rounds of ``torch.utils.benchmark`` blocked-autorange medians.

GPU (only when CUDA is present): correctness first — the Triton kernel against its
dequantize-then-matmul reference in bf16 — then M×K · K×K, M ∈ {1, 16} (decode and a
small batch), K = N ∈ {1024, 2048, 4096}, the Triton kernel (row LUT and global LUT,
table gathered from memory or from registers) against ``torch.matmul`` in bf16, with the
speed-up next to tinygemm's published ≈2.3× at K = 4096 (A5000). The register-resident
row LUT vs the memory gather (the kernel's default) sit side by side in one run, with
their ratio: ``lut_in_registers`` becomes the default only if it is clearly faster there.

    python bench/any4.py [--out docs/bench/any4.md] [--threads N]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from methods.any4.modules import QuantLinear  # noqa: E402
from methods.any4.quantizers import AnyQuantizer  # noqa: E402
from paperworks_kernels.any4_gemm import any4_gemm_reference, dequantize  # noqa: E402

CPU_SIZES = (576, 1536, 2048)
GPU_SIZES = (1024, 2048, 4096)
GPU_ROWS = (1, 16)
TINYGEMM_ANY4_4096 = 2.3


def _interleaved_ms(fns: dict, rounds: int = 7, min_run_time: float = 0.25) -> dict[str, float]:
    """Per variant, the minimum over ``rounds`` interleaved rounds of a blocked-autorange median (ms).

    The cores are shared with other jobs; interleaving exposes every variant to the same
    load and the minimum keeps the least disturbed round.
    """
    from torch.utils import benchmark

    best = {name: float("inf") for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t = benchmark.Timer(stmt="fn()", globals={"fn": fn}).blocked_autorange(min_run_time=min_run_time).median
            best[name] = min(best[name], t * 1e3)
    return best


def cpu_rows(group_size: int = 64) -> list[list]:
    rows = []
    for k in CPU_SIZES:
        gen = torch.Generator().manual_seed(k)
        dense = torch.nn.Linear(k, k, bias=False)
        with torch.no_grad():
            dense.weight.copy_(torch.randn(k, k, generator=gen) * 0.02)
        qw = AnyQuantizer(4).quantize(dense.weight, group_size)
        cached = QuantLinear.from_quantized(qw, cpu_mode="cached")
        ondemand = QuantLinear.from_quantized(qw, cpu_mode="dequant")
        x = torch.randn(1, k, generator=gen)
        with torch.no_grad():
            ref = x @ qw.dequantize().t()
            for layer in (cached, ondemand):  # correctness first
                torch.testing.assert_close(layer(x), ref, rtol=1e-5, atol=1e-5)
            t = _interleaved_ms(
                {
                    "dense": lambda: dense(x),
                    "cached": lambda: cached(x),
                    "dequant": lambda: ondemand(x),
                    "once": lambda: cached.dequantized_weight(),
                }
            )
            t_dense, t_cached, t_deq, t_once = t["dense"], t["cached"], t["dequant"], t["once"]
        mem = {
            "dense": k * k * 4,
            "packed": cached.packed.numel() + cached.lut.numel() * 4 + cached.scales_and_zeros.numel() * 4,
        }
        rows.append(
            [
                f"1×{k}·{k}×{k}",
                round(t_dense, 4),
                round(t_cached, 4),
                round(t_cached / t_dense, 2),
                round(t_deq, 3),
                round(t_deq / t_dense, 1),
                round(t_once, 3),
                f"{mem['dense'] / 2**20:.2f} / {mem['packed'] / 2**20:.2f}",
            ]
        )
    return rows


def gpu_rows() -> tuple[list[list], list[str]]:
    import triton.testing

    from paperworks_kernels.any4_gemm import make_scales_and_zeros, pack_nibbles
    from paperworks_kernels.any4_gemm.kernel import any4_gemm

    rows, notes = [], []
    dev = torch.device("cuda")
    for k in GPU_SIZES:
        gen = torch.Generator().manual_seed(k)
        g = 128
        codes = torch.randint(0, 16, (k, k), generator=gen)
        packed = pack_nibbles(codes).to(dev)
        sz = make_scales_and_zeros(
            torch.rand(k, k // g, generator=gen) * 0.01 + 1e-3, torch.randn(k, k // g, generator=gen) * 0.01
        ).to(dev, torch.bfloat16)
        luts = {
            "row LUT": (torch.randn(k, 16, generator=gen)).to(dev, torch.bfloat16),
            "global LUT (nf4 as LUT)": torch.randn(16, generator=gen).to(dev, torch.bfloat16),
        }
        w_dense = dequantize(packed, luts["row LUT"], sz, g).to(torch.bfloat16)
        for m in GPU_ROWS:
            x = torch.randn(m, k, generator=gen).to(dev, torch.bfloat16)
            t_mm = triton.testing.do_bench(lambda x=x: torch.matmul(x, w_dense.t()))
            for name, lut in luts.items():
                times = {}
                for regs in (False, True):
                    try:
                        y = any4_gemm(x, packed, lut, sz, g, lut_in_registers=regs).float()
                        ref = any4_gemm_reference(x.float(), packed, lut.float(), sz.float(), g)
                        bad = int((~torch.isclose(y, ref, rtol=1.6e-2, atol=1e-1 * ref.abs().max().item())).sum())
                        t = triton.testing.do_bench(
                            lambda x=x, lut=lut, regs=regs: any4_gemm(x, packed, lut, sz, g, lut_in_registers=regs)
                        )
                        times[regs] = t
                        rows.append(
                            [
                                f"{m}×{k}·{k}×{k}",
                                name,
                                "registers" if regs else "memory",
                                bad,
                                round(t_mm * 1e3, 1),
                                round(t * 1e3, 1),
                                round(t_mm / t, 2),
                                round(times[False] / t, 2) if regs and False in times else "",
                            ]
                        )
                    except Exception as exc:  # report, keep measuring the other variants
                        notes.append(f"M={m} K={k} {name} lut_in_registers={regs}: {type(exc).__name__}: {exc}"[:300])
    return rows, notes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "any4.md")
    ap.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's).")
    args = ap.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    cpu = cpu_rows()
    lines = [
        "# any4 benchmark",
        "",
        f"Measured by `python bench/any4.py{' --threads ' + str(args.threads) if args.threads else ''}` in one run "
        f"on {platform.platform()} ({platform.processor() or platform.machine()}), torch {torch.__version__}, "
        f"{torch.get_num_threads()} intra-op thread(s). The machine's 2 cores were shared with other jobs: "
        "each time is the minimum over 7 interleaved rounds of a `torch.utils.benchmark` blocked-autorange "
        "median, so all variants of a row face the same load; absolute times stay noisy.",
        "",
        "## CPU: decode GEMV, quantized linear layer vs dense fp32 `nn.Linear`",
        "",
        "any4 weights, g = 64, M = 1 activation row. `cached` = dequantize once, then an fp32 GEMV (the "
        "default CPU path of `QuantLinear`); `dequant` = dequantize the packed weight on every call.",
        "",
        "| shape | dense fp32 ms | QuantLinear cached ms | cached / dense | QuantLinear dequant ms | "
        "dequant / dense | one-off dequantize ms | weight MiB dense / packed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in cpu]
    lines += [
        "",
        "Reading: on the CPU the fastest correct path is `cached`, at dense speed (ratio ≈ 1) because it is "
        "the same fp32 GEMV, while keeping an fp32 copy of the weight. Dequantizing on every call keeps only "
        "the packed 4-bit form (~7× less memory) but costs the dequantization each time, which is far slower "
        "than the memory-bound GEMV it feeds. The Triton kernel runs on a CPU only in the interpreter (tests), "
        "which is not a performance path.",
        "",
    ]
    lines += ["## GPU: Triton any4 kernel vs `torch.matmul` (bf16), M×K · K×K, M ∈ {1, 16}", ""]
    if torch.cuda.is_available():
        rows, notes = gpu_rows()
        lines += [
            f"Device: {torch.cuda.get_device_name()}; g = 128; times from `triton.testing.do_bench` (µs). "
            "Correctness first: `bad` counts outputs outside bf16 tolerance of the fp32 reference.",
            "",
            "| shape | table | lookup | bad | torch.matmul bf16 µs | Triton any4 µs | speed-up vs matmul | "
            "memory / registers time |",
            "|---|---|---|---|---|---|---|---|",
        ]
        lines += ["| " + " | ".join(str(v) for v in r) + " |" for r in rows]
        lines += [
            "",
            f"tinygemm's published any4 speed-up at K = 4096 (A5000): ≈{TINYGEMM_ANY4_4096}×. The last column is the "
            "memory-gather time over the register-resident time of the same shape and table (> 1: registers faster); "
            "the kernel default (`lut_in_registers=False`) changes only if that ratio is clearly above 1 everywhere.",
        ]
        lines += [f"- {n}" for n in notes]
    else:
        lines += [
            "**Not run here: no GPU was available to this run** (`torch.cuda.is_available()` is False). "
            "On a CUDA machine the same command measures the kernel, correctness first, at M ∈ {1, 16} and "
            "K = N ∈ {1024, 2048, 4096}, with the register-resident row LUT beside the memory gather, and fills "
            f"this section; tinygemm's published any4 speed-up at K = 4096 (A5000) is ≈{TINYGEMM_ANY4_4096}×, "
            "a simple Triton kernel may be lower. Because the two lookups could not be timed, the kernel keeps "
            "the memory gather as its default (`lut_in_registers=False`); the interpreter on a CPU is not a "
            "performance path."
        ]
    lines += ["", f"Total benchmark time: {time.perf_counter() - t0:.0f} s."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
