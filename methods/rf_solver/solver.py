"""RF-Solver: Taylor-expansion ODE steps for rectified flows (spec §3.2–§3.4).

Notation: ``Z`` is the state, ``v = v_θ(Z, t)`` the velocity, ``h = t_{i+1} − t_i`` the
signed step (negative when sampling 1 → 0, positive when inverting 0 → 1). The exact
step is Z_{t_{i+1}} = Z_{t_i} + ∫ v dτ; expanding v to order n−1 gives (§3.2)

    Z_{t_{i+1}} ≈ Z_{t_i} + Σ_{k<n} h^{k+1}/(k+1)! · v^{(k)}(Z_{t_i}, t_i).

* order 1 (vanilla RF / Euler):   Z ← Z + h·v                              1 NFE
* order 2 (RF-Solver-2):          Z ← Z + h·v + ½h²·v',  v' ≈ (v_mid − v)/(h/2)   2 NFE
  with v_mid evaluated at Z + (h/2)·v, t + h/2. Algebraically Z + h·v_mid (explicit midpoint).
* order 3 (optional):             Z ← Z + h·v + ½h²·v' + ⅙h³·v'', with v', v'' from the
  quadratic through three evaluations at t, t + h/2, t + h (nested finite differences) 3 NFE

Inversion and sampling share the N+1 grid from :func:`~methods.rf_solver.schedule.get_schedule`;
inversion walks it reversed. Each step evaluates first at the interval's start, then at its
midpoint. Hooks see an :class:`EvalInfo` before every evaluation; the V cache uses it to
build its keys (upper interval time, midpoint flag) and to decide whether the step injects.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import torch

from core.device import step_barrier

log = logging.getLogger(__name__)

Direction = Literal["sample", "invert"]
VelocityFn = Callable[[torch.Tensor, float], torch.Tensor]


@dataclass(frozen=True)
class EvalInfo:
    """Where one velocity evaluation sits in the solve.

    Attributes:
        direction: "sample" (1 → 0) or "invert" (0 → 1).
        step: index of the step in walking order.
        denoise_step: the mirrored index in denoising order; denoising step j covers
            [t_{j+1}, t_j] of the descending grid, and so does inversion step N−1−j.
        t: the time this evaluation is made at.
        upper_t: the interval's upper end t_j (the cache key time of spec §3.5).
        stage: 0 for the main evaluation, 1 for the midpoint, 2 for order 3's endpoint.
        num_steps: N.
    """

    direction: Direction
    step: int
    denoise_step: int
    t: float
    upper_t: float
    stage: int
    num_steps: int

    @property
    def is_midpoint(self) -> bool:
        """The paper's ``second_order`` flag: True for the midpoint evaluation."""
        return self.stage == 1


class SolverHook(Protocol):
    """Called by :func:`solve` before every velocity evaluation."""

    def before_eval(self, info: EvalInfo) -> None: ...


class NFECounter:
    """Counts calls of a velocity function (number of function evaluations)."""

    def __init__(self, fn: VelocityFn) -> None:
        self.fn = fn
        self.count = 0

    def __call__(self, z: torch.Tensor, t: float) -> torch.Tensor:
        self.count += 1
        return self.fn(z, t)


@dataclass
class SolveResult:
    """The end state, its NFE and (optionally) every intermediate state."""

    z: torch.Tensor
    nfe: int
    timesteps: list[float]
    trajectory: list[torch.Tensor] = field(default_factory=list)


def euler_step(z: torch.Tensor, v: torch.Tensor, h: float) -> torch.Tensor:
    """Order 1: Z + h·v."""
    return z + h * v


def taylor2_update(z: torch.Tensor, v: torch.Tensor, v_mid: torch.Tensor, h: float) -> torch.Tensor:
    """RF-Solver-2's update in the paper's Taylor form: Z + h·v + ½h²·v', v' = (v_mid − v)/(h/2)."""
    dv = (v_mid - v) / (h / 2.0)
    return z + h * v + 0.5 * h * h * dv


def midpoint_update(z: torch.Tensor, v_mid: torch.Tensor, h: float) -> torch.Tensor:
    """The algebraically equal explicit-midpoint form Z + h·v_mid (tested against the Taylor form)."""
    return z + h * v_mid


def taylor3_update(
    z: torch.Tensor, v0: torch.Tensor, v_half: torch.Tensor, v_one: torch.Tensor, h: float
) -> torch.Tensor:
    """Order 3 Taylor form with v', v'' from the quadratic through (0, v0), (h/2, v_half), (h, v_one).

    v' = (−3v0 + 4v_half − v_one)/h and v'' = 4(v0 − 2v_half + v_one)/h² (second finite
    difference); Z + h·v0 + ½h²·v' + ⅙h³·v'' equals Simpson's weights h(v0 + 4v_half + v_one)/6.
    """
    d1 = (-3.0 * v0 + 4.0 * v_half - v_one) / h
    d2 = 4.0 * (v0 - 2.0 * v_half + v_one) / (h * h)
    return z + h * v0 + 0.5 * h * h * d1 + (h**3 / 6.0) * d2


def walk(timesteps: Sequence[float], direction: Direction) -> list[tuple[int, float, float, float]]:
    """The steps of a solve as (denoise_step, t_start, t_end, upper_t), in walking order.

    ``timesteps`` is the descending grid t_0 = 1 > ... > t_N = 0. Denoising step j goes
    t_j → t_{j+1}; inversion walks the reversed list, so its step i goes t_{N−i} → t_{N−i−1}
    and is mirrored to denoising step j = N−1−i. Both use the interval's upper end t_j as key.
    """
    ts = list(timesteps)
    n = len(ts) - 1
    if n < 1:
        raise ValueError("need at least two timesteps")
    if any(a <= b for a, b in zip(ts, ts[1:])):
        raise ValueError("timesteps must be strictly decreasing (1 → 0)")
    if direction == "sample":
        return [(j, ts[j], ts[j + 1], ts[j]) for j in range(n)]
    if direction == "invert":
        return [(n - 1 - i, ts[n - i], ts[n - i - 1], ts[n - 1 - i]) for i in range(n)]
    raise ValueError(f"direction must be 'sample' or 'invert', not {direction!r}")


def solve(
    velocity: VelocityFn,
    z: torch.Tensor,
    timesteps: Sequence[float],
    order: int = 2,
    direction: Direction = "sample",
    hooks: Sequence[SolverHook] = (),
    keep_trajectory: bool = False,
) -> SolveResult:
    """Integrate dZ/dt = v(Z, t) over the grid with the order-``order`` RF-Solver step.

    Args:
        velocity: ``v(z, t) -> tensor`` of z's shape (analytic field, trained model, adapter).
        z: start state (data when inverting, noise when sampling).
        timesteps: descending grid from :func:`get_schedule` (length N+1).
        order: 1 (Euler), 2 (RF-Solver-2) or 3.
        direction: "sample" walks 1 → 0, "invert" walks 0 → 1.
        hooks: objects whose ``before_eval(EvalInfo)`` runs before each evaluation.
        keep_trajectory: also return every intermediate state.

    Returns:
        :class:`SolveResult` with the final state and the NFE used (order × N).
    """
    if order not in (1, 2, 3):
        raise ValueError("order must be 1, 2 or 3")
    counter = NFECounter(velocity)
    steps = walk(timesteps, direction)
    n = len(steps)
    traj = [z] if keep_trajectory else []

    def evaluate(x: torch.Tensor, t: float, idx: int, j: int, upper: float, stage: int) -> torch.Tensor:
        info = EvalInfo(direction, idx, j, t, upper, stage, n)
        for hook in hooks:
            hook.before_eval(info)
        return counter(x, t)

    for idx, (j, t0, t1, upper) in enumerate(steps):
        h = t1 - t0
        v = evaluate(z, t0, idx, j, upper, 0)
        if order == 1:
            z = euler_step(z, v, h)
        else:
            z_mid = z + (h / 2.0) * v
            v_mid = evaluate(z_mid, t0 + h / 2.0, idx, j, upper, 1)
            if order == 2:
                z = taylor2_update(z, v, v_mid, h)
            else:
                z_end = z - h * v + 2.0 * h * v_mid  # Kutta's third-stage predictor at t0 + h
                v_end = evaluate(z_end, t1, idx, j, upper, 2)
                z = taylor3_update(z, v, v_mid, v_end, h)
        if keep_trajectory:
            traj.append(z)
        step_barrier(z.device)  # one lazy-tensor graph per step (no-op on the CPU and CUDA)
    return SolveResult(z=z, nfe=counter.count, timesteps=list(timesteps), trajectory=traj)


def invert(
    velocity: VelocityFn, x0: torch.Tensor, timesteps: Sequence[float], order: int = 2, hooks: Sequence[SolverHook] = ()
) -> SolveResult:
    """Image → noise: integrate from t = 0 up to t = 1 on the reversed grid (spec §3.4)."""
    return solve(velocity, x0, timesteps, order, "invert", hooks)


def sample(
    velocity: VelocityFn, z1: torch.Tensor, timesteps: Sequence[float], order: int = 2, hooks: Sequence[SolverHook] = ()
) -> SolveResult:
    """Noise → image: integrate from t = 1 down to t = 0."""
    return solve(velocity, z1, timesteps, order, "sample", hooks)


@dataclass
class Reconstruction:
    """Invert-then-sample round trip."""

    x0: torch.Tensor
    noise: torch.Tensor
    x_rec: torch.Tensor
    nfe: int


def reconstruct(
    velocity: VelocityFn,
    x0: torch.Tensor,
    timesteps: Sequence[float],
    order: int = 2,
    sample_velocity: VelocityFn | None = None,
) -> Reconstruction:
    """Invert with ``velocity`` then sample back (same condition unless ``sample_velocity`` is given)."""
    inv = invert(velocity, x0, timesteps, order)
    smp = sample(sample_velocity or velocity, inv.z, timesteps, order)
    return Reconstruction(x0=x0, noise=inv.z, x_rec=smp.z, nfe=inv.nfe + smp.nfe)


def steps_for_nfe(nfe: int, order: int) -> int | None:
    """Steps N giving exactly ``nfe`` evaluations at ``order`` (None if not divisible)."""
    return nfe // order if nfe % order == 0 and nfe >= order else None
