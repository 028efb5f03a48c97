"""The GPU set-up around the code: the ``gpu`` marker's skip, ``make test-gpu``, the image and compose.

Nothing here needs a GPU; these check that the pieces agree (docs/GPU.md).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


class _Item:
    def __init__(self, gpu: bool) -> None:
        self.gpu, self.added = gpu, []

    def get_closest_marker(self, name):
        return object() if name == "gpu" and self.gpu else None

    def add_marker(self, marker):
        self.added.append(marker)


def test_gpu_tests_are_skipped_without_cuda_and_run_with_it(monkeypatch):
    import torch

    from tests import conftest

    items = [_Item(gpu=True), _Item(gpu=False)]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    conftest.pytest_collection_modifyitems(None, items)
    (skip,) = items[0].added
    assert skip.mark.name == "skip" and "needs CUDA" in skip.mark.kwargs["reason"]
    assert items[1].added == []
    items = [_Item(gpu=True)]
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    conftest.pytest_collection_modifyitems(None, items)
    assert items[0].added == []


def test_make_test_gpu_says_when_nothing_ran():
    out = subprocess.run(["make", "-n", "test-gpu"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "-m gpu" in out and "SKIPPED, none ran" in out


def test_the_selective_scan_autograd_test_is_marked_gpu():
    src = (REPO / "tests/kernels/selective_scan/test_kernel.py").read_text()
    assert re.search(r"@pytest\.mark\.gpu\n(@.*\n)*def test_autograd_on_cuda", src)


def test_the_image_pins_one_torch_build_and_checks_it():
    df = (REPO / "Dockerfile").read_text()
    assert "cu124" not in df  # PyTorch's cu124 index stops at 2.6: no torch 2.13.0 there
    assert '"torch==2.13.0+cpu"' in df and '"torch==2.13.0+$TORCH_BUILD"' in df
    assert "torch.version.cuda" in df and "ARG TORCH_BUILD=cpu" in df


def test_compose_runs_the_gpu_worker_by_the_rule():
    services = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]
    gpu, cpu = services["worker-gpu"], services["worker-cpu"]
    assert gpu["profiles"] == ["gpu"] and "TORCH_BUILD" in gpu["build"]["args"]
    assert gpu["command"][gpu["command"].index("--queues") + 1] == "gpu"
    assert cpu["command"][cpu["command"].index("--queues") + 1] == "cpu"
    for name in ("api", "worker-cpu", "worker-gpu", "ui"):
        assert "PAPERWORKS_GPU_WORKERS" in services[name]["environment"], name


@pytest.mark.parametrize(
    "path",
    ["README.md", "docker-compose.yml", "core/config.py", "services/worker/celery_app.py", "docs/GPU.md"],
)
def test_the_queue_rule_reads_the_same_everywhere(path):
    text = " ".join((REPO / path).read_text().split())
    assert "PAPERWORKS_GPU_WORKERS" in text, path
    assert (
        re.search(r"GPU worker[^.]{0,90} consumes ``?gpu``? only", text) or "worker-gpu consumes `gpu` only" in text
    ), path
