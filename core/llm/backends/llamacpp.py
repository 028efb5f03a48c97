"""The llama.cpp backend: the model's GGUF file decoded by llama.cpp, concurrent replies batched.

llama.cpp (through the ``llama-cpp-python`` binding's C API) runs the forward pass on
the quantized weights with its own AVX2 kernels, so a reply decodes as fast as
llama.cpp does. On top of it this module adds continuous batching: one engine thread
owns the llama.cpp context, each live reply holds a KV-cache sequence slot, and every
step feeds *all* of them (new prompts and the last token of each running reply) to a
single ``llama_decode`` call. A step over k sequences reads the weights once, so k
concurrent callers (API requests, agent branches, Celery tasks in threads) get close
to k times the throughput of a serialized ``Llama`` object.

Token choice, constraints and stop strings are the shared
:class:`~core.llm.backends.decoding.Sequence`; prompt ids come from the Hugging
Face tokenizer (:mod:`core.llm.backends.chat`), whose vocabulary is the GGUF's.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from core.config import get_settings
from core.llm.backends.base import (
    BackendUnavailable,
    ContinuationScore,
    GenerationRequest,
    GenerationResult,
    continuation_ids,
)
from core.llm.backends.chat import eos_ids, gguf_path, load_tokenizer, prompt_ids
from core.llm.backends.constraints import compile_spec, spec_from
from core.llm.backends.decoding import Sequence, log_softmax, log_softmax_at
from core.llm.local_models import LocalModelError

log = logging.getLogger(__name__)

INSTALL_HINT = 'pip install "llama-cpp-python==0.3.36" (builds llama.cpp from source with cmake and a C++ compiler)'


@dataclass
class _Job:
    """A reply in flight: its decoding state, what to feed next and where its output goes."""

    seq: Sequence | None
    pending: list[int]
    out: queue.SimpleQueue = field(default_factory=queue.SimpleQueue)
    slot: int = -1
    n_past: int = 0
    cancelled: bool = False
    t_submit: float = field(default_factory=time.perf_counter)
    t_first: float | None = None  # first token chosen (end of prompt processing)
    # A scoring job (``seq`` is None) feeds the prompt once, keeps the log-probabilities at its last
    # position, then feeds each continuation after it in turn (all but its last token, reading the
    # logits at every one) and removes it from the KV cache again: the prompt is processed once
    # however many continuations there are.
    conts: list[list[int]] = field(default_factory=list)
    n_prompt: int = 0
    cont_i: int = -1  # -1 while the prompt is fed, then the continuation being fed
    base: np.ndarray | None = None  # log-probabilities of the token after the prompt
    logprobs: list[float] = field(default_factory=list)


def _threads() -> int:
    """``local_threads``, else a job's :func:`core.llm.threads.local_threads` hint, else half the usable
    cores: llama.cpp's threads spin while they wait, so claiming every core of a machine that also runs the API, a worker and a UI collapses throughput
    (measured here under load: 17.8 tokens/s with 1 thread, 1.7 with 2 on 2 cores)."""
    from core.llm.threads import resolve_threads

    return resolve_threads(get_settings().local_threads, len(os.sched_getaffinity(0)))


def _gpu_layers(ll: object) -> int:
    """``settings.local_gpu_layers`` (-1: all) where this llama.cpp build can offload to a GPU, else 0.

    Only a llama-cpp-python built with CUDA (``CMAKE_ARGS=-DGGML_CUDA=on``) offloads; the default
    build of ``make install`` is CPU-only, so a non-zero setting is ignored there with a warning.
    """
    n = get_settings().local_gpu_layers
    if n and not ll.llama_supports_gpu_offload():
        log.warning(
            "local_gpu_layers=%d ignored: this llama-cpp-python build cannot offload to a GPU "
            "(rebuild it with CMAKE_ARGS=-DGGML_CUDA=on; docs/GPU.md)",
            n,
        )
        return 0
    return n


class _Engine:
    """One llama.cpp model + context with ``n_parallel`` sequence slots, driven by one thread."""

    def __init__(self, path: Path, n_ctx_seq: int, n_parallel: int, n_threads: int) -> None:
        import llama_cpp

        self.ll = ll = llama_cpp
        logger = logging.getLogger("llama-cpp-python")
        if logger.level == logging.NOTSET:  # the binding prints every llama.cpp log line otherwise
            logger.setLevel(logging.ERROR)
        ll.llama_backend_init()
        mp = ll.llama_model_default_params()
        # No "extra" weight layouts: a native build on a CPU with AMX picks the AMX kernels, which
        # crash (SIGSEGV in ggml_backend_amx_mul_mat) inside this project's VMs; Q4_1 has no
        # repacked AVX2 layout, so the default model loses nothing.
        mp.use_extra_bufts = False
        mp.n_gpu_layers = _gpu_layers(ll)  # 0 (the default): every layer on the CPU
        self.model = ll.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise BackendUnavailable(f"llama.cpp could not load {path}")
        cp = ll.llama_context_default_params()
        cp.n_ctx = n_ctx_seq * n_parallel
        cp.n_batch = max(n_ctx_seq, 512)
        cp.n_ubatch = 512
        cp.n_seq_max = n_parallel
        cp.n_threads = cp.n_threads_batch = n_threads
        cp.kv_unified = False
        self.ctx = ll.llama_init_from_model(self.model, cp)
        if not self.ctx:
            ll.llama_model_free(self.model)
            raise BackendUnavailable("llama.cpp could not create a context (out of memory?)")
        self.n_ctx_seq = int(ll.llama_n_ctx_seq(self.ctx))
        self.n_batch, self.n_parallel = int(cp.n_batch), n_parallel
        self.n_vocab = int(ll.llama_vocab_n_tokens(ll.llama_model_get_vocab(self.model)))
        self.mem = ll.llama_get_memory(self.ctx)
        self.batch = ll.llama_batch_init(self.n_batch, 0, 1)
        self.inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self.pid = os.getpid()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.steps = 0  # llama_decode calls (observable batching: fewer steps than tokens)
        self.fed = 0  # tokens fed to llama_decode (observable prompt reuse when scoring)

    # --- caller side ---------------------------------------------------------
    def submit(self, job: _Job) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="llamacpp-engine", daemon=True)
                self._thread.start()
        self.inbox.put(job)

    # --- engine thread -------------------------------------------------------
    def _run(self) -> None:
        active: list[_Job] = []
        free = list(range(self.n_parallel))
        while True:
            if not active:
                self._admit(self.inbox.get(), active, free)
            while free:
                try:
                    self._admit(self.inbox.get_nowait(), active, free)
                except queue.Empty:
                    break
            for job in [j for j in active if j.cancelled]:
                self._release(job, active, free)
            if active:
                try:
                    self._step(active, free)
                except Exception as e:  # a failed llama_decode: fail every live reply, keep serving
                    log.exception("llama.cpp step failed")
                    for job in list(active):
                        job.out.put(e)
                        self._release(job, active, free)

    def _admit(self, job: _Job, active: list[_Job], free: list[int]) -> None:
        if not free:  # only reached from the blocking get when all slots are busy (cannot happen)
            self.inbox.put(job)
            return
        job.slot = free.pop(0)
        active.append(job)

    def _release(self, job: _Job, active: list[_Job], free: list[int]) -> None:
        self.ll.llama_memory_seq_rm(self.mem, job.slot, -1, -1)
        active.remove(job)
        free.append(job.slot)
        free.sort()

    def _step(self, active: list[_Job], free: list[int]) -> None:
        """One ``llama_decode`` over every live reply: running ones first, then prompt chunks."""
        b = self.batch
        n, wants = 0, []  # wants: (job, batch index of its logits)
        scored: list[tuple[_Job, int, int]] = []  # (scoring job, batch index, position)
        for job in sorted(active, key=lambda j: len(j.pending)):
            take = min(len(job.pending), self.n_batch - n)
            if take <= 0:
                continue
            for k in range(take):
                pos = job.n_past + k
                b.token[n] = job.pending[k]
                b.pos[n] = pos
                b.n_seq_id[n] = 1
                b.seq_id[n][0] = job.slot
                b.logits[n] = 0
                if job.seq is None and (job.cont_i >= 0 or pos == job.n_prompt - 1):
                    b.logits[n] = 1
                    scored.append((job, n, pos))
                n += 1
            job.n_past += take
            job.pending = job.pending[take:]
            if not job.pending and job.seq is not None:
                b.logits[n - 1] = 1
                wants.append((job, n - 1))
        b.n_tokens = n
        rc = self.ll.llama_decode(self.ctx, b)
        self.steps += 1
        self.fed += n
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc} (KV cache full or bad batch)")
        for job, i, pos in scored:
            row = np.ctypeslib.as_array(self.ll.llama_get_logits_ith(self.ctx, i), shape=(self.n_vocab,))
            if job.cont_i < 0:
                job.base = log_softmax(row)
            else:  # the fed token at ``pos`` is continuation token j; this row predicts token j + 1
                job.logprobs[-1] += log_softmax_at(row, job.conts[job.cont_i][pos - job.n_prompt + 1])
        for job in [j for j in active if j.seq is None and not j.pending]:
            self._next_continuation(job, active, free)

        for job, i in wants:
            try:
                logits = np.ctypeslib.as_array(self.ll.llama_get_logits_ith(self.ctx, i), shape=(self.n_vocab,))
                token = job.seq.choose(logits)
                if job.t_first is None:
                    job.t_first = time.perf_counter()
                piece = job.seq.push(token)
            except Exception as e:  # e.g. a constraint error: only this reply fails
                job.out.put(e)
                self._release(job, active, free)
                continue
            if piece:
                job.out.put(piece)
            if job.seq.finished:
                job.out.put(job.seq.result())
                self._release(job, active, free)
            else:
                job.pending = [token]

    def _next_continuation(self, job: _Job, active: list[_Job], free: list[int]) -> None:
        """A scoring job whose feed is done: drop the last continuation from the cache, start the next
        (its first token's log-probability is read off the prompt's last position), or finish."""
        while True:
            if job.cont_i >= 0:
                self.ll.llama_memory_seq_rm(self.mem, job.slot, job.n_prompt, -1)
                job.n_past = job.n_prompt
            job.cont_i += 1
            if job.cont_i == len(job.conts):
                job.out.put(
                    [
                        ContinuationScore(text="", logprob=lp, n_tokens=len(c), prompt_tokens=job.n_prompt)
                        for lp, c in zip(job.logprobs, job.conts, strict=True)
                    ]
                )
                self._release(job, active, free)
                return
            cont = job.conts[job.cont_i]
            job.logprobs.append(float(job.base[cont[0]]))
            job.pending = cont[:-1]
            if job.pending:
                return


_ENGINES: dict[str, _Engine] = {}
_ENGINES_LOCK = threading.Lock()


class LlamaCppBackend:
    """Text generation on llama.cpp with continuous batching of concurrent requests.

    Args:
        model_name: a registered local model (or a directory holding a ``.gguf`` file).

    Raises:
        BackendUnavailable: the binding is not installed or the GGUF file is missing.
    """

    name = "llamacpp"

    def __init__(self, model_name: str) -> None:
        try:
            self.path = gguf_path(model_name)
        except LocalModelError as e:
            raise BackendUnavailable(str(e)) from None
        try:
            import llama_cpp  # noqa: F401
        except ImportError as e:
            raise BackendUnavailable(f"the llama.cpp binding is not installed ({e}); {INSTALL_HINT}") from None
        self.model_name = model_name
        self.tokenizer = load_tokenizer(model_name)
        self.stop_ids = eos_ids(self.tokenizer)
        engine = self.engine()
        if engine.n_vocab != len(self.tokenizer):
            raise BackendUnavailable(
                f"GGUF vocabulary ({engine.n_vocab}) differs from the tokenizer's ({len(self.tokenizer)})"
            )

    def engine(self) -> _Engine:
        """The process's engine for this model file, shared by every backend object (``auto`` and
        ``llamacpp``); rebuilt in a forked child, where the parent's engine thread does not exist."""
        key = str(self.path)
        with _ENGINES_LOCK:
            engine = _ENGINES.get(key)
            if engine is None or engine.pid != os.getpid():
                s = get_settings()
                engine = _ENGINES[key] = _Engine(self.path, s.local_context, max(1, s.local_parallel), _threads())
                log.info(
                    "llama.cpp backend: %s, %d threads, %d slots x %d tokens",
                    self.path.name,
                    _threads(),
                    engine.n_parallel,
                    engine.n_ctx_seq,
                )
            return engine

    def _job(self, req: GenerationRequest) -> tuple[_Engine, _Job]:
        spec = spec_from(req.json_schema, req.regex, req.grammar)
        if spec is not None:
            compile_spec(spec)
        engine = self.engine()
        ids = prompt_ids(self.tokenizer, req.messages)
        room = engine.n_ctx_seq - len(ids)
        if room <= 0:
            raise ValueError(
                f"prompt of {len(ids)} tokens does not fit the local context "
                f"({engine.n_ctx_seq}); shorten it or raise PAPERWORKS_LOCAL_CONTEXT"
            )
        return engine, _Job(seq=Sequence(req, ids, self.tokenizer, self.stop_ids, max_new=room), pending=ids)

    def events(self, req: GenerationRequest) -> Iterator[str | GenerationResult]:
        """Text pieces as they are decoded, then the :class:`GenerationResult`."""
        engine, job = self._job(req)
        engine.submit(job)
        try:
            while True:
                item = job.out.get()
                if isinstance(item, BaseException):
                    raise item
                yield item
                if isinstance(item, GenerationResult):
                    return
        finally:
            job.cancelled = True  # a consumer that stops early frees its slot

    def score(self, messages: list[dict], continuations: list[str]) -> list[ContinuationScore]:
        """Log-likelihood of each continuation after the chat prompt. One scoring job: the prompt is
        processed once and each continuation after it in turn, in the engine's batched steps beside
        any replies being decoded."""
        engine = self.engine()
        ids = prompt_ids(self.tokenizer, messages)
        conts = [continuation_ids(self.tokenizer, text) for text in continuations]
        longest = len(ids) + max((len(c) for c in conts), default=0)
        if longest > engine.n_ctx_seq:
            raise ValueError(
                f"prompt and continuation ({longest} tokens) do not fit the local context "
                f"({engine.n_ctx_seq}); shorten them or raise PAPERWORKS_LOCAL_CONTEXT"
            )
        job = _Job(seq=None, pending=list(ids), conts=conts, n_prompt=len(ids))
        engine.submit(job)
        try:
            item = job.out.get()
        finally:
            job.cancelled = True
        if isinstance(item, BaseException):
            raise item
        for text, sc in zip(continuations, item, strict=True):
            sc.text = text
        return item

    def generate(self, req: GenerationRequest) -> GenerationResult:
        for item in self.events(req):
            if isinstance(item, GenerationResult):
                return item
        raise RuntimeError("llama.cpp engine ended a reply without a result")

    def stream(self, req: GenerationRequest) -> Iterator[str]:
        for item in self.events(req):
            if isinstance(item, str):
                yield item
