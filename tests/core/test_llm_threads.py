"""The llama.cpp thread count: configured setting, else a job's explicit hint, else half the cores."""

from __future__ import annotations

import threading

import pytest

from core.llm.threads import local_threads, resolve_threads, set_threads_hint, threads_hint


def test_configured_setting_wins_then_hint_then_half_the_cores():
    assert resolve_threads(0, 8) == 4 and resolve_threads(0, 1) == 1
    with local_threads(3):
        assert resolve_threads(0, 8) == 3
        assert resolve_threads(6, 8) == 6  # PAPERWORKS_LOCAL_THREADS is never overridden
    assert threads_hint() == 0 and resolve_threads(0, 8) == 4


def test_hint_is_seen_by_other_threads_and_restored_after_errors():
    seen = []
    with pytest.raises(RuntimeError), local_threads(2):
        t = threading.Thread(target=lambda: seen.append(resolve_threads(0, 16)))  # an agent's worker thread
        t.start()
        t.join()
        raise RuntimeError("job failed")
    assert seen == [2] and threads_hint() == 0


def test_engine_threads_follow_the_hint_and_settings_are_never_written(settings, monkeypatch):
    from core.llm.backends import llamacpp

    monkeypatch.setattr(settings, "local_threads", 0)
    with local_threads(5):
        assert llamacpp._threads() == 5
    assert settings.local_threads == 0
    with pytest.raises(ValueError, match=">= 0"):
        set_threads_hint(-1)
