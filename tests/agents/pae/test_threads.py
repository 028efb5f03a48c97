"""PAE jobs pin torch's and llama.cpp's threads explicitly, restoring both; the shared settings stay untouched."""

from __future__ import annotations

import torch

from agents.pae.jobs import set_threads
from core.llm.threads import set_threads_hint, threads_hint


def test_set_threads_as_a_block_restores_torch_and_the_llama_hint(settings):
    before, configured = torch.get_num_threads(), settings.local_threads
    n = 1 if before != 1 else 2
    with set_threads(n):
        assert torch.get_num_threads() == n and threads_hint() == n
    assert torch.get_num_threads() == before and threads_hint() == 0
    assert settings.local_threads == configured


def test_set_threads_called_plainly_applies_until_changed(settings):
    before = torch.get_num_threads()
    n = 1 if before != 1 else 2
    try:
        set_threads(n)
        assert torch.get_num_threads() == n and threads_hint() == n
    finally:
        torch.set_num_threads(before)
        set_threads_hint(0)
    with set_threads(0):  # 0: leave everything as it is
        assert torch.get_num_threads() == before and threads_hint() == 0
