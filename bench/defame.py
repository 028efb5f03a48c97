"""Benchmark: claims per minute and LLM calls per claim, DEFAME vs the no-evidence baseline, on the local model.

Both systems run in one process, on the same AVeriTeC dev claims (oracle corpus), with the
reproduction's compact budgets; results go to ``docs/bench/defame.md``.

    OMP_NUM_THREADS=1 python bench/defame.py --claims 2
    python bench/defame.py --from-results docs/results/defame/issue-135m/summary.json

``--from-results`` renders the same table from the measurements the last
``paperworks reproduce defame`` run stored (both systems measured in that one run),
for machines where a second full run does not fit.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--claims", type=int, default=2, help="AVeriTeC dev claims (from id --offset).")
    ap.add_argument("--offset", type=int, default=100, help="First claim id (away from the reproduction's).")
    ap.add_argument("--model", default=None, help="litellm model; default the configured local model.")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "bench" / "defame.md")
    ap.add_argument(
        "--from-results", type=Path, default=None, help="Render from a reproduce run's summary.json instead of running."
    )
    args = ap.parse_args()
    if args.from_results is not None:
        write(
            args.out,
            render_rows(json.loads(args.from_results.read_text(encoding="utf-8"))["averitec"]),
            f"Measured in the run of `paperworks reproduce defame` whose numbers are in "
            f"`{args.from_results}` "
            f"(AVeriTeC part, oracle corpus; DEFAME and the baseline measured side by side in that one run), "
            f"rendered by `bench/defame.py --from-results` on {time.strftime('%Y-%m-%d')}.",
            None,
        )
        return

    from agents.defame.config import DefameConfig
    from agents.defame.corpus import ORACLE_COLLECTION, build_averitec_oracle
    from agents.defame.datasets import load_averitec
    from agents.defame.evaluate import summarise
    from agents.defame.experiment import COMPACT, default_path, run_items
    from core.config import get_settings
    from core.vectorstore import get_vectorstore

    path = default_path("averitec")
    store = get_vectorstore()
    build_averitec_oracle(store, json.loads(path.read_text(encoding="utf-8")))
    items = load_averitec(path, limit=args.claims, offset=args.offset)
    cfg = DefameConfig(model=args.model, benchmark="averitec", corpus=ORACLE_COLLECTION, **COMPACT)
    t0 = time.perf_counter()
    outcomes = run_items(items, cfg, store=store, baseline=True, checkpointer=None)
    wall = time.perf_counter() - t0
    s = summarise(outcomes, cfg)
    model = args.model or get_settings().llm_model
    write(
        args.out,
        render_rows(s),
        f"Measured in one run of `bench/defame.py --claims {args.claims} --offset {args.offset}` on "
        f"{time.strftime('%Y-%m-%d')}: model `{model}`, AVeriTeC dev claims {args.offset}.."
        f"{args.offset + args.claims - 1}, oracle corpus, the reproduction's compact token budgets, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {platform.machine()} with 2 cores shared "
        f"with other jobs (timings are noisy). Total wall time {wall / 60:.1f} min.",
        outcomes,
    )


def render_rows(s: dict) -> list[str]:
    rows = []
    for system, name in (("defame", "DEFAME"), ("baseline", "no-evidence baseline")):
        r = s.get(system)
        if not r:
            continue
        n = r["metrics"]["n"]
        rows.append(
            f"| {name} | {n} | {r['claims_per_minute']:.3f} | {r['calls_per_claim']:.1f} | "
            f"{r['prompt_tokens'] / n:.0f} | {r['completion_tokens'] / n:.0f} | {r['seconds'] / n:.1f} |"
        )
    rows.append("")
    rows.append(f"Mean DEFAME rounds per claim: {s.get('defame', {}).get('mean_rounds', 0):.2f}.")
    return rows


def write(out: Path, rows: list[str], provenance: str, outcomes) -> None:
    lines = [
        "# DEFAME benchmark: throughput and LLM calls, DEFAME vs baseline",
        "",
        provenance,
        "",
        "| system | claims | claims / min | LLM calls / claim | prompt tokens / claim | "
        "completion tokens / claim | seconds / claim |",
        "|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]
    if outcomes:
        by_stage: dict[str, int] = {}
        for o in outcomes:
            for c in o.defame_calls:
                by_stage[c["stage"]] = by_stage.get(c["stage"], 0) + 1
        lines.append(
            "DEFAME calls by stage (all claims): " + ", ".join(f"{k} {v}" for k, v in sorted(by_stage.items())) + "."
        )
        lines.append("")
    lines.append(
        "The baseline makes one judge call per claim (plus up to two retries when its label does not "
        "parse); DEFAME adds planning, one summary per retrieved source (up to 5 per search on AVeriTeC), "
        "merges, an elaboration per round and a justification. Seconds are the stages' wall time on two "
        "cores shared with other jobs, so they are noisy."
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
