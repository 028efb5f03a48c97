"""Triton LUT-GEMM for any4-packed weights: ``Y (M×N) = X (M×K) · Ŵᵀ`` (spec §6.3).

Each program owns a ``BLOCK_M × BLOCK_N`` tile of Y and walks K in ``BLOCK_K``
steps (``BLOCK_K`` divides the group size g, so one step sits inside one group):

1. load ``BLOCK_N × BLOCK_K/2`` packed bytes; the low nibbles are the codes of the
   even columns, the high nibbles those of the odd columns (see ``packing.py``);
2. look each code up in the table: a per-row LUT (``N×16``, the any4 default) or
   one global LUT (nf4/fp4/int4 as a LUT). With ``lut_in_registers=True`` the
   program loads its ``BLOCK_N×16`` slice of the table once and gathers from it
   in registers (``tl.gather``), the Triton counterpart of tinygemm's shared-memory
   table; otherwise every lookup is a cached global load of a 64-byte table row;
3. apply the group scale and zero, ``ŵ = lut[code]·s + zero`` (spec §3.1);
4. accumulate in fp32: two ``tl.dot`` calls (even columns, odd columns) on
   tensor cores, or for a single activation row (decode, M = 1) a CUDA-core
   multiply-and-reduce, since an MMA tile would waste 15/16 of its rows (§3.6).

Importing this module imports Triton; the CPU path of the quantized layer never
does. On a CPU the kernel runs only under ``TRITON_INTERPRET=1`` (set before this
module is imported), which the tests use at tiny shapes.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from paperworks_kernels.any4_gemm.reference import check_operands

_FLOAT_TYPES = (torch.float32, torch.float16, torch.bfloat16)


@triton.jit
def _lookup(lut_ptr, table, codes, rn, stride_ln, mask_n, ROW_LUT: tl.constexpr, LUT_IN_REGISTERS: tl.constexpr):
    """Table value (fp32) of every code in a (BLOCK_N, HALF_K) tile."""
    if LUT_IN_REGISTERS:
        vals = tl.gather(table, codes, axis=1)
    elif ROW_LUT:
        vals = tl.load(lut_ptr + rn[:, None] * stride_ln + codes, mask=mask_n[:, None], other=0.0).to(tl.float32)
    else:
        vals = tl.load(lut_ptr + codes).to(tl.float32)
    return vals


@triton.jit
def _any4_gemm_kernel(
    x_ptr,
    packed_ptr,
    lut_ptr,
    sz_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_xk,
    stride_pn,
    stride_pk,
    stride_ln,
    stride_sg,
    stride_sn,
    stride_ym,
    stride_yn,
    GROUP_SIZE: tl.constexpr,
    ROW_LUT: tl.constexpr,
    LUT_IN_REGISTERS: tl.constexpr,
    GEMV: tl.constexpr,
    FP32_DOT: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    HALF_K: tl.constexpr = BLOCK_K // 2
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rj = tl.arange(0, HALF_K)
    mask_m = rm < M
    mask_n = rn < N

    # The program's slice of the table, loaded once (used by the register path).
    entries = tl.arange(0, 16)
    if ROW_LUT:
        table = tl.load(lut_ptr + rn[:, None] * stride_ln + entries[None, :], mask=mask_n[:, None], other=0.0).to(
            tl.float32
        )
    else:
        table = tl.broadcast_to(tl.load(lut_ptr + entries).to(tl.float32)[None, :], (BLOCK_N, 16))

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        # 1. packed codes: byte j of the step holds columns k0+2j (low) and k0+2j+1 (high)
        byte = tl.load(
            packed_ptr + rn[:, None] * stride_pn + (k0 // 2 + rj)[None, :] * stride_pk, mask=mask_n[:, None], other=0
        ).to(tl.int32)
        # 2. table lookup
        v_even = _lookup(lut_ptr, table, byte & 0xF, rn, stride_ln, mask_n, ROW_LUT, LUT_IN_REGISTERS)
        v_odd = _lookup(lut_ptr, table, (byte >> 4) & 0xF, rn, stride_ln, mask_n, ROW_LUT, LUT_IN_REGISTERS)
        # 3. group scale and zero: ŵ = lut[code]·s + zero
        sz_off = (k0 // GROUP_SIZE) * stride_sg + rn * stride_sn
        s = tl.load(sz_ptr + sz_off, mask=mask_n, other=0.0).to(tl.float32)
        z = tl.load(sz_ptr + sz_off + 1, mask=mask_n, other=0.0).to(tl.float32)
        w_even = v_even * s[:, None] + z[:, None]
        w_odd = v_odd * s[:, None] + z[:, None]
        # 4. activations at the even and odd columns of the step, fp32 accumulation
        k_even = k0 + 2 * rj
        x_base = x_ptr + rm[:, None] * stride_xm
        x_even = tl.load(x_base + k_even[None, :] * stride_xk, mask=mask_m[:, None], other=0.0)
        x_odd = tl.load(x_base + (k_even + 1)[None, :] * stride_xk, mask=mask_m[:, None], other=0.0)
        if GEMV:
            part = tl.sum(w_even * x_even.to(tl.float32), axis=1) + tl.sum(w_odd * x_odd.to(tl.float32), axis=1)
            acc += part[None, :]
        else:
            w_even_t = tl.trans(w_even.to(x_ptr.dtype.element_ty))
            w_odd_t = tl.trans(w_odd.to(x_ptr.dtype.element_ty))
            if FP32_DOT:
                acc = tl.dot(x_even, w_even_t, acc, input_precision="ieee")
                acc = tl.dot(x_odd, w_odd_t, acc, input_precision="ieee")
            else:
                acc = tl.dot(x_even, w_even_t, acc)
                acc = tl.dot(x_odd, w_odd_t, acc)

    y_ptrs = y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(y_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])


_TUNED = None


def _tuned_kernel():
    """The kernel autotuned over BLOCK_N and warps on CUDA (built lazily; never used by the interpreter).

    The key leaves out M, so a model's varying token counts reuse one choice per (N, K, path).
    """
    global _TUNED
    if _TUNED is None:
        configs = [triton.Config({"BLOCK_N": bn}, num_warps=w) for bn in (16, 32, 64, 128) for w in (2, 4)]
        _TUNED = triton.autotune(configs=configs, key=["N", "K", "GEMV", "BLOCK_M"])(_any4_gemm_kernel)
    return _TUNED


def _block_k(group_size: int) -> int:
    """Largest power of two ≤ 64 dividing the group size (the K step never crosses a group)."""
    bk = 64
    while bk > 2 and group_size % bk:
        bk //= 2
    if group_size % bk:
        raise ValueError(f"group_size={group_size} must be even")
    return bk


def any4_gemm(
    x: torch.Tensor,
    packed: torch.Tensor,
    lut: torch.Tensor,
    scales_and_zeros: torch.Tensor,
    group_size: int,
    *,
    out: torch.Tensor | None = None,
    lut_in_registers: bool = False,
    block_n: int | None = None,
    block_k: int | None = None,
    num_warps: int = 4,
) -> torch.Tensor:
    """``x @ Ŵᵀ`` from packed any4 operands with the Triton kernel.

    Args:
        x: activations (..., K) in fp32, fp16 or bf16.
        packed: (N, K/2) uint8 codes, low nibble = even k.
        lut: (N, 16) per-row table or (16,) global table (any float dtype).
        scales_and_zeros: (K/g, N, 2) scales and zeros (any float dtype).
        group_size: g; K must be a multiple of it.
        out: optional (M, N) output buffer in ``x.dtype`` (every element is written).
        lut_in_registers: gather from the program's table slice in registers.
        block_n, block_k: tile sizes (defaults: autotuned BLOCK_N on CUDA, 64 elsewhere; and the
            largest power of two ≤ 64 dividing g).
    Returns:
        (..., N) in ``x.dtype``.
    """
    n, k = check_operands(packed, lut, scales_and_zeros, group_size)
    if x.shape[-1] != k:
        raise ValueError(f"x has K={x.shape[-1]} but the weight has K={k}")
    if x.dtype not in _FLOAT_TYPES:
        raise TypeError(f"x must be fp32/fp16/bf16, got {x.dtype}")
    devices = {t.device for t in (x, packed, lut, scales_and_zeros)}
    if len(devices) != 1:
        raise ValueError(f"all operands must be on one device, got {devices}")
    lead = x.shape[:-1]
    x2 = x.reshape(-1, k)
    m = x2.shape[0]
    if out is None:
        out = torch.empty((m, n), device=x.device, dtype=x.dtype)
    elif out.shape != (m, n) or out.dtype != x.dtype:
        raise ValueError(f"out must be ({m}, {n}) {x.dtype}")
    if m == 0:
        return out.reshape(*lead, n)
    lut_c = lut.contiguous()
    sz = scales_and_zeros.contiguous()
    bk = block_k or _block_k(group_size)
    if group_size % bk or bk % 2 or bk & (bk - 1):
        raise ValueError(f"block_k={bk} must be a power of two dividing group_size={group_size}")
    gemv = m == 1
    bm = 1 if gemv else min(64, max(16, triton.next_power_of_2(m)))
    args = (
        x2,
        packed,
        lut_c,
        sz,
        out,
        m,
        n,
        k,
        x2.stride(0),
        x2.stride(1),
        packed.stride(0),
        packed.stride(1),
        lut_c.stride(0) if lut_c.dim() == 2 else 0,
        sz.stride(0),
        sz.stride(1),
        out.stride(0),
        out.stride(1),
    )
    meta = dict(
        GROUP_SIZE=group_size,
        ROW_LUT=lut_c.dim() == 2,
        LUT_IN_REGISTERS=lut_in_registers,
        GEMV=gemv,
        FP32_DOT=x.dtype == torch.float32,
        BLOCK_M=bm,
        BLOCK_K=bk,
    )
    if x.is_cuda and block_n is None:
        _tuned_kernel()[lambda cfg: (triton.cdiv(m, bm), triton.cdiv(n, cfg["BLOCK_N"]))](*args, **meta)
    else:
        bn = block_n or 64
        _any4_gemm_kernel[(triton.cdiv(m, bm), triton.cdiv(n, bn))](*args, **meta, BLOCK_N=bn, num_warps=num_warps)
    return out.reshape(*lead, n)
