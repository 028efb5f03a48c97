"""Platform overhead, measured side by side in one run; writes docs/bench/platform.md.

1. The same `llm.complete` work (N prompts) run in-process vs submitted as a job through
   API + Redis broker + Celery worker + PostgreSQL: ratio and milliseconds added per job.
2. Trivial jobs (`diag.sleep` with 0 s) per second through the queue (Redis and the
   embedded SQLite broker).
3. Local LLM decode tokens/s through litellm (the gateway) vs transformers `generate` directly.

    python bench/platform_overhead.py [--prompts 4] [--tokens 48] [--trivial 40]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("PAPERWORKS_HOME", tempfile.mkdtemp(prefix="pw-bench-"))
os.environ.setdefault("PAPERWORKS_CACHE_DIR", str(Path.home() / ".paperworks" / "cache"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PROMPTS = [
    "What is 2+3?",
    "Name three colors.",
    "Write one sentence about the sea.",
    "What is the capital of France?",
    "Give a synonym for happy.",
    "What is 10 divided by 2?",
    "Say hello in Spanish.",
    "What is water made of?",
]


def bench_gateway(tokens: int, reps: int) -> dict:
    """Decode tokens/s of each local backend called directly vs through the gateway (litellm)."""
    import torch

    from core.llm import complete, get_local_model
    from core.llm.backends import GenerationRequest, get_backend

    lm = get_local_model()
    msgs = [{"role": "user", "content": "Write a short paragraph about rivers."}]
    text = lm.tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    enc = lm.tokenizer(text, return_tensors="pt", add_special_tokens=False)
    from core.llm.local_models import DEFAULT_LOCAL_MODEL

    fast = get_backend("llamacpp", DEFAULT_LOCAL_MODEL)
    res: dict[str, list[float]] = {k: [] for k in ("hf_direct", "hf_gateway", "llama_direct", "llama_gateway")}
    for kind in ("transformers", "llamacpp"):
        complete("warm up", max_tokens=4, backend=kind)
    for _ in range(reps):  # interleaved, so every path sees the same machine state
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = lm.model.generate(**enc, max_new_tokens=tokens, do_sample=False)
        res["hf_direct"].append((out.shape[1] - enc["input_ids"].shape[1]) / (time.perf_counter() - t0))
        c = complete(messages=msgs, max_tokens=tokens, backend="transformers")
        res["hf_gateway"].append(c.completion_tokens / c.latency_s)
        t0 = time.perf_counter()
        r = fast.generate(GenerationRequest(messages=msgs, max_tokens=tokens))
        res["llama_direct"].append(r.completion_tokens / (time.perf_counter() - t0))
        c = complete(messages=msgs, max_tokens=tokens, backend="llamacpp")
        res["llama_gateway"].append(c.completion_tokens / c.latency_s)
    return {k: statistics.median(v) for k, v in res.items()}


def bench_job_overhead(n_prompts: int, tokens: int, trivial: int, reps: int) -> dict:
    from core.devstack import Stack
    from core.jobs.lifecycle import run_inline

    params = {"prompts": PROMPTS[:n_prompts], "max_tokens": tokens}
    run_inline("llm.complete", params)  # warm: model loaded, caches hot
    inproc = []
    for _ in range(reps):
        t0 = time.perf_counter()
        _, out = run_inline("llm.complete", params)
        inproc.append(time.perf_counter() - t0)
        assert out.status == "succeeded"
    res = {"inprocess_s": statistics.median(inproc)}
    home = Path(os.environ["PAPERWORKS_HOME"])
    import redis

    redis.Redis.from_url("redis://127.0.0.1:6379/8").flushdb()
    from sqlalchemy import create_engine, text

    pg_name = f"pw_bench_{int(time.time())}"
    admin = create_engine("postgresql+psycopg://postgres@127.0.0.1:5432/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{pg_name}"'))
    stacks = []
    try:
        for label, db, broker in (
            ("redis+postgres", f"postgresql+psycopg://postgres@127.0.0.1:5432/{pg_name}", "redis://127.0.0.1:6379/8"),
            (
                "embedded sqlite",
                f"sqlite:///{home / 'bench-embedded.db'}",
                f"sqla+sqlite:///{home / 'bench-broker.db'}",
            ),
        ):
            st = Stack(home / label.replace(" ", "_").replace("+", "_"), db, broker)
            stacks.append(st)
            st.start_api()
            st.start_worker()
            if label == "redis+postgres":
                st.wait_job(st.submit("llm.complete", {"prompts": ["warm up"], "max_tokens": 2})["id"], 300)
                st.wait_job(st.submit("llm.complete", params)["id"], 600)  # same prompts, warm
                times = []
                for _ in range(reps):
                    t0 = time.perf_counter()
                    job = st.submit("llm.complete", params)
                    st.wait_job(job["id"], 600)
                    times.append(time.perf_counter() - t0)
                res["job_s"] = statistics.median(times)
            t0 = time.perf_counter()
            ids = [st.submit("diag.sleep", {"seconds": 0, "steps": 1})["id"] for _ in range(trivial)]
            for i in ids:
                st.wait_job(i, 300)
            res[f"trivial_per_s[{label}]"] = trivial / (time.perf_counter() - t0)
            st.close()
    finally:
        for st in stacks:
            st.close()
        from core.db.session import get_engine

        get_engine.cache_clear()
        with admin.connect() as c:
            c.execute(text(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{pg_name}'"))
            c.execute(text(f'DROP DATABASE IF EXISTS "{pg_name}"'))
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--prompts", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--trivial", type=int, default=40)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    from core.db import migrate

    migrate.upgrade()
    g = bench_gateway(args.tokens, args.reps)
    j = bench_job_overhead(args.prompts, args.tokens, args.trivial, args.reps)
    added_ms = (j["job_s"] - j["inprocess_s"]) * 1000
    lines = [
        "# Platform overhead",
        "",
        f"Command: `python bench/platform_overhead.py --prompts {args.prompts} --tokens {args.tokens} "
        f"--trivial {args.trivial} --reps {args.reps}`  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Local model: SmolLM2-135M-Instruct.",
        "",
        "## llm.complete: in-process vs a job through API + Redis + worker + PostgreSQL",
        "",
        f"Median of {args.reps} runs each, after a warm-up run on each path.",
        "",
        "| path | seconds | ratio |",
        "|---|---|---|",
        f"| in-process (`run_inline`) | {j['inprocess_s']:.2f} | 1.00 |",
        f"| job via API → Redis → worker → PostgreSQL | {j['job_s']:.2f} | {j['job_s'] / j['inprocess_s']:.2f} |",
        "",
        f"Added per job: {added_ms:.0f} ms ({args.prompts} prompts × {args.tokens} tokens; "
        "the worker had already loaded the model).",
        "",
        "## Trivial jobs through the queue (submit → succeeded, one solo worker)",
        "",
        "| broker + database | jobs/s |",
        "|---|---|",
        f"| Redis + PostgreSQL | {j['trivial_per_s[redis+postgres]']:.1f} |",
        f"| embedded (SQLAlchemy/SQLite broker + SQLite) | {j['trivial_per_s[embedded sqlite]']:.1f} |",
        "",
        "## Local LLM: tokens/s called directly vs through the gateway (litellm `local/` provider)",
        "",
        "Tokens/s over the whole call (prompt processing included), median of interleaved repetitions; the "
        "ratio is the gateway's overhead for that backend.",
        "",
        "| backend | direct | via `core.llm.complete` → litellm | ratio |",
        "|---|---|---|---|",
        f"| transformers (`model.generate`, fp32) | {g['hf_direct']:.1f} | {g['hf_gateway']:.1f} | "
        f"{g['hf_gateway'] / g['hf_direct']:.2f} |",
        f"| llama.cpp (paperworks `llamacpp` backend) | {g['llama_direct']:.1f} | {g['llama_gateway']:.1f} | "
        f"{g['llama_gateway'] / g['llama_direct']:.2f} |",
        "",
        f"llama.cpp via the gateway vs transformers directly: {g['llama_gateway'] / g['hf_direct']:.1f}×. "
        "The default backend is `auto` (llama.cpp); docs/bench/local_llm.md compares the backends with "
        "llama-cpp-python itself.",
    ]
    out = REPO / "docs" / "bench" / "platform.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(out.read_text())


if __name__ == "__main__":
    main()
