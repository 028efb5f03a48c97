"""Fixtures for tests that run the real processes (see :mod:`core.devstack`)."""

from __future__ import annotations

import pytest

from core.devstack import Stack


@pytest.fixture
def make_stack(tmp_path):
    stacks: list[Stack] = []

    def make(database_url: str, broker_url: str, **env: str) -> Stack:
        st = Stack(tmp_path / f"home{len(stacks)}", database_url, broker_url, **env)
        stacks.append(st)
        return st

    yield make
    for st in stacks:
        st.close()
