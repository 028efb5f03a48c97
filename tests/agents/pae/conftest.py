"""Shared PAE fixtures: one sites server and one chromium per test module; torch on one thread."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session", autouse=True)
def _one_torch_thread():
    """Many processes share two cores here: multi-threaded matmuls would crawl."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if not shutil.os.path.exists(path):  # the lead's .ci/run installs it; a dev box may lack it
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    return path


@pytest.fixture(scope="module")
def sites():
    from agents.pae.sites.server import SiteServer

    with SiteServer(seed=0) as srv:
        yield srv


@pytest.fixture(scope="module")
def env(sites, chromium_path):
    from agents.pae.env import BrowserEnv, EnvConfig

    with BrowserEnv(sites.base_url, EnvConfig(wait_s=0.1)) as e:
        yield e
