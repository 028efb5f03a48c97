"""Build (once per machine) and load the C++ CPU kernels.

The library is compiled with ``-O3 -march=native`` (the code picks AVX-512, AVX2 or plain loops at
compile time) and OpenMP when the compiler has it, into
``<cache>/cpu_kernels/<key>/libpaperworks_cpu.so``, where ``<key>`` hashes the sources, the flags, the
compiler's version and the CPU's feature flags: a changed source or a different machine sharing the
home directory gets its own build, an unchanged one is loaded in milliseconds. ``<cache>`` is
``$PAPERWORKS_CACHE_DIR``, else ``$PAPERWORKS_HOME/cache``, else ``~/.paperworks/cache`` (the same
defaults as ``core.config``, which this package may not import).

Environment:

* ``PAPERWORKS_CPU_KERNELS=off`` (or ``0``/``false``): never build or load; PyTorch paths only.
* ``CXX``: the compiler (default: the first of ``c++``, ``g++``, ``clang++`` on PATH).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

SRC_DIR = Path(__file__).with_name("src")
SOURCES = ("selective_scan.cpp", "any4_gemm.cpp")
HEADERS = ("common.h",)
LIB_NAME = "libpaperworks_cpu.so"
BASE_FLAGS = ("-O3", "-std=c++17", "-fPIC", "-shared", "-ffp-contract=fast", "-fno-math-errno", "-w")
OFF_VALUES = ("0", "off", "false", "no")
ISA_NAMES = {2: "AVX-512", 1: "AVX2", 0: "portable loops"}


@dataclass(frozen=True)
class KernelStatus:
    """Whether the fused CPU kernels are in use, and why not when they are not."""

    available: bool
    detail: str  # where the library is and which ISA it uses, or why it is missing
    isa: str = ""
    lanes: int = 0


class _Built:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.cache: dict[str, tuple[ctypes.CDLL | None, KernelStatus]] = {}


_STATE = _Built()


def cache_root() -> Path:
    """``<cache>/cpu_kernels`` (see the module docstring)."""
    if os.environ.get("PAPERWORKS_CACHE_DIR"):
        base = Path(os.environ["PAPERWORKS_CACHE_DIR"])
    elif os.environ.get("PAPERWORKS_HOME"):
        base = Path(os.environ["PAPERWORKS_HOME"]) / "cache"
    else:
        base = Path.home() / ".paperworks" / "cache"
    return base.expanduser() / "cpu_kernels"


def disabled() -> bool:
    return os.environ.get("PAPERWORKS_CPU_KERNELS", "").strip().lower() in OFF_VALUES


def find_compiler() -> str | None:
    """The C++ compiler to use: ``$CXX`` or the first of c++, g++, clang++ on PATH."""
    if os.environ.get("CXX"):
        return shutil.which(os.environ["CXX"]) or None
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _cpu_flags() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("flags", "Features")):
                return line
    except OSError:
        pass
    return platform.processor()


def _run(cmd: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)


def _arch_flags(arch: str) -> list[list[str]]:
    """Flag sets to try, best first (``-march=native`` is not accepted by every clang on arm64)."""
    if arch != "native":
        return [[f"-march={arch}"]]
    return [["-march=native"], ["-mcpu=native"], []]


def _key(compiler: str, flags: list[str]) -> str:
    h = hashlib.sha256()
    for name in SOURCES + HEADERS:
        h.update(name.encode() + b"\0" + (SRC_DIR / name).read_bytes())
    version = _run([compiler, "--version"]).stdout
    h.update("\0".join([compiler, version, *flags, platform.machine(), _cpu_flags()]).encode())
    return h.hexdigest()[:16]


def _compile(compiler: str, flags: list[str], out: Path) -> str | None:
    """Compile into ``out`` atomically; return None, or the compiler's complaint."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".build-", suffix=".so", dir=out.parent)
    os.close(fd)
    cmd = [compiler, *BASE_FLAGS, *flags, *(str(SRC_DIR / s) for s in SOURCES), "-o", tmp]
    log.info("building the CPU kernels: %s", " ".join(cmd))
    try:
        proc = _run(cmd)
        if proc.returncode:
            return (proc.stderr or proc.stdout).strip()[-800:] or f"exit status {proc.returncode}"
        os.replace(tmp, out)
        return None
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _declare(lib: ctypes.CDLL) -> None:
    i64, vp = ctypes.c_int64, ctypes.c_void_p
    lib.pw_vector_lanes.restype = ctypes.c_int
    lib.pw_scan_max_state.restype = ctypes.c_int
    lib.pw_any4_isa.restype = ctypes.c_int
    lib.pw_scan_forward.argtypes = [vp]
    lib.pw_scan_backward.argtypes = [vp]
    lib.pw_scan_forward.restype = lib.pw_scan_backward.restype = ctypes.c_int
    lib.pw_any4_gemm.argtypes = [vp, vp, i64, i64, vp, i64]
    lib.pw_any4_gemm.restype = ctypes.c_int
    lib.pw_any4_dequant.argtypes = [vp, i64, i64, vp, i64]
    lib.pw_any4_dequant.restype = ctypes.c_int
    lib.pw_any4_uses_blocked_scales.argtypes = [i64]
    lib.pw_any4_uses_blocked_scales.restype = ctypes.c_int


def _build(arch: str) -> tuple[ctypes.CDLL | None, KernelStatus]:
    compiler = find_compiler()
    if compiler is None:
        return None, KernelStatus(False, "no C++ compiler (c++, g++ or clang++) on PATH")
    root = cache_root()
    problems = []
    for arch_flags in _arch_flags(arch):
        for omp in (["-fopenmp"], []):
            flags = arch_flags + omp
            key = _key(compiler, flags)
            path = root / f"{key}-{arch}" / LIB_NAME
            if not path.exists():
                problem = _compile(compiler, flags, path)
                if problem:
                    problems.append(f"{' '.join(flags) or '(no arch flags)'}: {problem}")
                    continue
            try:
                lib = ctypes.CDLL(str(path))
                _declare(lib)
            except (OSError, AttributeError) as exc:
                problems.append(f"loading {path}: {exc}")
                continue
            isa = ISA_NAMES.get(lib.pw_any4_isa(), "?")
            threads = "OpenMP" if omp else "one thread (no OpenMP)"
            detail = f"{path} ({isa}, {lib.pw_vector_lanes()} float lanes, {threads})"
            return lib, KernelStatus(True, detail, isa, lib.pw_vector_lanes())
    return None, KernelStatus(False, f"compiling with {compiler} failed: " + " | ".join(problems)[-1200:])


def library(arch: str = "native") -> ctypes.CDLL | None:
    """The loaded kernel library (built on first use), or None when unavailable (see :func:`status`).

    ``arch`` other than ``native`` builds a variant for that ``-march`` (the tests build ``haswell``,
    an AVX2 machine, and ``x86-64``, the portable loops, to check those paths on an AVX-512 CPU).
    """
    if disabled():
        return None
    hit = _STATE.cache.get(arch)
    if hit is not None:
        return hit[0]
    with _STATE.lock:
        if arch not in _STATE.cache:
            lib, st = _build(arch)
            if lib is None:
                log.warning("fused CPU kernels unavailable, using the PyTorch implementations: %s", st.detail)
            _STATE.cache[arch] = (lib, st)
        return _STATE.cache[arch][0]


def status(arch: str = "native") -> KernelStatus:
    """Build or load the library if needed and say whether the fused kernels are in use."""
    if disabled():
        return KernelStatus(False, "disabled by PAPERWORKS_CPU_KERNELS=off")
    library(arch)
    return _STATE.cache[arch][1]
