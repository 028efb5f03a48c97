"""One torch thread for these tests: their tensors are small, and on a busy 2-core machine two threads
made a 15-step training 15× slower (measured)."""

import pytest

from core.train import pin_threads


@pytest.fixture(autouse=True)
def _one_thread():
    with pin_threads(1):
        yield
