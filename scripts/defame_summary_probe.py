"""The DEFAME summariser probe (docs/results/defame.md): does a summary prompt keep a claim's own evidence and
drop other claims' evidence?

For AVeriTeC dev claims 0..n-1: the claim's first gold answer is the search result ("own"), and the first gold
answer of claim (7 i + 101) mod 400 is the distractor ("other"); the search query is the claim's first gold
question, the record is what the summariser sees after one planning round. Each summary is read with both
relevance rules: the paper's (``NONE`` = irrelevant) and the lenient one (also an opening "the source does not
mention …" = irrelevant). Writes one JSON line per summary and prints the counts.

    .venv/bin/python scripts/defame_summary_probe.py --claims 24 --out /tmp/probe.jsonl
"""

from __future__ import annotations

import argparse
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agents.defame.calls import call_llm, fill, record_text
from agents.defame.config import DefameConfig, DefameContext
from agents.defame.corpus import averitec_documents
from agents.defame.datasets import load_averitec
from agents.defame.nodes.summarize import is_relevant
from agents.defame.prompts import SUMMARIZE_SOURCE, SUMMARIZE_SOURCE_LENIENT

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=24)
    ap.add_argument("--prompt", choices=["paper", "lenient"], default="lenient")
    ap.add_argument("--model", default="local/qwen2.5-coder-1.5b-instruct")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--dev", type=Path, default=REPO.parent / "shared" / "data" / "averitec" / "dev.json")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()

    rows = json.loads(a.dev.read_text(encoding="utf-8"))
    items = load_averitec(a.dev, limit=a.claims)
    ctx = DefameContext(config=DefameConfig(model=a.model, summary_prompt=a.prompt))
    template = SUMMARIZE_SOURCE_LENIENT if a.prompt == "lenient" else SUMMARIZE_SOURCE

    cases = []
    for i, item in enumerate(items):
        query = rows[i]["questions"][0]["question"]
        state = {
            "claim": item.claim,
            "record": [{"kind": "actions", "actions": [{"name": "web_search", "argument": query}]}],
        }
        own = averitec_documents(rows, [i])[0]
        other = averitec_documents(rows, [(7 * i + 101) % len(rows)])[0]
        cases += [(i, "own", state, own), (i, "other", state, other)]

    def run(case):
        i, kind, state, src = case
        prompt = fill(
            template,
            ctx,
            record=record_text(state, ctx),
            url=src["url"],
            title=src.get("title") or "",
            date="unknown",
            text=src["text"][: ctx.config.max_source_chars],
        )
        text, _ = call_llm(ctx, "summarize", prompt, round_no=1, max_tokens=ctx.config.budget.summarize)
        text = text.strip()
        return {
            "claim": i,
            "source": kind,
            "summary": text,
            "kept_paper_rule": is_relevant(text),
            "kept_lenient_rule": is_relevant(text, lenient=True),
        }

    with ThreadPoolExecutor(a.workers) as pool, a.out.open("w") as f:
        results = []
        for r in pool.map(run, cases):
            f.write(json.dumps(r) + "\n")
            f.flush()
            results.append(r)
            print(
                f"claim {r['claim']:>3} {r['source']:<5} paper={r['kept_paper_rule']!s:<5} "
                f"lenient={r['kept_lenient_rule']!s:<5} {r['summary'][:90]!r}",
                flush=True,
            )
    for kind in ("own", "other"):
        rs = [r for r in results if r["source"] == kind]
        print(
            f"{kind}: kept {sum(r['kept_paper_rule'] for r in rs)}/{len(rs)} under the NONE rule, "
            f"{sum(r['kept_lenient_rule'] for r in rs)}/{len(rs)} under the lenient rule"
        )


if __name__ == "__main__":
    main()
