"""Test helpers for Double-Filter's jobs: run every (task, seed) afresh instead of reading the run store."""

from __future__ import annotations

from pathlib import Path

import pytest


def fresh_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Bypass ``<cache_dir>/double_filter/runs`` for one test, so fine-tuning and evaluation really run."""
    from methods.double_filter import experiment

    def direct(task, seed, pre, tok, options, info, progress, *, amp="off"):
        return experiment.run_task(task, seed, pre, tok, options, progress, amp=amp)

    monkeypatch.setattr(experiment, "_cached_run", direct)
