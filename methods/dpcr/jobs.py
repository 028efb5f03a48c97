"""Registrations: DPCR as the harness method ``dpcr`` (job ``continual.run``) and ``reproduce dpcr``."""

from __future__ import annotations

from pathlib import Path

from core.jobs import JobContext, register_reproducer
from methods.continual.data import TaskStream
from methods.continual.learner import ContinualLearner, register_learner
from methods.dpcr.config import ALL_ARMS, DPCRConfig
from methods.dpcr.learner import DPCRLearner


PRESETS = {
    "quick": {"channels": [8, 16, 16], "epochs_first": 3, "milestones_first": [2], "epochs_inc": 2,
              "milestones_inc": [1], "tssp_passes": 4},
    "spec": {},
    "reproduce": {"tssp_passes": 8, "gamma_sweep": [0.1, 1.0, 10.0, 100.0, 1000.0]},
}


@register_learner("dpcr", options=DPCRConfig, heads=ALL_ARMS, presets=PRESETS,
                  description="LwF backbone + DPCR (TSSP, CIP, ridge reconstruction) with every comparison arm "
                              "of the spec as a head: lwf, ridge_uncal, tssp, dpcr, dpcr_literal, oracle. "
                              "Presets: quick (tiny CNN, seconds), spec (§6 schedule, about a minute per seed), "
                              "reproduce (as docs/results/dpcr.md).")
def make_dpcr(options: DPCRConfig, *, seed: int, stream: TaskStream) -> ContinualLearner:
    """A DPCR learner for ``stream``'s input shape."""
    return DPCRLearner(options, seed=seed, input_shape=stream.input_shape)


@register_reproducer("dpcr", description="DPCR on digits: 5 tasks × 2 classes, 5 seeds, all arms, 32/class variant.")
def reproduce(out_dir: Path, progress: JobContext, **options) -> Path:
    """Run the spec §6 experiment and write ``<out_dir>/dpcr.md`` (+ ``dpcr/`` figures and JSON)."""
    from methods.dpcr.experiment import run_reproduction

    report = run_reproduction(progress, **options)
    return report.write_markdown(Path(out_dir) / "dpcr.md")
