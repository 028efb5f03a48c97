"""Policy checkpoints: LoRA adapters (small, stored as artifacts) and merged models the gateway can load.

The gateway's local provider loads any transformers directory (``local/<path>``), so
after each update the adapters are merged into a copy of the base model and written
once to ``<cache_dir>/pae/policies/<adapter hash>/``; rollout workers in other
processes build the same directory from the adapter archive when they lack it.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import tarfile
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024


def save_adapter(peft_model: Any, out_dir: Path) -> Path:
    """Save a PEFT model's adapters in ``out_dir``; a model on another device is moved to the CPU first
    (in place: safetensors writes host memory, and the same adapter bytes come out wherever it trained)."""
    if any(p.device.type != "cpu" for p in peft_model.parameters()):
        peft_model.to("cpu")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    peft_model.save_pretrained(str(out_dir))
    return out_dir


def adapter_archive(adapter_dir: Path) -> bytes:
    """A deterministic tar.gz of an adapter directory (for the artifact store)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(Path(adapter_dir).iterdir()):
            info = tar.gettarinfo(str(p), arcname=p.name)
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            with open(p, "rb") as fh:
                tar.addfile(info, fh)
    return buf.getvalue()


def extract_adapter(archive: bytes, out_dir: Path) -> Path:
    """Unpack an adapter archive (plain files only, no paths) into ``out_dir``."""
    if len(archive) > MAX_ARCHIVE_BYTES:
        raise ValueError("adapter archive too large")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for m in tar.getmembers():
            if not m.isfile() or "/" in m.name or m.name.startswith("."):
                raise ValueError(f"unexpected member {m.name!r} in adapter archive")
            src = tar.extractfile(m)
            (out_dir / m.name).write_bytes(src.read() if src else b"")
    return out_dir


def merge_to_dir(base_model: Any, tokenizer: Any, adapter_dir: Path, out_dir: Path) -> Path:
    """Merge the adapters into a copy of ``base_model`` and save a transformers directory (atomic)."""
    import safetensors.torch
    from peft import PeftModel

    out_dir = Path(out_dir)
    if (out_dir / ".complete").exists():
        return out_dir
    import copy

    model = PeftModel.from_pretrained(copy.deepcopy(base_model), str(adapter_dir)).merge_and_unload()
    model.eval()
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".merge-", dir=out_dir.parent))
    try:
        model.config.use_cache = True
        model.config.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        safetensors.torch.save_model(model, str(tmp / "model.safetensors"))
        (tmp / ".complete").write_text("ok")
        try:
            os.replace(tmp, out_dir)
        except OSError:  # another process finished first
            if not (out_dir / ".complete").exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    del model
    return out_dir
