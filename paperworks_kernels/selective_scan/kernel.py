"""Triton selective scan, forward (spec fourier_mamba §6: one program per batch × block of channels).

Each program owns ``BLOCK_D`` channels of one batch element and walks the sequence:

1. load its rows of A once (``BLOCK_D × N``; the Mamba-2 variant reads one scalar per
   head through a zero N-stride, and channel c uses head ``c // HEAD_DIM`` for A and Δ);
2. for t = 0 … L−1: load x_t and Δ_t of its channels and the shared B_t, C_t (N values),
   apply bias and softplus to Δ, update the state kept in registers,
   h ← exp(Δ·A) ⊙ h + (Δ·x)·B_t, and write y_t = h·C_t + D·x_t (times SiLU(z_t));
3. write the last state h_L.

The state never leaves registers, so memory traffic is the inputs and outputs once:
O(b·d·L) instead of the O(b·d·N·L) a framework scan materialises. Forward only;
:func:`selective_scan_triton` differentiates by recomputing the chunked PyTorch scan
in the backward pass (the spec's "backward via the reference").

Importing this module imports Triton. On a CPU the kernel runs only under
``TRITON_INTERPRET=1`` set before that import (the tests do it in a child process).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from paperworks_kernels.selective_scan.chunked import selective_scan_chunked
from paperworks_kernels.selective_scan.reference import check_scan_inputs

_FLOAT_TYPES = (torch.float32, torch.float16, torch.bfloat16)


@triton.jit
def _selective_scan_fwd_kernel(
    u_ptr,
    delta_ptr,
    a_ptr,
    b_ptr,
    c_ptr,
    dskip_ptr,
    z_ptr,
    bias_ptr,
    y_ptr,
    hlast_ptr,
    DIM,
    L,
    stride_ub,
    stride_ud,
    stride_ul,
    stride_tb,
    stride_th,
    stride_tl,
    stride_ah,
    stride_an,
    stride_bb,
    stride_bn,
    stride_bl,
    stride_cb,
    stride_cn,
    stride_cl,
    stride_zb,
    stride_zd,
    stride_zl,
    stride_yb,
    stride_yd,
    stride_yl,
    N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    HAS_D: tl.constexpr,
    D_PER_HEAD: tl.constexpr,
    HAS_Z: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    SOFTPLUS: tl.constexpr,
    BLOCK_D: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_b = tl.program_id(0)
    pid_d = tl.program_id(1)
    rd = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
    rn = tl.arange(0, BLOCK_N)
    mask_d = rd < DIM
    mask_n = rn < N
    rh = rd // HEAD_DIM  # head of each channel (the channel itself for Mamba-1)

    a = tl.load(a_ptr + rh[:, None] * stride_ah + rn[None, :] * stride_an, mask=mask_d[:, None] & mask_n[None, :])
    a = a.to(tl.float32)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + rh, mask=mask_d, other=0.0).to(tl.float32)
    if HAS_D:
        if D_PER_HEAD:
            dskip = tl.load(dskip_ptr + rh, mask=mask_d, other=0.0).to(tl.float32)
        else:
            dskip = tl.load(dskip_ptr + rd, mask=mask_d, other=0.0).to(tl.float32)

    u_row = u_ptr + pid_b * stride_ub + rd * stride_ud
    t_row = delta_ptr + pid_b * stride_tb + rh * stride_th
    z_row = z_ptr + pid_b * stride_zb + rd * stride_zd
    y_row = y_ptr + pid_b * stride_yb + rd * stride_yd
    b_row = b_ptr + pid_b * stride_bb + rn * stride_bn
    c_row = c_ptr + pid_b * stride_cb + rn * stride_cn

    h = tl.zeros((BLOCK_D, BLOCK_N), dtype=tl.float32)
    for t in range(0, L):
        x = tl.load(u_row + t * stride_ul, mask=mask_d, other=0.0).to(tl.float32)
        dt = tl.load(t_row + t * stride_tl, mask=mask_d, other=0.0).to(tl.float32)
        if HAS_BIAS:
            dt = dt + bias
        if SOFTPLUS:  # torch's softplus (threshold 20)
            dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
        bt = tl.load(b_row + t * stride_bl, mask=mask_n, other=0.0).to(tl.float32)
        ct = tl.load(c_row + t * stride_cl, mask=mask_n, other=0.0).to(tl.float32)
        h = tl.exp(dt[:, None] * a) * h + (dt * x)[:, None] * bt[None, :]
        y = tl.sum(h * ct[None, :], axis=1)
        if HAS_D:
            y = y + dskip * x
        if HAS_Z:
            zt = tl.load(z_row + t * stride_zl, mask=mask_d, other=0.0).to(tl.float32)
            y = y * zt * tl.sigmoid(zt)
        tl.store(y_row + t * stride_yl, y.to(y_ptr.dtype.element_ty), mask=mask_d)

    h_ptrs = hlast_ptr + pid_b * DIM * N + rd[:, None] * N + rn[None, :]
    tl.store(h_ptrs, h, mask=mask_d[:, None] & mask_n[None, :])


def selective_scan_triton_forward(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = False,
    *,
    out: torch.Tensor | None = None,
    block_d: int | None = None,
    num_warps: int = 4,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Launch the kernel; returns (y in ``u.dtype``, last state (b, d, N) fp32). No autograd.

    ``out`` is an optional (b, d, L) buffer in ``u.dtype`` (every element is written).
    """
    shape = check_scan_inputs(u, delta, A, B, C, D, z, delta_bias)
    if u.dtype not in _FLOAT_TYPES:
        raise TypeError(f"u must be fp32/fp16/bf16, got {u.dtype}")
    tensors = [t for t in (u, delta, A, B, C, D, z, delta_bias) if t is not None]
    if len({t.device for t in tensors}) != 1:
        raise ValueError("all operands must be on one device")
    b, d, L, n = shape.batch, shape.dim, shape.length, shape.state
    if out is None:
        out = torch.empty_like(u)
    elif out.shape != u.shape or out.dtype != u.dtype or out.device != u.device:
        raise ValueError(f"out must be {tuple(u.shape)} {u.dtype} on {u.device}")
    hlast = torch.empty(b, d, n, device=u.device, dtype=torch.float32)
    if b == 0 or d == 0:
        return out, hlast
    bd = block_d or min(64, triton.next_power_of_2(d))
    zt = z if z is not None else u
    a_strides = (A.stride(0), 0) if shape.scalar_a else (A.stride(0), A.stride(1))
    _selective_scan_fwd_kernel[(b, triton.cdiv(d, bd))](
        u,
        delta,
        A,
        B,
        C,
        D if D is not None else u,
        zt,
        delta_bias if delta_bias is not None else u,
        out,
        hlast,
        d,
        L,
        *u.stride(),
        *delta.stride(),
        *a_strides,
        *B.stride(),
        *C.stride(),
        *zt.stride(),
        *out.stride(),
        N=n,
        HEAD_DIM=shape.head_dim,
        HAS_D=D is not None,
        D_PER_HEAD=D is not None and D.shape[0] != d,
        HAS_Z=z is not None,
        HAS_BIAS=delta_bias is not None,
        SOFTPLUS=delta_softplus,
        BLOCK_D=bd,
        BLOCK_N=triton.next_power_of_2(n),
        num_warps=num_warps,
    )
    return out, hlast


class _TritonScan(torch.autograd.Function):
    """Triton forward; backward by recomputing the chunked PyTorch scan under autograd."""

    @staticmethod
    def forward(ctx, softplus, u, delta, A, B, C, D, z, delta_bias):  # noqa: N803 - the paper's symbols
        ctx.softplus = softplus
        ctx.save_for_backward(u, delta, A, B, C, D, z, delta_bias)
        y, h = selective_scan_triton_forward(u, delta, A, B, C, D, z, delta_bias, softplus)
        ctx.mark_non_differentiable(h)
        return y, h

    @staticmethod
    def backward(ctx, grad_y, grad_h):
        inputs = ctx.saved_tensors
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_(t.requires_grad) if t is not None else None for t in inputs]
            y = selective_scan_chunked(*leaves, delta_softplus=ctx.softplus)
            wanted = [t for t in leaves if t is not None and t.requires_grad]
            grads = iter(torch.autograd.grad(y, wanted, grad_y)) if wanted else iter(())
        return (None, *[next(grads) if t is not None and t.requires_grad else None for t in leaves])


def selective_scan_triton(
    u: torch.Tensor,
    delta: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    D: torch.Tensor | None = None,
    z: torch.Tensor | None = None,
    delta_bias: torch.Tensor | None = None,
    delta_softplus: bool = False,
    return_last_state: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Same signature and result as the reference, computed by the Triton kernel (differentiable)."""
    y, h = _TritonScan.apply(delta_softplus, u, delta, A, B, C, D, z, delta_bias)
    return (y, h) if return_last_state else y
