"""Registrations: DPCR as the harness method ``dpcr`` (job ``continual.run``) and ``reproduce dpcr``."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from core.device import DeviceParams
from core.jobs import JobContext, Report, ReproducerOptions, register_reproducer
from methods.continual.data import TaskStream
from methods.continual.learner import ContinualLearner, register_learner
from methods.dpcr.config import ALL_ARMS, PRESETS, DPCRConfig


@register_learner(
    "dpcr",
    options=DPCRConfig,
    heads=ALL_ARMS,
    presets=PRESETS,
    description="LwF backbone + DPCR (TSSP, CIP, ridge reconstruction) with every comparison arm "
    "of the spec as a head: lwf, ridge_uncal, tssp, dpcr, dpcr_literal, oracle. "
    "Presets: quick (tiny CNN, seconds), spec (§6 schedule, about a minute per seed), "
    "reproduce (as docs/results/dpcr.md).",
)
def make_dpcr(
    options: DPCRConfig, *, seed: int, stream: TaskStream, device: Any = "cpu", amp: str = "off"
) -> ContinualLearner:
    """A DPCR learner for ``stream``'s input shape, training on ``device``."""
    from methods.dpcr.learner import DPCRLearner  # torch: imported when a run starts, not at registration

    return DPCRLearner(options, seed=seed, input_shape=stream.input_shape, device=device, amp=amp)


class DpcrOptions(ReproducerOptions, DeviceParams):
    """Options of ``paperworks reproduce dpcr``."""

    seeds: int = Field(5, ge=1, le=20, description="Seeds 0..seeds-1 per experiment.")
    quick: bool = Field(False, description="The tiny schedule (tests and smoke runs; never for docs/results).")
    threads: int = Field(1, ge=1, le=64, description="torch threads.")


@register_reproducer(
    "dpcr", options=DpcrOptions, description="DPCR on digits: 5 tasks × 2 classes, 5 seeds, all arms, 32/class variant."
)
def reproduce(options: DpcrOptions, progress: JobContext) -> Report:
    """Run the spec §6 experiment; the registry writes ``dpcr.md`` (+ ``dpcr/`` figures and JSON)."""
    from methods.dpcr.experiment import run_reproduction

    return run_reproduction(
        progress,
        seeds=options.seeds,
        quick=options.quick,
        threads=options.threads,
        device=options.device,
        amp=options.amp,
    )
