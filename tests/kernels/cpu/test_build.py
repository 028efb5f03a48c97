"""Building and loading the C++ CPU kernels, and the PyTorch fallback when they are unavailable."""

from __future__ import annotations

import ctypes

import pytest
import torch

from paperworks_kernels.cpu import build, library, status
from paperworks_kernels.selective_scan import resolve_impl, selective_scan, selective_scan_chunked


def test_native_build_loads_and_reports_its_isa():
    st = status()
    if not st.available:
        pytest.skip(f"no fused CPU kernels on this machine: {st.detail}")
    lib = library()
    assert isinstance(lib, ctypes.CDLL)
    assert st.lanes == lib.pw_vector_lanes() in (8, 16)
    assert st.isa in build.ISA_NAMES.values()
    assert library() is lib  # loaded once per process


def test_cache_dir_follows_the_settings_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("PAPERWORKS_CACHE_DIR", str(tmp_path / "c"))
    assert build.cache_root() == tmp_path / "c" / "cpu_kernels"
    monkeypatch.delenv("PAPERWORKS_CACHE_DIR")
    monkeypatch.setenv("PAPERWORKS_HOME", str(tmp_path / "h"))
    assert build.cache_root() == tmp_path / "h" / "cache" / "cpu_kernels"


def test_without_a_compiler_the_build_reports_it(monkeypatch):
    monkeypatch.delenv("CXX", raising=False)
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    lib, st = build._build("native")
    assert lib is None and not st.available
    assert "no C++ compiler" in st.detail


def test_a_failing_compiler_is_reported_not_raised(monkeypatch, tmp_path):
    fake = tmp_path / "broken-c++"
    fake.write_text("#!/bin/sh\necho 'no such thing' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("CXX", str(fake))
    monkeypatch.setenv("PAPERWORKS_CACHE_DIR", str(tmp_path / "cache"))
    lib, st = build._build("native")
    assert lib is None and not st.available
    assert "failed" in st.detail and "no such thing" in st.detail


def test_disabled_kernels_fall_back_to_the_chunked_scan(monkeypatch):
    monkeypatch.setenv("PAPERWORKS_CPU_KERNELS", "off")
    assert library() is None
    assert not status().available and "PAPERWORKS_CPU_KERNELS" in status().detail
    assert resolve_impl("auto", torch.device("cpu")) == "chunked"
    g = torch.Generator().manual_seed(0)
    u, delta, z = (torch.randn(1, 4, 9, generator=g) for _ in range(3))
    A, B, C = -torch.rand(4, 3, generator=g) - 0.1, torch.randn(1, 3, 9, generator=g), torch.randn(1, 3, 9, generator=g)
    y = selective_scan(u, delta, A, B, C, None, z, delta_softplus=True, chunk=4)  # chunk reaches the chunked scan
    assert torch.equal(y, selective_scan_chunked(u, delta, A, B, C, None, z, delta_softplus=True, chunk=4))
