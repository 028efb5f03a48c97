"""core.provenance: the one provenance dict and line every report prints."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

from core import provenance as prov
from core.provenance import format_provenance, git_commit, provenance, provenance_line


def test_provenance_names_the_machine_software_and_commit():
    info = provenance()
    assert info["machine"] == platform.machine() and info["cpus"] == os.cpu_count()
    assert info["python"] == platform.python_version()
    assert "device" not in info
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=prov.REPO, capture_output=True, text=True)
    assert git_commit() == (head.stdout.strip() or None)


def test_the_device_part_comes_from_device_provenance():
    pytest.importorskip("torch")
    info = provenance("cpu", "bf16", threads=3)
    assert info["device"] == "cpu" and info["dtype"] == "bfloat16 autocast" and info["torch_threads"] == 3
    line = provenance_line("cpu", threads=3)
    assert line.startswith(f"Machine: {platform.machine()} {platform.system()}, {os.cpu_count()} CPUs shared")
    assert "torch " in line and "with 3 thread(s)" in line and line.endswith("; device cpu, float32.")


def test_format_provenance_is_one_line_from_the_dict():
    info = {
        "machine": "x86_64",
        "system": "Linux",
        "cpus": 2,
        "load_1min": 3.14,
        "python": "3.11.9",
        "torch": "2.13.0",
        "torch_threads": 2,
        "commit": "abc1234",
        "device": "cuda:0",
        "dtype": "float32",
        "gpu": "NVIDIA H100",
    }
    assert format_provenance(info) == (
        "Machine: x86_64 Linux, 2 CPUs shared with other jobs (1-min load average 3.1), Python 3.11.9, "
        "torch 2.13.0 with 2 thread(s), commit abc1234; device cuda:0 (NVIDIA H100), float32."
    )
    assert format_provenance({"machine": "arm64"}) == "Machine: arm64."
    assert "\n" not in provenance_line()


def test_torch_is_not_imported_for_the_line():
    code = "import sys; from core.provenance import provenance; provenance(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=prov.REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
