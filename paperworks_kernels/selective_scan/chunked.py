"""Vectorised, chunked PyTorch selective scan (CPU speed; differentiable by autograd).

Mamba-1 (A ∈ R^{d×N}): the sequence is cut into chunks of T tokens. Inside a chunk,
with the cumulative log-decay S_t = Σ_{s≤t} Δ_s·A (from the chunk start) and
R_t = S_t − S_0 (the decay after the chunk's first token),

    h_t = e^{S_t} ⊙ h_start + e^{R_t} ⊙ Σ_{s≤t} e^{−R_s} ⊙ v_s,   v_s = (Δ_s x_s)·B_s,

two cumulative sums over the chunk instead of T dependent steps. The chunk-end states obey the
same kind of recurrence over L/T steps (decay = the chunk's total), solved recursively.
e^{−R_s} grows with the decay inside a chunk, so T is chosen per call such that (T−1)·max|Δ·A| ≤ ``max_log_decay``
(e^{30} ≈ 1e13 stays far from fp32 overflow); the absolute rounding error stays
≈ ε·Σ|v_s|, as in the sequential loop. Per-token log-decays are floored at −20 (a decay of
e^{−20} ≈ 2e-9 instead of a smaller one: the carried state is erased either way, the difference is
≤ 2e-9·|h|), so even the strongest decay leaves T ≥ 2: accurate in every regime, only slower.
T depends on the data, so two inputs differing only in late tokens may be chunked
differently: their early outputs then agree to rounding, not bit for bit.

Mamba-2 (scalar A per head): the decay is the same for all N states, so the chunk is
computed in the "state-space dual" form of state-spaces/mamba's ``ssd_minimal.py``:
y_intra = (L ∘ C Bᵀ)(Δx) with L_{ts} = exp(S_t − S_s) for s ≤ t (masked before the
exponential, so stable for any decay), plus the carried chunk states.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperworks_kernels.selective_scan.reference import ScanShape, check_scan_inputs, per_channel, prepare_delta

MIN_LOG_DECAY = 20.0


def _pad(t: torch.Tensor, length: int) -> torch.Tensor:
    return F.pad(t, (0, length - t.shape[-1])) if length != t.shape[-1] else t


def _chunk_len(logdec: torch.Tensor, chunk: int, max_log_decay: float) -> int:
    rate = float(logdec.detach().abs().amax()) if logdec.numel() else 0.0
    if rate <= 0.0:
        return chunk
    return int(max(1, min(chunk, 1 + max_log_decay // rate)))


def _linear_scan(logdec: torch.Tensor, v: torch.Tensor, chunk: int, max_log_decay: float) -> torch.Tensor:
    """All states of h_t = e^{logdec_t} ⊙ h_{t−1} + v_t, h_0 = 0, for (..., L, N) inputs; returns (..., L, N).

    Chunks of T tokens are solved with two cumulative sums; the chunk-end states are themselves a
    linear recurrence over L/T steps (log-decay = the chunk's total), solved by the same function, so
    the sequential work shrinks geometrically. Log-decays are floored at −MIN_LOG_DECAY, so T ≥ 2 whenever
    ``max_log_decay ≥ MIN_LOG_DECAY``; otherwise T = 1 falls back to the plain loop.
    """
    L = logdec.shape[-2]
    logdec = logdec.clamp(min=-MIN_LOG_DECAY)  # chunk totals too: every level keeps T ≥ 2
    T = min(_chunk_len(logdec, chunk, max_log_decay), L)
    if T == 1 or L == 1:
        h = torch.zeros_like(v[..., 0, :])
        out = []
        for g, u in zip(torch.exp(logdec).unbind(-2), v.unbind(-2), strict=True):
            h = g * h + u
            out.append(h)
        return torch.stack(out, dim=-2)
    nc = -(-L // T)
    pad = nc * T - L
    if pad:
        logdec = F.pad(logdec, (0, 0, 0, pad))
        v = F.pad(v, (0, 0, 0, pad))
    lead = logdec.shape[:-2]
    n = logdec.shape[-1]
    S = logdec.reshape(*lead, nc, T, n).cumsum(-2)  # log-decay from the chunk start
    R = S - S[..., :1, :]
    local = torch.exp(R) * torch.cumsum(torch.exp(-R) * v.reshape(*lead, nc, T, n), dim=-2)
    if nc == 1:
        hs = local
    else:
        ends = _linear_scan(S[..., -1, :], local[..., -1, :], chunk, max_log_decay)  # (..., nc, N)
        starts = F.pad(ends[..., :-1, :], (0, 0, 1, 0))  # the state entering each chunk
        hs = local + torch.exp(S) * starts[..., None, :]
    return hs.reshape(*lead, nc * T, n)[..., :L, :]


def _mamba1(
    x: torch.Tensor, dt: torch.Tensor, a: torch.Tensor, B: torch.Tensor, C: torch.Tensor, chunk: int, max_log: float
) -> tuple[torch.Tensor, torch.Tensor]:
    # (b, d, L, N): Δ_t·A (floored at −MIN_LOG_DECAY in _linear_scan: e^{−20} ≈ 2e-9 already erases the old
    # state, and the floor keeps one huge Δ from forcing T = 1, the plain loop, on the whole sequence)
    logdec = dt[..., None] * a[None, :, None, :]
    v = (dt * x)[..., None] * B.transpose(1, 2)[:, None]  # (Δ_t x_t)·B_t
    hs = _linear_scan(logdec, v, chunk, max_log)
    y = (hs * C.transpose(1, 2)[:, None]).sum(-1)
    return y, hs[..., -1, :]


def _mamba2(
    x: torch.Tensor, dt: torch.Tensor, a: torch.Tensor, B: torch.Tensor, C: torch.Tensor, shape: ScanShape, T: int
) -> tuple[torch.Tensor, torch.Tensor]:
    b, d, L = x.shape
    h_, p, n = shape.heads, shape.head_dim, shape.state
    nc = -(-L // T)
    Lp = nc * T
    x, dt, B, C = (_pad(t, Lp) for t in (x, dt, B, C))
    S = (dt * a[:, None]).view(b, h_, nc, T).cumsum(-1)  # (b, h, nc, T)
    xdt = (x.view(b, h_, p, Lp) * dt[:, :, None]).view(b, h_, p, nc, T)
    Bc, Cc = B.view(b, n, nc, T), C.view(b, n, nc, T)
    causal = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
    seg = (S[..., :, None] - S[..., None, :]).masked_fill(~causal, float("-inf"))
    decay = torch.exp(seg)  # (b, h, nc, T, T): L_{ts}
    cb = torch.einsum("bnct,bncs->bcts", Cc, Bc)
    y = torch.einsum("bhcts,bcts,bhpcs->bhpct", decay, cb, xdt)
    to_end = torch.exp(S[..., -1:] - S)  # (b, h, nc, T)
    states = torch.einsum("bhcs,bhpcs,bncs->bhcpn", to_end, xdt, Bc)  # chunk-end states from zero
    chunk_decay = torch.exp(S[..., -1])  # (b, h, nc)
    hstate = x.new_zeros(b, h_, p, n)
    starts = []
    for g_end, s_end in zip(chunk_decay.unbind(2), states.unbind(2), strict=True):
        starts.append(hstate)
        hstate = g_end[:, :, None, None] * hstate + s_end
    h0 = torch.stack(starts, dim=2)  # (b, h, nc, p, n)
    y = y + _inter(S, Cc, h0)
    return y.reshape(b, d, Lp)[..., :L], hstate.reshape(b, d, n)


def _inter(S: torch.Tensor, Cc: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Contribution of the carried chunk-start states: e^{S_t}·(C_t · h_start)."""
    return torch.einsum("bhct,bnct,bhcpn->bhpct", torch.exp(S), Cc, h0)


def selective_scan_chunked(
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
    *,
    chunk: int = 32,
    max_log_decay: float = 30.0,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Same signature and result as :func:`~paperworks_kernels.selective_scan.reference.selective_scan_reference`.

    ``chunk`` is the largest chunk length; Mamba-1 shortens it per call so that
    ``T·max|Δ·A| ≤ max_log_decay``.
    """
    if chunk < 1 or max_log_decay <= 0:
        raise ValueError(f"need chunk >= 1 and max_log_decay > 0 (got {chunk}, {max_log_decay})")
    shape = check_scan_inputs(u, delta, A, B, C, D, z, delta_bias)
    dt = prepare_delta(delta, delta_bias, delta_softplus)
    x, b_, c_ = u.float(), B.float(), C.float()
    if shape.length == 0:
        y, h = x.clone(), x.new_zeros(shape.batch, shape.dim, shape.state)
    elif shape.scalar_a:
        y, h = _mamba2(x, dt, A.float(), b_, c_, shape, min(chunk, shape.length))
    else:
        y, h = _mamba1(x, dt, A.float(), b_, c_, chunk, max_log_decay)
    if D is not None:
        y = y + x * per_channel(D.float(), shape)[:, None]
    if z is not None:
        y = y * F.silu(z.float())
    y = y.to(u.dtype)
    return (y, h) if return_last_state else y
