"""Error vs NFE at equal cost, and convergence orders (spec §3.2 "fair comparison", §6.1, §7.3–7.4).

RF-Solver-2 with N steps is matched against Euler with 2N steps (and order 3 with 2N/3
steps when that is whole): every comparison is at equal NFE. The observed order is the
least-squares slope of log(error) against log(NFE), negated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from methods.rf_solver.analytic import GaussianFlow, MixtureFlow, reference_solve
from methods.rf_solver.schedule import get_schedule
from methods.rf_solver.solver import VelocityFn, solve, steps_for_nfe


@dataclass(frozen=True)
class ErrorPoint:
    """One solve: its order, steps, NFE and max-abs error of the endpoint."""

    order: int
    steps: int
    nfe: int
    error: float


def loglog_slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of log(ys) on log(xs)."""
    lx, ly = np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float))
    return float(np.polyfit(lx, ly, 1)[0])


def observed_order(points: Sequence[ErrorPoint]) -> float:
    """−slope of log(error) vs log(NFE)."""
    return -loglog_slope([p.nfe for p in points], [p.error for p in points])


def equal_nfe_errors(
    velocity: VelocityFn,
    z0: torch.Tensor,
    exact_end: torch.Tensor,
    nfes: Sequence[int],
    orders: Sequence[int] = (1, 2),
    direction: str = "invert",
    shift: bool = False,
    seq_len: int = 256,
) -> dict[int, list[ErrorPoint]]:
    """Max-abs endpoint error of each order at each NFE budget (skipping non-divisible budgets)."""
    out: dict[int, list[ErrorPoint]] = {o: [] for o in orders}
    for nfe in nfes:
        for order in orders:
            n = steps_for_nfe(nfe, order)
            if n is None:
                continue
            res = solve(velocity, z0, get_schedule(n, seq_len, shift), order, direction)  # type: ignore[arg-type]
            err = float((res.z - exact_end).abs().max())
            out[order].append(ErrorPoint(order, n, res.nfe, err))
    return out


def gaussian_errors(
    flow: GaussianFlow, x0: torch.Tensor, nfes: Sequence[int], orders: Sequence[int] = (1, 2), shift: bool = False
) -> dict[int, list[ErrorPoint]]:
    """Inversion error against the exact map z_1 = (x_0 − m)/s."""
    return equal_nfe_errors(flow, x0, flow.exact_invert(x0), nfes, orders, "invert", shift)


def mixture_errors(
    flow: MixtureFlow,
    x0: torch.Tensor,
    nfes: Sequence[int],
    orders: Sequence[int] = (1, 2),
    shift: bool = False,
    ref_steps: int = 2000,
) -> dict[int, list[ErrorPoint]]:
    """Inversion error against the RK4 reference endpoint."""
    ref = reference_solve(flow, x0, 0.0, 1.0, ref_steps)
    return equal_nfe_errors(flow, x0, ref, nfes, orders, "invert", shift)


def round_trip_error(velocity: VelocityFn, x0: torch.Tensor, nfe: int, order: int, shift: bool = False) -> float:
    """Max-abs error of invert-then-sample with ``nfe`` evaluations per direction."""
    n = steps_for_nfe(nfe, order)
    if n is None:
        raise ValueError(f"NFE {nfe} is not a multiple of order {order}")
    ts = get_schedule(n, 256, shift)
    z1 = solve(velocity, x0, ts, order, "invert").z
    back = solve(velocity, z1, ts, order, "sample").z
    return float((back - x0).abs().max())
